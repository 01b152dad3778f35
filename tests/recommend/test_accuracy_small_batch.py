"""TensorRT BERT at small batches on a power-capped board (T4, 70 W).

Data: NVIDIA TensorRT demo/BERT README at 007c3470 (TensorRT 8.4.3), the same tables as
tests/data/runtime_inference.yaml (which reads their batch-128 rows), average latency per
batch, sequence 128, at batches 2, 4 and 16 — configurations the held-out set
(tests/data/heldout_bert_tensorrt.yaml: batches 1, 8, 32 under TensorRT 7.1) does not hold.
The T4's power limit bounds a step's energy (its FLOPs at the capped rate plus its bytes), not
its small kernels: before that, these rows were predicted 1.2-2x too slow (ratio 0.49-0.85).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# (model, batch) -> (INT8 ms, FP16 ms), T4 (16GB), sequence 128
T4_SEQ128 = {
    ("bert-base", 2): (1.82, 2.71),
    ("bert-base", 4): (2.63, 4.53),
    ("bert-base", 16): (9.37, 17.90),
    ("bert-large", 2): (4.98, 8.22),
    ("bert-large", 4): (8.57, 15.47),
    ("bert-large", 16): (30.11, 57.73),
}


@pytest.fixture(scope="module")
def ratios() -> list[float]:
    from app.catalog.loader import read_gpu_specs
    from app.domain import compat, perf
    from app.domain.workload import WorkloadSpec
    from app.recommend.presets import load_presets
    from app.shipped.rules import load_efficiency, load_rules

    data = ROOT / "data"
    t4 = {g.slug: g for g in read_gpu_specs(data)}["t4"]
    presets, rules, table = load_presets(data), load_rules(data), load_efficiency(data)
    backend = compat.framework_support(t4, "pytorch", rules).backend
    out = []
    for (model, batch), published in T4_SEQ128.items():
        for precision, ms in zip(("int8", "fp16"), published, strict=True):
            work = WorkloadSpec(
                task="inference", model=presets[model].model, precision=precision,
                batch_size=batch, seq_len=128, runtime="tensorrt", efficiency=table,
            )  # fmt: skip
            est = perf.estimate(t4, work, flash_attention=True, backend=backend)
            out.append(ms / (batch / est.throughput * 1e3))  # measured ÷ predicted latency
    return out


def test_small_batches_on_a_power_capped_board_are_sized(ratios: list[float]) -> None:
    errors = [max(r, 1 / r) for r in ratios]
    assert statistics.median(errors) <= 1.25, errors
    assert min(ratios) >= 0.75, ratios  # none 1.3x too slow, as the per-kernel throttle had

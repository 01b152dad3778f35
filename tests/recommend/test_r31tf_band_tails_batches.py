"""benchmarks/band_tails.py --by-batch (issue #23, TensorFlow CNN inference band): a group's
median apart for the batches the host binds and the ones the GPU binds, and one precision's
ratio over another's on the same GPU, runtime, model and batch — what tells a datapath a stack
runs slowly (the DLE 20.06 container's TF32 on the A100) from the card or the host."""

from __future__ import annotations

import statistics
from pathlib import Path
from types import ModuleType

import pytest

from tests.support import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bt() -> ModuleType:
    return load_benchmark("band_tails.py", "bench_band_tails_r31tf")


def _row(
    bt: ModuleType, gpu: str, precision: str, batch: int, ratio: float, runtime: str = "tf"
) -> object:
    return bt.TailRow(
        "f", gpu, "resnext101-32x4d", runtime, precision, batch, "m", 0, "s", 1.0, ratio, ""
    )


def test_host_and_gpu_batches_have_their_own_medians(bt) -> None:
    rows = [
        _row(bt, "a100", "tf32", 1, 1.2),
        _row(bt, "a100", "tf32", 8, 1.0),
        _row(bt, "a100", "tf32", 16, 0.7),
        _row(bt, "a100", "tf32", 256, 0.6),
        _row(bt, "t4", "fp16", 128, 0.5),  # no host-bound row in its group
    ]
    got = bt.batch_band_medians(rows)
    assert got[("tf", "a100", "tf32")] == pytest.approx((1.1, 0.65))
    assert got[("tf", "t4", "fp16")] == (None, 0.5)


def test_precision_pairs_divide_ratios_on_the_same_job_only(bt) -> None:
    rows = [
        _row(bt, "a100", "fp16", 64, 1.0),
        _row(bt, "a100", "tf32", 64, 0.5),
        _row(bt, "a100", "fp16", 128, 1.2),  # no TF32 row at batch 128: unpaired
        _row(bt, "a100", "fp16", 4, 1.4),  # host-bound: left out under min_batch
        _row(bt, "a100", "tf32", 4, 1.0),
        _row(bt, "a100", "tf32", 64, 0.8, runtime="xla"),  # another runtime: no fp16 partner
    ]
    got = bt.precision_pair_ratios(rows, "fp16", "tf32", min_batch=8)
    assert got == {("tf", "a100"): [pytest.approx(2.0)]}
    assert bt.precision_pair_ratios(rows, "fp16", "tf32")[("tf", "a100")] == pytest.approx(
        [2.0, 1.4]
    )


def test_the_dle_table_isolates_the_a100_tf32_datapath(bt) -> None:
    # On the tuning file itself: the 20.06 container's A100 runs TF32 slower against its own
    # AMP rows than the engine's datapaths say (fp16 ratio over TF32 ratio well above 1), while
    # on the V100 its FP32 and AMP rows keep the engine's ratio; this is the split the
    # methodology's 6.7m paragraph reports, not a constant.
    rows = bt.tail_rows(ROOT / "tests" / "data" / "dle_cnn_inference.yaml")
    a100 = bt.precision_pair_ratios(rows, "fp16", "tf32", min_batch=bt.HOST_BATCH)
    v100 = bt.precision_pair_ratios(rows, "fp16", "fp32", min_batch=bt.HOST_BATCH)
    assert statistics.median(a100[("tensorflow", "a100-sxm4-40gb")]) > 1.2
    assert 0.85 < statistics.median(v100[("tensorflow", "v100-sxm2-16gb")]) < 1.15

"""Weight-only int8/int4 on a runtime with no int8/int4 kernels of its own (eager PyTorch,
torch.compile) for a model that is not an LLM: the GEMMs run in 16 bits on dequantised
weights, so the job is priced as the 16-bit job plus the dequantisation — never faster
(a ViT-B/16 at batch 256 on an RTX A4000 had been priced 17 % faster than fp16, "int4 (fp16
math)", because the int8/int4 rows missed the 16-bit rows' power cap)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import BERT_LARGE, H100, RTX4090, llm_inference
from tests.domain.test_perf2fix_ddp_gradients import VIT_B16

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def _infer(precision: str, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="inference",
        model=VIT_B16,
        precision=precision,
        batch_size=256,
        efficiency=load_efficiency(DATA),
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("slug", ["rtx-a4000", "l4", "h100-sxm", "rtx-4090"])
@pytest.mark.parametrize("batch", [1, 256])
def test_weight_only_vit_is_never_faster_than_fp16(slug: str, batch: int) -> None:
    gpu = GPUS[slug]
    fp16 = perf.estimate(gpu, _infer("fp16", batch_size=batch), num_gpus=2)
    for p in ("int8", "int4"):
        q = perf.estimate(gpu, _infer(p, batch_size=batch), num_gpus=2)
        assert q.compute_precision == "fp16"
        assert q.throughput <= fp16.throughput, (slug, batch, p)


def test_the_a4000_power_cap_holds_for_weight_only_math() -> None:
    # the reported case: 2 × RTX A4000, batch 256 (fp16 1,994 images/s; int8/int4 were 2,338)
    gpu = GPUS["rtx-a4000"]
    fp16 = perf.single_gpu(gpu, _infer("fp16"))
    int4 = perf.single_gpu(gpu, _infer("int4"))
    assert int4.t_comp == pytest.approx(fp16.t_comp, rel=0.01)
    assert int4.step_s >= fp16.step_s


def test_which_jobs_are_weight_only() -> None:
    assert perf.dequantised(_infer("int8")) and perf.dequantised(_infer("int4"))
    assert perf.dequantised(_infer("int8", model=BERT_LARGE, seq_len=128))
    assert perf.dequantised(_infer("int8", runtime="torch-compile"))
    assert not perf.dequantised(_infer("fp16"))
    # TensorRT runs int8 on its own kernels (data/efficiency.yaml native)
    assert not perf.dequantised(_infer("int8", runtime="tensorrt"))
    # an LLM's weight-only formats are llm_step's, training never quantises here
    assert not perf.dequantised(llm_inference(precision="int4", efficiency=load_efficiency(DATA)))
    assert not perf.dequantised(replace(_infer("int8"), task="training"))


def test_a_fusing_runtime_folds_the_dequantisation_into_the_16_bit_time() -> None:
    for gpu in (H100, RTX4090):
        fp16 = perf.single_gpu(gpu, _infer("fp16", runtime="torch-compile"))
        int8 = perf.single_gpu(gpu, _infer("int8", runtime="torch-compile"))
        assert int8.step_s == pytest.approx(fp16.step_s)

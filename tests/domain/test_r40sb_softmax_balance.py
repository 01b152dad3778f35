"""One softmax balance (session 40, sb): the attention softmax's vector cost beside its matmuls
(kernels.softmax_fill) reads one rule, llm_step.softmax_balance, on the operator path
(perf._build_on_gpu) and in the LLM step's fused prompt attention (llm_step.fused_attention):
the attention matmuls' rate (the 16-bit peak × any FP16-accumulate gain × the runtime's tensor
share; TF32's for a TF32 job) ÷ the FP32 peak."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step, perf
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)
# datacenter (one accumulate rate), GeForce (FP16 accumulate twice FP32's), Hopper (TensorRT's
# diffusion tactics at half the dense rate), Turing and Volta
SLUGS = ("a100-sxm4-80gb", "h100-sxm", "rtx-4090", "rtx-3090", "l40s", "t4", "v100-sxm2-32gb")


def _on(slug: str, runtime: str, precision: str) -> perf._OnGpu:
    work = WorkloadSpec(
        task="inference",
        model=PRESETS["stable-diffusion-1.5"].model,
        precision=precision,
        batch_size=1,
        runtime=runtime,
        efficiency=TABLE,
    )
    return perf._on_gpu(GPUS[slug], work, "pytorch", None, "cuda")


def _llm_balance(slug: str, on: perf._OnGpu, precision: str) -> float | None:
    """The LLM step's fused attention under the same runtime profile, as card_terms builds it."""
    gpu = GPUS[slug]
    act16 = "bf16" if precision in ("bf16", "fp8", "fp4") else "fp16"
    half, half_mode = llm_step.datapath(gpu, act16, on.prof)
    fused = llm_step.fused_attention(gpu, on.prof, 0.7, half, half_mode)
    assert fused is not None
    return fused.balance


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize(
    ("runtime", "precision"), [("tensorrt", "fp16"), ("pytorch", "fp16"), ("pytorch", "bf16")]
)
def test_the_llm_steps_balance_is_the_operator_paths(
    slug: str, runtime: str, precision: str
) -> None:
    on = _on(slug, runtime, precision)
    assert on.balance is not None
    assert _llm_balance(slug, on, precision) == on.balance


def test_the_balance_carries_the_gain_and_the_share() -> None:
    def ratio(slug: str) -> float:
        trt, eager = _on(slug, "tensorrt", "fp16").balance, _on(slug, "pytorch", "fp16").balance
        assert trt is not None and eager is not None
        return trt / eager

    # TensorRT's FP16-accumulate attention on a GeForce part: the matmuls twice as fast
    assert ratio("rtx-4090") == 2.0
    # its Ampere-built tactics on Hopper: half the dense rate
    assert _on("h100-sxm", "tensorrt", "fp16").prof.gemm_peak_share == 0.5
    assert ratio("h100-sxm") == 0.5
    assert ratio("a100-sxm4-80gb") == 1.0
    h100 = GPUS["h100-sxm"]
    assert llm_step.softmax_balance(h100, "fp16", 0.5) == pytest.approx(
        (h100.peak_tflops("fp16") or 0) * 0.5 / (h100.fp32_tflops or 1)
    )


def test_the_rule_by_mode() -> None:
    a100 = GPUS["a100-sxm4-80gb"]
    fp16 = llm_step.softmax_balance(a100, "fp16")
    # 8-bit and weight-only jobs keep their attention in 16 bits
    assert llm_step.softmax_balance(a100, "int8") == fp16
    assert llm_step.softmax_balance(a100, "int4") == fp16
    assert llm_step.softmax_balance(a100, "tf32") == pytest.approx(
        (a100.peak_tflops("tf32") or 0) / (a100.fp32_tflops or 1)
    )
    assert llm_step.softmax_balance(a100, "fp32") is None
    # no 16-bit math faster than FP32 (Pascal GeForce): the matmuls share the CUDA cores
    assert llm_step.softmax_balance(GPUS["gtx-1080-ti"], "fp16") is None

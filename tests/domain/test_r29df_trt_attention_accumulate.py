"""TensorRT's fused attention accumulates in FP16 like its GEMMs (issue #21, 2026-12-06).

NVIDIA's fused MHA kernels (fmha_v2: TensorRT's diffusion attention plugin shipped only its
FP16-accumulate cubins; the family names FP32-accumulate kernels fp16_fp32 and builds them only
on request) run an FP16 engine's attention at the FP16-accumulate tensor rate, twice the
catalog's FP32-accumulate fp16 figure on GeForce parts and the same rate elsewhere
(data/efficiency.yaml, source fmha-v2-fp16-accumulate)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import kernels, perf
from app.domain.efficiency import FP16_ACCUMULATE_GEMM_SHARE, HALF_RATE_GEMM_SHARE
from app.domain.kernels import ATTN_FLASH, ATTN_FLASH_BWD, CLASS_INDEX, CLASSES
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)
ATTENTION = (CLASS_INDEX[ATTN_FLASH], CLASS_INDEX[ATTN_FLASH_BWD])


def test_class_rates_attention_accumulate_scales_the_attention_classes_alone() -> None:
    base = kernels.class_rates(100e12, 20e12)
    both = kernels.class_rates(100e12, 20e12, accumulate=2.0, attention_accumulate=2.0)
    gemms_only = kernels.class_rates(100e12, 20e12, accumulate=2.0)
    for i in range(len(CLASSES)):
        if i in ATTENTION:
            assert both[i] == pytest.approx(2 * base[i])
            assert gemms_only[i] == pytest.approx(base[i])
        else:
            assert both[i] == pytest.approx(gemms_only[i])
    # an architecture cap still bounds the doubled forward
    capped = kernels.class_rates(100e12, 20e12, flash_cap=50e12, attention_accumulate=2.0)
    assert capped[CLASS_INDEX[ATTN_FLASH]] == pytest.approx(50e12)


@pytest.mark.parametrize(
    ("runtime", "precision", "expected"),
    [("tensorrt", "fp16", True), ("tensorrt", "bf16", False), ("pytorch", "fp16", False)],
)
def test_only_tensorrt_fp16_engines_take_fp16_accumulate_attention(
    runtime: str, precision: str, expected: bool
) -> None:
    prof = TABLE.profile(GPUS["rtx-4090"], "cuda", runtime, precision, "infer-diffusion")
    assert prof.attention_fp16_accumulate is expected


def _on(slug: str, runtime: str) -> perf._OnGpu:
    work = WorkloadSpec(
        task="inference",
        model=PRESETS["stable-diffusion-1.5"].model,
        precision="fp16",
        batch_size=1,
        runtime=runtime,
        efficiency=TABLE,
    )
    return perf._on_gpu(GPUS[slug], work, "pytorch", None, "cuda")


def test_geforce_trt_attention_doubles_and_its_softmax_is_priced_against_that_rate() -> None:
    # twice the peak, each path at its own share of it (since 2026-12-07, session 42, sdc: the
    # FP32-accumulate half rate held whole, the FP16-accumulate full rate at 0.90)
    doubled = 2 * FP16_ACCUMULATE_GEMM_SHARE / HALF_RATE_GEMM_SHARE
    trt, eager = _on("rtx-4090", "tensorrt"), _on("rtx-4090", "pytorch")
    assert trt.rates is not None and eager.rates is not None
    for i in ATTENTION:
        assert trt.rates[i] == pytest.approx(doubled * eager.rates[i])
    # the softmax's vector work is dearer per score against the doubled matmul peak
    assert trt.balance is not None and eager.balance is not None
    assert trt.balance == pytest.approx(2 * eager.balance)


def test_datacenter_trt_attention_keeps_its_rate() -> None:
    trt, eager = _on("a100-sxm4-40gb", "tensorrt"), _on("a100-sxm4-40gb", "pytorch")
    assert trt.rates is not None and eager.rates is not None
    for i in ATTENTION:
        assert trt.rates[i] == pytest.approx(eager.rates[i])
    assert trt.balance == pytest.approx(eager.balance)

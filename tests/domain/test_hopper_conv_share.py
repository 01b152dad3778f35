"""Ampere-built implicit-GEMM convolutions on Hopper (issue #21, compiled diffusion): a Hopper
SM doubles the A100 SM's dense MMA rate per clock only through wgmma, so the 2023 stacks'
convolutions (cuDNN 8, TensorRT 8.6 / 9: mma.sync kernels) issue at half the dense peak. The
diffusion rows of data/efficiency.yaml say so (conv_peak_share 0.5); the GEMMs (cuBLAS 12,
wgmma; TensorRT's own, which since session 37 take the same half: gemm_peak_share), the
attention (its own rows), other architectures, other regimes and 8-bit jobs keep their
rates."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.kernels import CLASS_INDEX, class_rates
from app.domain.operators import ATTN_FLASH, CONV, CONV_3X3, GEMM
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)
G, C, C3, A = (CLASS_INDEX[k] for k in (GEMM, CONV, CONV_3X3, ATTN_FLASH))


def test_class_rates_slow_the_tensor_convolutions_alone() -> None:
    full = class_rates(100.0, 10.0)
    half = class_rates(100.0, 10.0, conv_share=0.5)
    assert half[C] == half[C3] == 50.0 == full[C] / 2
    assert half[G] == full[G] and half[A] == full[A]
    # the Winograd kernel on the CUDA cores is not a tensor-core convolution: it keeps its rate
    assert class_rates(100.0, 30.0, winograd=2.25, conv_share=0.5)[C3] == pytest.approx(67.5)
    assert class_rates(100.0, 30.0, winograd=2.25, conv_share=0.5)[C] == 50.0


def _rates(slug: str, preset: str, runtime: str, precision: str = "fp16") -> tuple[float, ...]:
    work = WorkloadSpec(
        task="inference",
        model=PRESETS[preset].model,
        precision=precision,
        batch_size=1,
        runtime=runtime,
        efficiency=TABLE,
    )
    on = perf._on_gpu(GPUS[slug], work, "pytorch", None, "cuda")
    assert on.rates is not None
    return on.rates


@pytest.mark.parametrize("runtime", ["pytorch", "torch-compile", "onnxruntime", "tensorrt"])
@pytest.mark.parametrize("slug", ["h100-sxm", "h100-pcie"])
def test_hopper_diffusion_convolutions_run_at_half_the_gemm_rate(slug: str, runtime: str) -> None:
    r = _rates(slug, "sdxl", runtime)
    full = _rates(slug, "sdxl", "torch-compile")[G]  # cuBLAS 12's wgmma GEMMs: the full rate
    assert r[C] == pytest.approx(0.5 * full) and r[C3] == pytest.approx(0.5 * full)
    # TensorRT's own GEMMs run at that rate too (gemm_peak_share since session 37:
    # tests/domain/test_r37sd_trt_hopper_gemm.py); the others' keep the full rate
    assert r[G] == pytest.approx(0.5 * full if runtime == "tensorrt" else full)


@pytest.mark.parametrize(
    ("slug", "preset", "runtime", "precision"),
    [
        ("a100-sxm4-80gb", "sdxl", "tensorrt", "fp16"),  # Ampere: mma.sync is its full rate
        ("rtx-4090", "stable-diffusion-1.5", "torch-compile", "fp16"),  # Ada
        ("h100-sxm", "resnet-50", "tensorrt", "fp16"),  # a CNN: not the diffusion regime's row
    ],
)
def test_elsewhere_convolutions_keep_the_gemm_rate(
    slug: str, preset: str, runtime: str, precision: str
) -> None:
    r = _rates(slug, preset, runtime, precision)
    assert r[C] == pytest.approx(r[G])


def test_the_share_slows_a_hopper_sdxl_step_and_not_an_ampere_one() -> None:
    """The step prices it: an H100 SDXL TensorRT step takes longer with the row than its GEMM
    rate would give its convolutions, an A100's does not move (no row for Ampere)."""
    work = WorkloadSpec(
        task="inference",
        model=PRESETS["sdxl"].model,
        precision="fp16",
        batch_size=1,
        runtime="tensorrt",
        efficiency=TABLE,
    )
    prof = TABLE.profile(GPUS["h100-sxm"], "cuda", "tensorrt", "fp16", "infer-diffusion")
    assert prof.conv_peak_share == 0.5
    ampere = TABLE.profile(GPUS["a100-sxm4-80gb"], "cuda", "tensorrt", "fp16", "infer-diffusion")
    assert ampere.conv_peak_share is None
    h100 = perf.single_gpu(GPUS["h100-sxm"], work, backend="cuda")
    a100 = perf.single_gpu(GPUS["a100-sxm4-80gb"], work, backend="cuda")
    # SMs x clock put the H100 SXM ~1.6-1.7x ahead of the A100; its 16-bit peak 3.2x
    # (2.74 before the row; 1.46 since TensorRT's GEMMs and attention take the same share,
    # session 37)
    assert 1.3 < a100.step_s / h100.step_s < 2.5

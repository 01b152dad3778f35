"""TensorRT's 16-bit GEMMs and fused attention on Hopper (session 37, sd): a TensorRT engine runs
no cuBLAS GEMM (from 8.6 its cuBLAS, cuBLASLt and cuDNN tactic sources are off by default), so
its GEMMs come from the same Ampere-built kernel library as its convolutions, which the
diffusion row already prices at half Hopper's dense peak (mma.sync: the A100 SM's rate per
clock). data/efficiency.yaml's gemm_peak_share 0.5 prices the GEMMs and the fused attention so;
the convolutions keep their share of the full rate, and other runtimes, architectures,
regimes and 8-bit jobs keep theirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.efficiency import tensor_share
from app.domain.kernels import CLASS_INDEX
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


def _work(preset: str, runtime: str, precision: str = "fp16", batch: int = 1) -> WorkloadSpec:
    return WorkloadSpec(
        task="inference",
        model=PRESETS[preset].model,
        precision=precision,
        batch_size=batch,
        runtime=runtime,
        efficiency=TABLE,
    )


def _rates(slug: str, runtime: str, preset: str = "stable-diffusion-1.5") -> tuple[float, ...]:
    on = perf._on_gpu(GPUS[slug], _work(preset, runtime), "pytorch", None, "cuda")
    assert on.rates is not None
    return on.rates


def test_the_row_is_hopper_tensorrt_diffusion_alone() -> None:
    def share(slug: str, runtime: str, regime: str = "infer-diffusion") -> float | None:
        return TABLE.profile(GPUS[slug], "cuda", runtime, "fp16", regime).gemm_peak_share

    assert share("h100-sxm", "tensorrt") == 0.5
    assert share("h100-pcie", "tensorrt") == 0.5
    assert share("a100-sxm4-80gb", "tensorrt") is None  # Ampere: mma.sync is its full rate
    assert share("h100-sxm", "torch-compile") is None  # cuBLAS 12's wgmma GEMMs
    assert share("h100-sxm", "tensorrt", "infer") is None  # BERT: no Hopper row to check it


def test_the_share_reads_for_16_bit_jobs_only() -> None:
    prof = TABLE.profile(GPUS["h100-sxm"], "cuda", "tensorrt", "fp16", "infer-diffusion")
    assert tensor_share(prof, "fp16") == 0.5
    assert tensor_share(prof, "bf16") == 0.5
    # 8-bit engines (MLPerf's int8 / fp8 SDXL on TensorRT 9.3 / 10): FP8 has no Ampere form
    assert tensor_share(prof, "int8") == 1.0
    assert tensor_share(prof, "fp8") == 1.0


def test_hopper_tensorrt_gemms_and_attention_run_at_the_a100_sm_rate() -> None:
    trt, compiled = _rates("h100-sxm", "tensorrt"), _rates("h100-sxm", "torch-compile")
    # the GEMMs at half of what cuBLAS 12's wgmma GEMMs reach on the same card
    assert trt[G] == pytest.approx(0.5 * compiled[G])
    # the convolutions stay at half the full rate, not a quarter: one library, one rate
    assert trt[C] == pytest.approx(compiled[C]) == pytest.approx(trt[G])
    assert trt[C3] == pytest.approx(trt[C])
    # the fused MHA keeps its share of the (halved) GEMM rate, as on the A100
    a100 = _rates("a100-sxm4-80gb", "tensorrt")
    assert trt[A] / trt[G] == pytest.approx(a100[A] / a100[G])


def test_ampere_and_other_runtimes_do_not_move() -> None:
    trt, compiled = _rates("a100-sxm4-80gb", "tensorrt"), _rates("a100-sxm4-80gb", "torch-compile")
    assert trt[G] == pytest.approx(compiled[G]) and trt[C] == pytest.approx(trt[G])
    h100 = _rates("h100-sxm", "torch-compile")
    assert h100[C] == pytest.approx(0.5 * h100[G])  # its convolution row alone


@pytest.mark.parametrize("preset", ["stable-diffusion-1.5", "sdxl"])
def test_h100_over_a100_follows_sms_times_clock_not_the_peaks(preset: str) -> None:
    """Every tensor-core class at the A100 SM's rate per clock: the H100 SXM's lead over the
    A100 SXM is near SMs x clock (132 x 1.83 GHz against 108 x 1.41: 1.59), not the dense
    peaks' 3.2 nor the 1.93 the GEMMs at full rate gave. alexeigor's TensorRT 8.6.1 SD 1.5
    table measured 1.63 (tests/data/diffusion_compiled.yaml)."""
    work = _work(preset, "tensorrt")
    h100 = perf.single_gpu(GPUS["h100-sxm"], work, backend="cuda")
    a100 = perf.single_gpu(GPUS["a100-sxm4-40gb"], work, backend="cuda")
    assert 1.3 < a100.step_s / h100.step_s < 1.7


def test_8_bit_hopper_engines_keep_the_full_rate() -> None:
    gpu = GPUS["h100-sxm"]
    fp16 = perf._on_gpu(gpu, _work("sdxl", "tensorrt"), "pytorch", None, "cuda").rates
    int8 = perf._on_gpu(gpu, _work("sdxl", "tensorrt", "int8"), "pytorch", None, "cuda").rates
    assert fp16 is not None and int8 is not None
    # int8 GEMMs at the full int8 rate (twice the 16-bit dense peak), against the halved 16-bit
    # rate: over three times it (1.8 times had both been at the full rate)
    assert int8[G] / fp16[G] > 3.0

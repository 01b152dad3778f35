"""benchmarks/diffusion_sm_clock.py (issue #21, 2026-12-06): the diffusion tuning rows' FLOPs per
SM per rated clock, measured and predicted, beside the card's 16-bit tensor peak per SM-clock.

The unit rests on SMs × clock read off the FP32 peak, and on the catalog's fp16 figure being
the rate PyTorch's half-precision convolutions and GEMMs run at: the FP32-accumulate one on
GeForce (PyTorch sets a FLOAT compute type on every half convolution descriptor, legacy and
cuDNN v8 API alike), half the FP16-accumulate figure NVIDIA also lists."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from tests.support import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mod():
    return load_benchmark("diffusion_sm_clock.py", "diffusion_sm_clock")


@pytest.fixture(scope="module")
def gpus():
    return {g.slug: g for g in read_gpu_specs(ROOT / "data")}


@pytest.mark.parametrize(
    ("slug", "sms", "ghz"),
    [
        ("a100-sxm4-40gb", 108, 1.41),  # 64 FP32 lanes per SM
        ("rtx-4090", 128, 2.52),  # 128 lanes
        ("v100-sxm2-16gb", 80, 1.53),  # Volta: the benchmark's own 64-lane entry
    ],
)
def test_sm_clocks_come_from_the_fp32_peak(mod, gpus, slug: str, sms: int, ghz: float) -> None:
    assert mod.sm_clocks(gpus[slug]) == pytest.approx(sms * ghz * 1e9, rel=0.01)


def test_geforce_16_bit_peak_is_the_fp32_accumulate_rate(mod, gpus) -> None:
    """Per SM and clock: 512 dense 16-bit FLOPs on Ampere/Ada GeForce (FP32 accumulate), 1024
    on GA10x workstation and Volta/Turing parts, 2048 on GA100."""
    per_sm_clock = {
        s: gpus[s].peak_tflops("fp16") * 1e12 / mod.sm_clocks(gpus[s])
        for s in ("rtx-4090", "rtx-3090", "rtx-a6000", "v100-sxm2-16gb", "a100-sxm4-40gb")
    }
    assert per_sm_clock == pytest.approx(
        {"rtx-4090": 512, "rtx-3090": 512, "rtx-a6000": 1024, "v100-sxm2-16gb": 1024,
         "a100-sxm4-40gb": 2048}, rel=0.01,
    )  # fmt: skip


def test_a_card_without_a_lane_count_has_no_sm_clock(mod, gpus) -> None:
    gpu = gpus["a100-sxm4-40gb"]
    assert mod.sm_clocks(replace(gpu, compute_capability=None)) is None


def test_held_out_files_are_refused(mod) -> None:
    with pytest.raises(AssertionError):
        mod.rows_of(ROOT / "tests" / "data" / "heldout_diffusion_eager.yaml")

"""An AMD or Intel row in a convolution regime calibrated on NVIDIA/cuDNN alone says which
library its convolutions run and which way its estimate leans: the engine prices them at the
GEMM rate and charges none of the NCHW/NHWC layout transforms it charges cuDNN's tensor-core
convolutions (perf._nchw_transforms_run), though MIOpen's NHWC matrix-core solvers transpose
an NCHW model's tensors too. The band's factors stay the unmeasured vendor's."""

from __future__ import annotations

from dataclasses import replace

from app.catalog.loader import read_gpu_specs
from app.domain import bands, perf
from app.domain.efficiency import EfficiencyTable
from app.recommend.presets import DATA_DIR

TABLE = EfficiencyTable(
    bands={("train", "all"): (0.70, 1.39)},
    covered={"train": (frozenset({"pytorch"}), frozenset({"Ampere", "Hopper", "Volta"}))},
)
NVIDIA_ROW = bands.BandInputs(
    regime="train", vendor="nvidia", architecture="Hopper", runtime="pytorch",
    efficiency_source="prior",
)  # fmt: skip


def _basis(vendor: str, architecture: str) -> tuple[float, float, str]:
    return bands.band(replace(NVIDIA_ROW, vendor=vendor, architecture=architecture), TABLE)


def test_an_amd_cnn_row_names_miopen_and_the_transposes_it_is_not_charged() -> None:
    _, _, basis = _basis("amd", "CDNA 3")
    assert "MIOpen" in basis and "transpose" in basis and "overstates" in basis


def test_an_intel_cnn_row_names_its_own_library_not_amds() -> None:
    _, _, basis = _basis("intel", "Xe-HPG (Alchemist)")
    assert "oneDNN" in basis and "overstates" in basis
    assert "MIOpen" not in basis  # until 2026-12-06 an Intel row cited AMD's library


def test_the_reasons_change_no_factor_and_apple_keeps_the_generic_reason() -> None:
    bands_by_vendor = {
        v: _basis(v, a)[:2] for v, a in (("amd", "CDNA 3"), ("intel", "Xe-HPG"), ("apple", "M3"))
    }
    assert len(set(bands_by_vendor.values())) == 1  # one unmeasured-vendor band for all
    for v in ("amd", "intel"):
        w = bands.vendor_widening(v)
        assert (w.low, w.high) == (bands.UNMEASURED_VENDOR.low, bands.UNMEASURED_VENDOR.high)
    assert bands.vendor_widening("apple") is bands.UNMEASURED_VENDOR


def test_the_transforms_the_reason_names_are_charged_on_cuda_alone() -> None:
    """The engine fact the reason states: the layout transforms run around an NVIDIA tensor-
    core convolution under CUDA, and around no AMD or Intel GPU's (so not in their estimate)."""
    gpus = {g.slug: g for g in read_gpu_specs(DATA_DIR)}
    assert perf._nchw_transforms_run(gpus["h100-sxm"], "cuda", "fp16")
    assert not perf._nchw_transforms_run(gpus["mi300x"], "rocm", "fp16")
    assert not perf._nchw_transforms_run(gpus["arc-a750"], "xpu", "fp16")

"""An RDNA 4 Radeon's convolution row names what users timed there (issue 23, 2026-12-06):
MIOpen's convolutions on gfx1200/gfx1201 an order of magnitude slower than RDNA 3's
(ROCm/rocm-libraries#2567) and a CIFAR-10 CNN trained ~10x slower than on NVIDIA cards
(ROCm/TheRock#2510). The band's factors stay the unmeasured vendor's; other AMD architectures
keep the library's general reason."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import bands
from app.domain.efficiency import EfficiencyTable
from app.recommend.presets import DATA_DIR

TABLE = EfficiencyTable(
    bands={("train", "all"): (0.70, 1.39)},
    covered={"train": (frozenset({"pytorch"}), frozenset({"Ampere", "Hopper", "Volta"}))},
)
ROW = bands.BandInputs(
    regime="train", vendor="amd", architecture="RDNA 4", runtime="pytorch",
    efficiency_source="prior",
)  # fmt: skip


def test_an_rdna4_cnn_row_cites_the_rdna4_reports() -> None:
    _, _, basis = bands.band(ROW, TABLE)
    assert "rocm-libraries#2567" in basis and "TheRock#2510" in basis
    assert "likely overstates" in basis  # the library's lean still said


@pytest.mark.parametrize("architecture", ["RDNA 3", "CDNA 3"])
def test_other_amd_architectures_keep_the_general_reason(architecture: str) -> None:
    _, _, basis = bands.band(replace(ROW, architecture=architecture), TABLE)
    assert "MIOpen" in basis and "#2567" not in basis


def test_the_rdna4_reason_changes_no_factor() -> None:
    rdna4 = bands.band(ROW, TABLE)[:2]
    rdna3 = bands.band(replace(ROW, architecture="RDNA 3"), TABLE)[:2]
    assert rdna4 == rdna3
    w = bands.vendor_widening("amd", "RDNA 4")
    assert (w.low, w.high) == (bands.UNMEASURED_VENDOR.low, bands.UNMEASURED_VENDOR.high)


def test_the_catalog_names_the_rdna4_cards_so() -> None:
    """The reason is keyed on the catalog's architecture name: the RX 9070 cards carry it."""
    archs = {g.slug: g.architecture for g in read_gpu_specs(DATA_DIR)}
    assert {archs[s] for s in ("rx-9070", "rx-9070-xt", "rx-9060-xt-16gb")} == {"RDNA 4"}

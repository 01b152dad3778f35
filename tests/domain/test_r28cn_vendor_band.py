"""A convolution regime calibrated on NVIDIA/cuDNN alone widens another vendor's rows (its
library's convolutions are not cuDNN's), rather than lending them cuDNN's band."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.catalog.loader import read_catalog
from app.domain import bands
from app.domain.efficiency import EfficiencyTable
from app.recommend.presets import DATA_DIR

TABLE = EfficiencyTable(
    bands={("train", "all"): (0.70, 1.39), ("decode", "all"): (0.84, 1.14)},
    covered={
        "train": (frozenset({"pytorch"}), frozenset({"Ampere", "Hopper", "Volta"})),
        "decode": (frozenset({"pytorch"}), frozenset({"Hopper", "CDNA 2"})),
    },
)
NVIDIA_ROW = bands.BandInputs(
    regime="train", vendor="nvidia", architecture="Hopper", runtime="pytorch",
    efficiency_source="prior",
)  # fmt: skip


def test_an_amd_row_in_an_nvidia_only_cnn_regime_is_widened_and_says_why() -> None:
    nlo, nhi, nbasis = bands.band(NVIDIA_ROW, TABLE)
    lo, hi, basis = bands.band(replace(NVIDIA_ROW, vendor="amd", architecture="CDNA 3"), TABLE)
    assert (nlo, nhi) == (0.70, 1.39) and "vendor" not in nbasis
    assert lo < nlo and hi > nhi
    # the widening adds in quadrature in log space about the calibrated band
    s_lo = math.sqrt(math.log(0.70) ** 2 + math.log(bands.UNMEASURED_VENDOR.low) ** 2)
    assert lo == pytest.approx(math.exp(-s_lo), rel=1e-6)
    assert "no published results from this vendor" in basis and "MIOpen" in basis
    # the vendor term replaces the architecture one (it is the larger extrapolation)
    assert "on this architecture" not in basis


def test_intel_and_apple_rows_are_widened_alike_but_not_an_unseen_nvidia_architecture() -> None:
    for vendor, arch in (("intel", "Xe-HPG (Alchemist)"), ("apple", "M3")):
        _, _, basis = bands.band(replace(NVIDIA_ROW, vendor=vendor, architecture=arch), TABLE)
        assert "no published results from this vendor" in basis
    _, _, basis = bands.band(replace(NVIDIA_ROW, architecture="Blackwell"), TABLE)
    assert "no published results from this vendor" not in basis


def test_a_regime_that_holds_the_vendor_or_no_convolutions_is_not_widened_by_it() -> None:
    decode = replace(NVIDIA_ROW, regime="decode", vendor="amd", architecture="CDNA 3")
    assert "from this vendor" not in bands.band(decode, TABLE)[2]  # CDNA 2 calibrated there
    assert "decode" not in bands.CONV_REGIMES and "train" in bands.CONV_REGIMES


def test_every_catalog_architecture_names_its_own_vendor() -> None:
    gpus = read_catalog(DATA_DIR)
    assert len(gpus) > 50
    for g in gpus:
        assert bands.architecture_vendor(g.architecture) == g.vendor, g.name
    assert bands.architecture_vendor("Maxwell") == "nvidia"


def test_the_widening_brackets_one_and_states_a_reason() -> None:
    w = bands.UNMEASURED_VENDOR
    assert 0 < w.low < 1 < w.high and len(w.reason) > 20

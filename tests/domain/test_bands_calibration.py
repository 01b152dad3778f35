"""The band calibration procedure (app/domain/conformal.py) and how a row's band uses what it
calibrated: a runtime's own band, and the band an unseen runtime or architecture needed."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.domain import bands, conformal
from app.domain.efficiency import EfficiencyTable

# Two runtimes the engine predicts well and one it is 2× off on (one row): what a new runtime
# can look like. Hand-worked below.
ROWS = [("A", 1.0)] * 4 + [("B", 1.0)] * 4 + [("C", 0.5)]


def test_order_statistics_carry_the_finite_sample_correction() -> None:
    ratios = [1 + i / 100 for i in range(19)]  # n = 19: j = ⌊20·0.1⌋ = 2, k = ⌈20·0.9⌉ = 18
    assert conformal.conformal_band(ratios) == (1.0, pytest.approx(1.17))
    shifted = [r / 1.09 for r in ratios]
    assert conformal.conformal_band(shifted) == (
        pytest.approx(1.01 / 1.09),
        pytest.approx(1.17 / 1.09),
    )
    # one step out takes the next order statistic on each side; a margin goes past them
    assert conformal.conformal_band(shifted, step=1)[0] == pytest.approx(1.0 / 1.09)
    assert conformal.conformal_band([0.9, 1.1], margin=1.2) == (
        pytest.approx(0.75),
        pytest.approx(1.32),
    )


def test_leaving_a_unit_out_counts_the_held_out_rows() -> None:
    # without C the band is [1, 1] and misses C's 0.5; without A (or B) it is [0.5, 1]
    assert conformal.leave_one_unit_out(ROWS) == pytest.approx(8 / 9)
    # a single unit cannot be held out: nan, never a coverage
    assert math.isnan(conformal.leave_one_unit_out([("A", 1.0), ("A", 0.9)]))


def test_a_regime_band_steps_out_until_held_out_units_are_covered() -> None:
    f = conformal.fit(ROWS)
    assert (f.low, f.high, f.margin, f.units) == (0.5, 1.0, 1.0, 3)
    # every other unit far from the held-out one: margins past the extremes
    far = [("A", 1.0), ("B", 1.0), ("C", 1.0), ("D", 0.5)]
    g = conformal.fit(far, target=1.0)
    assert g.margin == 2.0 and g.low == pytest.approx(0.25) and g.coverage == 1.0


def test_a_unit_scores_its_own_central_80_percent() -> None:
    assert conformal.unit_edges([float(x) for x in range(1, 12)]) == (2.0, 10.0)
    assert conformal.unit_edges([0.37]) == (0.37, 0.37)  # a unit of one row is that row


def test_a_new_unit_gets_the_finite_sample_order_statistics_of_the_units() -> None:
    # 19 units of one row each: j = ⌊20·0.1⌋ = 2, k = ⌈20·0.9⌉ = 18
    rows = [(f"u{i}", 0.90 + i / 100) for i in range(19)]
    f = conformal.group_band(rows)
    assert (f.low, f.high, f.units) == (pytest.approx(0.91), pytest.approx(1.07), 19)
    assert f.coverage == pytest.approx(17 / 19)  # u0 and u18 fall outside


def test_under_nine_units_the_band_is_the_extremes_of_the_units_seen() -> None:
    """A, B predicted well, C (one row) 2× off: the new unit may be like C, whatever the row
    counts — per-row pooling would let A and B's eight rows outvote it."""
    f = conformal.group_band(ROWS)
    assert (f.low, f.high, f.units, f.coverage) == (0.5, 1.0, 3, 1.0)
    assert conformal.group_band([*ROWS, ("D", 1.6)]).high == 1.6


def test_the_widening_reaches_the_envelope_and_never_narrows() -> None:
    assert conformal.widening((0.4, 1.43), (0.8, 1.1)) == (pytest.approx(0.5), pytest.approx(1.3))
    assert conformal.widening((0.9, 1.05), (0.8, 1.1)) == (1.0, 1.0)


TABLE = EfficiencyTable(
    bands={("decode", "all"): (0.84, 1.14), ("decode/llama.cpp", "all"): (0.90, 1.10)},
    covered={"decode": (frozenset({"llama.cpp", "transformers"}), frozenset({"Hopper"}))},
    extrapolation={"runtime": (0.40, 1.43), "architecture": (0.75, 1.22)},
)
ROW = bands.BandInputs(
    regime="decode", vendor="nvidia", architecture="Hopper", runtime="llama.cpp",
    efficiency_source="prior",
)  # fmt: skip


def _band(**kw: object) -> tuple[float, float, str]:
    return bands.band(replace(ROW, **kw), TABLE)  # type: ignore[arg-type]


def test_a_runtime_with_its_own_band_gets_it_else_the_regimes() -> None:
    assert _band()[:2] == (0.90, 1.10)
    assert _band(runtime="transformers")[:2] == (0.84, 1.14)


def test_an_unseen_runtime_gets_the_band_over_the_calibrated_runtimes() -> None:
    lo, hi, basis = _band(runtime="vllm")
    assert (lo, hi) == (pytest.approx(0.40), pytest.approx(1.43))
    assert bands.UNMEASURED_RUNTIME.reason in basis


def test_an_unseen_architecture_widens_from_the_runtimes_own_band() -> None:
    lo, hi, basis = _band(architecture="Blackwell")
    assert (lo, hi) == (pytest.approx(0.75), pytest.approx(1.22))
    assert bands.UNMEASURED_ARCHITECTURE.reason in basis
    # both: the runtime band replaces the regime's; the architecture's is inside it
    lo2, hi2, basis2 = _band(architecture="Blackwell", runtime="vllm")
    assert (lo2, hi2) == (pytest.approx(0.40), pytest.approx(1.43))
    assert bands.UNMEASURED_RUNTIME.reason in basis2
    # stated allowances then add in quadrature on top of it
    lo3, hi3, _ = _band(runtime="vllm", moe=True, num_gpus=8)
    clo, chi = bands.combine([bands.MOE, bands.MULTI_GPU])
    assert (lo3, hi3) == (pytest.approx(0.40 * clo), pytest.approx(1.43 * chi))


def test_the_unseen_runtime_band_replaces_even_a_wider_regime_band() -> None:
    """The regime's band describes its runtimes (here one with a 0.30 tail); a runtime it has
    no results for gets the band conformal over the runtimes it has, not that tail."""
    wide = EfficiencyTable(
        bands={("decode", "all"): (0.30, 1.09)},
        covered=TABLE.covered,
        extrapolation=TABLE.extrapolation,
    )
    lo, hi, _ = bands.band(replace(ROW, runtime="vllm"), wide)
    assert (lo, hi) == (pytest.approx(0.40), pytest.approx(1.43))
    assert bands.band(replace(ROW, runtime="transformers"), wide)[:2] == (0.30, 1.09)


def test_without_estimates_the_stated_allowances_apply() -> None:
    plain = EfficiencyTable(bands=TABLE.bands, covered=TABLE.covered)
    lo, hi, _ = bands.band(replace(ROW, runtime="vllm"), plain)
    assert (lo, hi) == (
        pytest.approx(0.84 * bands.UNMEASURED_RUNTIME.low),
        pytest.approx(1.14 * bands.UNMEASURED_RUNTIME.high),
    )

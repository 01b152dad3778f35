"""The band calibration procedure (app/domain/conformal.py) and how a row's band uses what it
calibrated: a runtime's own band about its centre, and the quadrature terms the tuning sets'
held-out runtimes, architectures, MoE and 4-bit workloads needed."""

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


def test_independent_log_errors_add_in_quadrature_about_the_centre() -> None:
    base = conformal.Spread.of(0.6, 1.0, 0.8)  # a regime running at 0.8 of the engine
    assert (base.down, base.up) == (
        pytest.approx(math.log(0.8 / 0.6)),
        pytest.approx(math.log(1.25)),
    )
    wide = base.widened([(0.5, 1.2), (0.9, 1.0)])
    assert wide.centre == 0.8  # widening never moves the band off the regime's bias
    assert wide.down == pytest.approx(math.hypot(base.down, math.log(0.5), math.log(0.9)))
    assert wide.up == pytest.approx(math.hypot(base.up, math.log(1.2)))
    lo, hi = wide.band()
    # narrower than multiplying the edges (worst cases stacked), wider than the base
    assert 0.6 * 0.5 * 0.9 < lo < 0.6 and 1.0 < hi < 1.0 * 1.2
    # no term: the band it came from
    assert base.widened([]).band() == (pytest.approx(0.6), pytest.approx(1.0))


def test_a_widened_band_still_brackets_the_estimate() -> None:
    lo, hi = conformal.Spread.of(0.5, 0.7, 0.6).band()
    assert (lo, hi) == (pytest.approx(0.5), 1.0)


def test_needed_is_the_quadrature_term_that_just_reaches_a_ratio() -> None:
    base = conformal.Spread.of(0.8, 1.25, 1.0)
    assert conformal.needed(base, 1.1) == (0.0, 0.0)  # inside
    d, u = conformal.needed(base, 0.4)
    assert u == 0.0 and math.hypot(base.down, d) == pytest.approx(math.log(1 / 0.4))
    lo, _ = base.widened([(math.exp(-d), 1.0)]).band()
    assert lo == pytest.approx(0.4)


def _held(unit: str, ratios: list[float]) -> conformal.Held:
    return conformal.Held(unit, conformal.Spread.of(0.9, 1.1, 1.0), tuple(ratios))


def test_a_term_covers_80_percent_of_synthetic_extrapolated_units() -> None:
    """Ten units, each a runtime 0.1…1.0 away in log space from a ±10 % band, odd ones below and
    even ones above: one half-width for both sides, the smallest that leaves at most α = 20 %
    of the weight out — the two farthest units, whichever side they lie on."""
    held = [
        _held(f"u{i}", [math.exp(0.1 * i if i % 2 == 0 else -0.1 * i)] * (i + 1))
        for i in range(1, 11)
    ]
    t = conformal.calibrate_term(held)
    # unit 8 (above) is the farthest the term reaches, whatever the row counts
    assert math.hypot(math.log(1.1), math.log(t.high)) == pytest.approx(0.8)
    assert t.low == pytest.approx(1 / t.high)  # the same half-width below
    assert t.units == 10 and t.rows == sum(range(2, 12))
    assert t.coverage == pytest.approx(0.8)
    # refitted without each unit: units 9 and 10 are missed, every other one is reached
    assert t.cv_coverage == pytest.approx(0.8)


def test_a_term_widens_both_sides_whichever_side_its_units_fell() -> None:
    """A one-sided term would draw the next runtime's band on the side the last few fell; the
    direction of a new runtime's error is not known, so the term is the same on both sides."""
    low_only = [_held(f"u{i}", [0.5]) for i in range(5)]
    t = conformal.calibrate_term(low_only)
    assert t.high == pytest.approx(1 / t.low) and t.high > 1.5
    lo, hi = conformal.Spread.of(0.9, 1.1).widened([(t.low, t.high)]).band()
    assert lo == pytest.approx(0.5) and hi == pytest.approx(
        math.exp(math.hypot(math.log(1.1), math.log(t.high)))
    )


def test_units_weigh_alike_whatever_their_row_counts() -> None:
    """A runtime measured once weighs what one measured a hundred times weighs."""
    many = [_held("A", [1.0] * 100), _held("B", [1.0] * 100), _held("C", [0.5])]
    t = conformal.calibrate_term(many)
    assert t.low < 0.6 and t.high > 1.6  # C is a third of the weight: past the 20 % tail
    assert math.isnan(conformal.calibrate_term([many[0]]).cv_coverage)
    assert conformal.calibrate_term([]).units == 0


TABLE = EfficiencyTable(
    bands={("decode", "all"): (0.84, 1.14), ("decode/llama.cpp", "all"): (0.90, 1.10)},
    centres={("decode", "all"): 0.95},
    covered={"decode": (frozenset({"llama.cpp", "transformers"}), frozenset({"Hopper"}))},
    multi_gpu=frozenset({"serving"}),
    extrapolation={"runtime": (0.40, 1.43), "architecture": (0.75, 1.22), "moe": (0.6, 1.0)},
)
ROW = bands.BandInputs(
    regime="decode", vendor="nvidia", architecture="Hopper", runtime="llama.cpp",
    efficiency_source="prior",
)  # fmt: skip


def _band(**kw: object) -> tuple[float, float, str]:
    return bands.band(replace(ROW, **kw), TABLE)  # type: ignore[arg-type]


def _spread(lo: float, hi: float, c: float, *terms: tuple[float, float]) -> tuple[float, float]:
    return conformal.Spread.of(lo, hi, c).widened(list(terms)).band()


def test_a_runtime_with_its_own_band_gets_it_else_the_regimes() -> None:
    assert _band()[:2] == (pytest.approx(0.90), pytest.approx(1.10))
    assert _band(runtime="transformers")[:2] == (pytest.approx(0.84), pytest.approx(1.14))
    assert TABLE.centre("decode", "nvidia", "transformers") == 0.95
    assert TABLE.centre("decode", "nvidia", "llama.cpp") == 1.0  # none stored: 1


def test_an_unseen_runtime_widens_the_regimes_band_about_its_centre() -> None:
    lo, hi, basis = _band(runtime="vllm")
    assert (lo, hi) == pytest.approx(_spread(0.84, 1.14, 0.95, (0.40, 1.43)))
    assert bands.UNMEASURED_RUNTIME.reason in basis and "0.95" in basis
    # the band is not replaced by, nor stacked onto, the worst case: in between
    assert 0.84 * 0.40 < lo < 0.84 and 1.14 < hi < 1.14 * 1.43


def test_widenings_apply_only_where_the_row_extrapolates() -> None:
    assert "widened" not in _band()[2]  # runtime and architecture calibrated, one GPU
    lo, hi, basis = _band(architecture="Blackwell", runtime="vllm", moe=True)
    assert (lo, hi) == pytest.approx(
        _spread(0.84, 1.14, 0.95, (0.40, 1.43), (0.75, 1.22), (0.6, 1.0))
    )
    for w in (bands.UNMEASURED_RUNTIME, bands.UNMEASURED_ARCHITECTURE, bands.MOE):
        assert w.reason in basis
    # a stated allowance where the table calibrated none (4-bit here)
    lo4, _, _ = _band(four_bit=True, runtime="transformers")
    assert lo4 == pytest.approx(_spread(0.84, 1.14, 0.95, (bands.FOUR_BIT.low, 1.0))[0])


def test_an_moe_row_in_4_bit_is_widened_once() -> None:
    """The tuning sets' MoE workload is itself 4-bit and the two terms are pooled from the same
    workloads: a 4-bit MoE row takes the larger term once, naming both reasons."""
    table = replace(TABLE, extrapolation={"moe": (0.75, 1.33), "four_bit": (0.8, 1.25)})
    lo, hi, basis = bands.band(replace(ROW, runtime="transformers", moe=True, four_bit=True), table)
    assert (lo, hi) == pytest.approx(_spread(0.84, 1.14, 0.95, (0.75, 1.33)))
    assert bands.MOE.reason in basis and bands.FOUR_BIT.reason in basis
    # either alone: its own term
    lo4, hi4, _ = bands.band(replace(ROW, runtime="transformers", four_bit=True), table)
    assert (lo4, hi4) == pytest.approx(_spread(0.84, 1.14, 0.95, (0.8, 1.25)))


def test_a_calibrated_term_of_one_widens_nothing_but_is_named() -> None:
    """Held-out architectures needed nothing beyond the new-source term: ×1, yet the row
    still extrapolates, and its basis says so."""
    table = replace(TABLE, extrapolation={"architecture": (1.0, 1.0)})
    basis = _band(architecture="Blackwell")[2]
    lo1, hi1, basis1 = bands.band(replace(ROW, architecture="Blackwell"), table)
    assert bands.UNMEASURED_ARCHITECTURE.reason in basis
    assert (lo1, hi1) == (pytest.approx(0.90), pytest.approx(1.10)) and "widened" not in basis1
    assert f"{bands.NIL_TERM_NOTE}: {bands.UNMEASURED_ARCHITECTURE.reason}" in basis1


def test_multi_gpu_widens_only_regimes_whose_calibration_set_has_none() -> None:
    assert bands.MULTI_GPU.reason in _band(num_gpus=8)[2]
    serving = EfficiencyTable(
        bands={("serving", "all"): (0.6, 1.15)},
        covered={"serving": (frozenset({"vllm"}), frozenset({"Hopper"}))},
        multi_gpu=frozenset({"serving"}),
    )
    x = replace(ROW, regime="serving", runtime="vllm", num_gpus=8)
    lo, hi, basis = bands.band(x, serving)
    assert (lo, hi) == (pytest.approx(0.6), pytest.approx(1.15)) and "widened" not in basis


def test_without_estimates_the_stated_allowances_apply() -> None:
    plain = EfficiencyTable(bands=TABLE.bands, covered=TABLE.covered)
    lo, hi, _ = bands.band(replace(ROW, runtime="vllm"), plain)
    run = bands.UNMEASURED_RUNTIME
    assert (lo, hi) == pytest.approx(_spread(0.84, 1.14, 1.0, (run.low, run.high)))


# ------------------------------------------------------------------ a new source


def _source(
    name: str, ratios: list[float], base: tuple[float, float] = (0.9, 1.1)
) -> conformal.Held:
    return conformal.Held(name, conformal.Spread.of(*base), tuple(ratios))


def test_a_source_needs_what_takes_its_central_80_percent_inside() -> None:
    """One row far out of eleven is past the source's 90 % quantile (interpolated): no need;
    a source all of whose rows sit at 0.5 needs the term that reaches 0.5 from a ±10 % band."""
    one_out = _source("s", [1.0] * 10 + [0.2])
    d, u = conformal.unit_need(one_out)
    assert d == pytest.approx(0.0) and u == 0.0
    low = _source("t", [0.5] * 3)
    d, u = conformal.unit_need(low)
    assert math.hypot(math.log(0.9), d) == pytest.approx(-math.log(0.5)) and u == 0.0


def test_each_row_of_a_source_is_scored_against_its_own_band() -> None:
    """Rows of one source may fall under different bands (a runtime's own, a vendor's)."""
    wide = conformal.Spread.of(0.4, 2.5)
    h = conformal.Held("s", conformal.Spread.of(0.9, 1.1), (0.5, 0.5), (wide, wide))
    assert conformal.unit_need(h) == (0.0, 0.0)


def test_the_conformal_rank_over_sources_carries_the_finite_sample_correction() -> None:
    # k = ⌈(G+1)·0.9⌉: nine units reach the largest, fewer reach no order statistic at all
    assert conformal.unit_rank(9) == 9 and conformal.unit_rank(8) is None
    assert conformal.unit_rank(19) == 18 and conformal.unit_rank(37) == 35
    assert conformal.source_term([_source(f"u{i}", [0.5]) for i in range(8)]) is None


def test_a_source_term_is_the_kth_smallest_need_per_side() -> None:
    """Nineteen sources: eighteen sitting at e^(-0.05·i) below a ±10 % band, one above. k = 18:
    on the low side the 18th smallest need (the high source needs nothing there, so source
    16's), on the high side zero (one source of nineteen needs anything there)."""
    held = [_source(f"u{i}", [math.exp(-0.05 * i)] * 3) for i in range(18)]
    held.append(_source("up", [3.0]))
    t = conformal.source_term(held)
    assert t is not None and t.units == 19 and t.rank == 18
    assert math.hypot(math.log(0.9), math.log(t.low)) == pytest.approx(0.05 * 16)
    assert t.high == 1.0
    # met: all but source 17 and the high one, rows alike (each source's rows sit together)
    assert t.met == pytest.approx(17 / 19) and t.coverage == pytest.approx(17 / 19)
    # refitted without each: k = ⌈19·0.9⌉ = 18 of 18, the others' largest need, which misses
    # source 17 (the largest is then 16's) and the high one, and meets the rest
    assert t.cv_met == pytest.approx(17 / 19)


def test_a_new_source_widens_every_row_in_quadrature_and_says_so() -> None:
    table = replace(TABLE, new_source={"all": (0.8, 1.3), "prefill": (0.7, 1.5)})
    lo, hi, basis = bands.band(ROW, table)
    assert (lo, hi) == pytest.approx(_spread(0.90, 1.10, 1.0, (0.8, 1.3)))
    assert bands.NEW_SOURCE_REASON in basis
    # measured rows too: the user's run is a new source for the measurement as well
    mlo, mhi, _ = bands.band(replace(ROW, efficiency_source="measured"), table)
    assert (mlo, mhi) == pytest.approx(_spread(*bands.BAND_MEASURED, 1.0, (0.8, 1.3)))
    # a regime with its own term takes it; the pooled one is for the rest
    assert table.source_term("prefill") == (0.7, 1.5)
    assert table.source_term("decode") == (0.8, 1.3)
    # spread() is the same band in log space (what a held-out source is scored against)
    s = bands.spread(ROW, table)
    assert s.band() == pytest.approx((lo, hi))
    # without the term nothing changes
    assert bands.band(ROW, TABLE)[:2] == (0.90, 1.10)


def test_the_new_source_term_is_read_and_checked_from_the_yaml() -> None:
    from app.domain.efficiency import parse_table

    t = parse_table({"bands": {"new_source": {"all": [0.81, 1.32]}}})
    assert t.new_source == {"all": (0.81, 1.32)} and t.source_term("train") == (0.81, 1.32)
    with pytest.raises(ValueError, match="new-source"):
        parse_table({"bands": {"new_source": {"all": [1.1, 1.3]}}})


def test_a_cross_fitted_group_is_scored_by_a_term_built_without_it() -> None:
    """Three groups of sources (benchmarks/band_crossfit.py: one publication's files each):
    each group gets the term built from ``extra`` and the other groups alone. Hand-worked with
    the rank rule: nine sources at the band (no need) in ``extra``, one far-low source in group
    A, one far-high in B, one at the band in C. Without A, ten units with one high need:
    k = ⌈11·0.9⌉ = 10 of 10, the high one's need above, none below; likewise without B the low
    need below; without C both (eleven units, k = 11: the largest need per side)."""
    extra = [_source(f"t{i}", [1.0] * 3) for i in range(9)]
    groups = {
        "A": [_source("low", [0.5])],
        "B": [_source("high", [2.0])],
        "C": [_source("c", [1.0])],
    }

    def rule(held: list[conformal.Held]) -> tuple[float, float]:
        t = conformal.source_term(held)
        assert t is not None
        return t.low, t.high

    terms = conformal.cross_fitted(groups, rule, extra)
    # the quadrature terms that take 0.9–1.1 out to 0.5 and to 2.0
    down = math.sqrt(math.log(2.0) ** 2 - math.log(0.9) ** 2)
    up = math.sqrt(math.log(2.0) ** 2 - math.log(1.1) ** 2)
    assert terms["A"] == pytest.approx((1.0, math.exp(up)))
    assert terms["B"] == pytest.approx((math.exp(-down), 1.0))
    assert terms["C"] == pytest.approx((math.exp(-down), math.exp(up)))
    # A's far-low source lies outside the band its own term would not have drawn
    low = conformal.Spread.of(0.9, 1.1).widened([terms["A"]]).band()
    assert not low[0] <= 0.5
    # the rule sees every unit but the group's own, extra first, in order
    seen = conformal.cross_fitted(groups, lambda held: [h.unit for h in held], extra[:1])
    assert seen == {"A": ["t0", "high", "c"], "B": ["t0", "low", "c"], "C": ["t0", "low", "high"]}

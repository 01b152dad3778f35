"""Split-conformal bands on measured ÷ predicted, calibrated by leaving whole units out.

A unit is what a new request is exchangeable with: a GPU (a known workload on an unseen card), a
workload (an unseen model, precision or shape under a known runtime), a runtime or an
architecture (an extrapolation the calibration set never made). Rows of one unit share their
errors, so a regime's band (fit) is checked by holding each unit out with all its rows,
rebuilding the band from the other units, and counting the held-out rows that fall inside
(leave-one-group-out cross-validation of a split-conformal band). The band for a unit the rows
lack altogether — a new runtime — is conformal over units instead (group_band): each unit one
score, so a runtime measured once weighs what one measured a hundred times weighs.
benchmarks/accuracy.py builds the rows; this module is the procedure, tested on its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

ALPHA = 0.20  # miscoverage: bands aim at 80 %
TARGET_COVERAGE = 1 - ALPHA
_EPS = 1e-9  # (n+1)·α/2 lands on integers: keep float error out of ⌊⌋ and ⌈⌉
# When even the extremes of the other units miss the held-out one (few units), the band widens
# by a factor on both sides, in these steps, until held-out coverage reaches the target.
MARGINS = (1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0, 2.5, 3.0)

Row = tuple[str, float]  # (unit, measured ÷ predicted)


def conformal_band(
    ratios: Sequence[float], step: int = 0, margin: float = 1.0
) -> tuple[float, float]:
    """Equal tails in log space: the j-th and k-th smallest of n ratios with j = ⌊(n+1)·α/2⌋,
    k = ⌈(n+1)·(1−α/2)⌉ (the finite-sample correction), ``step`` order statistics further out,
    then ``margin`` past them. Always brackets 1 (a band never excludes the estimate)."""
    xs = sorted(ratios)
    n = len(xs)
    if not n:
        return 1.0, 1.0
    j = math.floor((n + 1) * ALPHA / 2 + _EPS) - step
    k = math.ceil((n + 1) * (1 - ALPHA / 2) - _EPS) + step
    lo = xs[max(j, 1) - 1] / margin
    hi = xs[min(k, n) - 1] * margin
    return min(1.0, lo), max(1.0, hi)


def leave_one_unit_out(rows: Sequence[Row], step: int = 0, margin: float = 1.0) -> float:
    """Each unit held out in turn with all its rows, the band built from the other units: the
    share of all rows that fall inside the band built without their unit."""
    units = sorted({u for u, _ in rows})
    if len(units) < 2:
        return math.nan
    inside = 0
    for held in units:
        lo, hi = conformal_band([r for u, r in rows if u != held], step, margin)
        inside += sum(lo <= r <= hi for u, r in rows if u == held)
    return inside / len(rows)


@dataclass(frozen=True)
class Fit:
    low: float
    high: float
    coverage: float  # fit: leave-one-unit-out share of rows; group_band: mean over units
    units: int
    step: int = 0  # order statistics stepped outward past the conformal ones
    margin: float = 1.0

    @property
    def width(self) -> float:
        return self.high / self.low


def fit(rows: Sequence[Row], target: float = TARGET_COVERAGE) -> Fit:
    """The narrowest band (smallest margin, then fewest steps) whose leave-one-unit-out
    coverage reaches ``target``; the widest tried when none does (its coverage says so)."""
    n = len(rows)
    units = len({u for u, _ in rows})
    ratios = [r for _, r in rows]
    tries = [(s, m) for m in MARGINS for s in range(n // 2 + 1)]
    for s, m in tries:
        cov = leave_one_unit_out(rows, s, m)
        if cov >= target:
            return Fit(*conformal_band(ratios, s, m), cov, units, s, m)
    s, m = tries[-1]
    return Fit(*conformal_band(ratios, s, m), leave_one_unit_out(rows, s, m), units, s, m)


def unit_edges(ratios: Sequence[float]) -> tuple[float, float]:
    """One unit's own central 80 %: its α/2 and 1−α/2 quantiles (linear interpolation; a unit
    of one row is that row)."""
    xs = sorted(ratios)
    if not xs:
        return 1.0, 1.0

    def q(p: float) -> float:
        pos = p * (len(xs) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    return q(ALPHA / 2), q(1 - ALPHA / 2)


def group_band(rows: Sequence[Row]) -> Fit:
    """The band for a new *unit* (a runtime, an architecture the rows lack), conformal over
    units: each unit scores its own central 80 % (unit_edges); the band's low edge is the j-th
    smallest of the units' low edges and its high edge the k-th smallest of their high edges,
    j = ⌊(G+1)·α/2⌋, k = ⌈(G+1)·(1−α/2)⌉ over G units. With fewer than nine units j < 1 and
    k > G: the finite-sample quantile does not exist, and the band is the extremes of the units
    seen — no coverage guarantee, which ``coverage`` (leave-one-unit-out, mean over units) and
    ``units`` let a reader judge."""
    by_unit: dict[str, list[float]] = {}
    for u, r in rows:
        by_unit.setdefault(u, []).append(r)
    edges = [unit_edges(v) for v in by_unit.values()]
    g = len(edges)
    if not g:
        return Fit(1.0, 1.0, math.nan, 0)
    lows = sorted(e[0] for e in edges)
    highs = sorted(e[1] for e in edges)
    j = max(1, math.floor((g + 1) * ALPHA / 2 + _EPS))
    k = min(g, math.ceil((g + 1) * (1 - ALPHA / 2) - _EPS))
    lo, hi = min(1.0, lows[j - 1]), max(1.0, highs[k - 1])
    return Fit(lo, hi, _unit_coverage(by_unit, lo, hi), g)


def _unit_coverage(by_unit: dict[str, list[float]], lo: float, hi: float) -> float:
    """Mean over units of the share of a unit's rows inside [lo, hi] (a report, not a fit: the
    band above is not rebuilt per held-out unit)."""
    shares = [sum(lo <= r <= hi for r in v) / len(v) for v in by_unit.values()]
    return sum(shares) / len(shares) if shares else math.nan


def widening(outer: tuple[float, float], base: tuple[float, float]) -> tuple[float, float]:
    """The factors that take ``base`` (a row's calibrated band) out to the envelope of itself
    and ``outer`` (the band an extrapolation needed): never narrowing."""
    return min(1.0, outer[0] / base[0]), max(1.0, outer[1] / base[1])

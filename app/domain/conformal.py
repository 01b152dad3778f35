"""Split-conformal bands on measured ÷ predicted, calibrated by leaving whole units out, and the
widening terms an extrapolation needs.

A unit is what a new request is exchangeable with: a GPU (a known workload on an unseen card), a
workload (an unseen model, precision or shape under a known runtime), a runtime or an
architecture (an extrapolation the calibration set never made). Rows of one unit share their
errors, so a regime's band (fit) is checked by holding each unit out with all its rows,
rebuilding the band from the other units, and counting the held-out rows that fall inside
(leave-one-group-out cross-validation of a split-conformal band). An extrapolation (a runtime,
an architecture, MoE, 4-bit the band's rows lack) is a further independent log error: a Spread
(centre, log half-widths) widens by it in quadrature about its centre, and the term is the one
the tuning sets' own units of that kind needed when held out from their regime's band
(calibrate_term: every unit weighing the same). benchmarks/accuracy.py builds the rows; this
module is the procedure, tested on its own.
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
    coverage: float  # leave-one-unit-out share of rows
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


@dataclass(frozen=True)
class Spread:
    """A band in log space about its centre: ``centre`` a ratio (measured ÷ predicted, the
    regime's median: its bias), ``down`` and ``up`` natural-log half-widths (≥ 0). Independent
    log-error sources add in quadrature: widening by terms (l, h) gives √(down² + Σl²) and
    √(up² + Σh²) about the same centre, so the band stays where the regime's bias puts it."""

    centre: float
    down: float
    up: float

    @classmethod
    def of(cls, low: float, high: float, centre: float = 1.0) -> Spread:
        c = min(max(centre, low), high)  # a centre outside its band would make a side negative
        return cls(c, math.log(c / low), math.log(high / c))

    def widened(self, terms: Sequence[tuple[float, float]]) -> Spread:
        """``terms``: (low, high) factors (low ≤ 1 ≤ high), each an independent source."""
        down = math.sqrt(self.down**2 + sum(math.log(lo) ** 2 for lo, _ in terms))
        up = math.sqrt(self.up**2 + sum(math.log(hi) ** 2 for _, hi in terms))
        return Spread(self.centre, down, up)

    def band(self) -> tuple[float, float]:
        """The factors on the estimate, bracketing 1 (a band never excludes the estimate)."""
        lo = self.centre * math.exp(-self.down)
        hi = self.centre * math.exp(self.up)
        return min(1.0, lo), max(1.0, hi)


def needed(spread: Spread, ratio: float) -> tuple[float, float]:
    """The log term (down, up) that, added in quadrature, just takes ``spread`` out to
    ``ratio``: 0 on a side the ratio is already inside."""
    e = math.log(ratio / spread.centre)
    down = math.sqrt(e * e - spread.down**2) if e < -spread.down else 0.0
    up = math.sqrt(e * e - spread.up**2) if e > spread.up else 0.0
    return down, up


@dataclass(frozen=True)
class Held:
    """One unit of extrapolated rows (a regime's runtime, architecture, MoE or 4-bit workload)
    and the band the engine would have given them had the tuning sets lacked the unit."""

    unit: str
    base: Spread
    ratios: tuple[float, ...]


@dataclass(frozen=True)
class Term:
    """A calibrated widening: ``low``/``high`` factors added in quadrature; ``coverage`` the
    mean over units of their rows inside base ⊕ term; ``cv_coverage`` the same with the term
    refitted on the other units for each unit (nested leave-one-unit-out, NaN under two)."""

    low: float
    high: float
    coverage: float
    cv_coverage: float
    units: int
    rows: int


def _weighted_upper(values: Sequence[tuple[float, float]], tail: float) -> float:
    """The smallest value v with at most ``tail`` of the weight strictly above it."""
    total = 0.0
    for v, w in sorted(values, reverse=True):
        total += w
        if total > tail + _EPS:
            return v
    return 0.0


def term_for(held: Sequence[Held]) -> tuple[float, float]:
    """Equal tails over units: every unit weighs the same (its rows share the weight), and each
    side's term is the smallest that leaves at most α/2 of that weight outside it."""
    downs: list[tuple[float, float]] = []
    ups: list[tuple[float, float]] = []
    for h in held:
        w = 1.0 / (len(held) * len(h.ratios))
        for r in h.ratios:
            d, u = needed(h.base, r)
            downs.append((d, w))
            ups.append((u, w))
    d = _weighted_upper(downs, ALPHA / 2)
    u = _weighted_upper(ups, ALPHA / 2)
    return math.exp(-d), math.exp(u)


def _unit_share(h: Held, term: tuple[float, float]) -> float:
    lo, hi = h.base.widened([term]).band()
    return sum(lo * (1 - _EPS) <= r <= hi * (1 + _EPS) for r in h.ratios) / len(h.ratios)


def calibrate_term(held: Sequence[Held]) -> Term:
    """The quadrature term the extrapolated units needed (term_for), with its in-sample and
    nested leave-one-unit-out coverage (mean over units)."""
    held = [h for h in held if h.ratios]
    if not held:
        return Term(1.0, 1.0, math.nan, math.nan, 0, 0)
    term = term_for(held)
    cov = sum(_unit_share(h, term) for h in held) / len(held)
    cv = math.nan
    if len(held) >= 2:
        shares = [_unit_share(h, term_for([o for o in held if o is not h])) for h in held]
        cv = sum(shares) / len(shares)
    return Term(*term, cov, cv, len(held), sum(len(h.ratios) for h in held))

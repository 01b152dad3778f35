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
(calibrate_term: every unit weighing the same, one half-width for both sides). The units are
scored against their base band already widened by the new-source term (every row carries it,
and a held-out runtime is a new source too), so a term is what the extrapolation adds beyond a
new source, not the two counted twice. benchmarks/accuracy.py builds the rows; this module is
the procedure, tested on its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

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
    if not ratios:
        return 1.0, 1.0
    return _quantile(ratios, ALPHA / 2), _quantile(ratios, 1 - ALPHA / 2)


def _quantile(values: Sequence[float], p: float) -> float:
    """The p-quantile of ``values`` by linear interpolation between order statistics."""
    xs = sorted(values)
    pos = p * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


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
    # per-row bases where the unit's rows would get different bands (a held-out source: each
    # row its regime's, runtime's or vendor's band and its own widenings); empty: ``base``
    bases: tuple[Spread, ...] = ()

    def pairs(self) -> list[tuple[Spread, float]]:
        """(the band a row would have got, its ratio) for every row of the unit."""
        return list(zip(self.bases or (self.base,) * len(self.ratios), self.ratios, strict=True))


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
    """One log half-width for both sides: every unit weighs the same (its rows share the
    weight), and the term is the smallest that leaves at most α of that weight outside.

    Symmetric because the direction of an extrapolation's error is not known in advance: of
    the tuning sets' runtimes held out, some run below the rest's band and some above, and a
    new one may go either way; a one-sided term (each side's own 90th percentile) would draw
    the next runtime's band on the side the last few happened to fall. A row lies outside on
    at most one side, so it needs max(down, up) (``needed``), and a term t covers it exactly
    when that is ≤ t: the weighted 1−α quantile of those needs covers 1−α of the weight."""
    needs: list[tuple[float, float]] = []
    for h in held:
        w = 1.0 / (len(held) * len(h.ratios))
        needs.extend((max(needed(base, r)), w) for base, r in h.pairs())
    t = _weighted_upper(needs, ALPHA)
    return math.exp(-t), math.exp(t)


def _unit_share(h: Held, term: tuple[float, float]) -> float:
    inside = 0
    for base, r in h.pairs():
        lo, hi = base.widened([term]).band()
        inside += lo * (1 - _EPS) <= r <= hi * (1 + _EPS)
    return inside / len(h.ratios)


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


# ------------------------------------------------------------------ a new source
# Every answer is for a source the tuning sets never measured (another harness, software
# version, host or measurement method), and the regime bands above are calibrated leaving out
# GPUs and workloads *within* sources, so between-source spread is not in them. A unit here is
# a (regime, source) pair held out of its regime; what it needs is the term that takes its own
# central 80 % inside the band the rest of its regime gives (unit_need). Over units the term is
# split-conformal: a new source is one more exchangeable unit, so with G units the
# k = ⌈(G+1)(1−α/2)⌉-th smallest need on each side holds a new source's need with probability
# ≥ 1−α/2 per side, ≥ 1−α on both: with probability ≥ 80 % a new source sees ≥ 80 % of its
# results inside. Under G = (1−α/2)/(α/2) = 9 units no order statistic reaches that level
# (k > G): source_term says so (None) and the caller pools regimes.


def unit_need(h: Held) -> tuple[float, float]:
    """The log term (down, up) that takes the unit's central 80 % inside its base: on each
    side the 1−α/2 quantile of its rows' needs (linear interpolation, as unit_edges takes a
    unit's central 80 %; a unit of one row needs what that row needs)."""
    needs = [needed(base, r) for base, r in h.pairs()]
    return (
        _quantile([d for d, _ in needs], 1 - ALPHA / 2),
        _quantile([u for _, u in needs], 1 - ALPHA / 2),
    )


def unit_rank(units: int, level: float = 1 - ALPHA / 2) -> int | None:
    """k = ⌈(G+1)·level⌉ (the finite-sample conformal rank over G units), None when k > G."""
    k = math.ceil((units + 1) * level - _EPS)
    return k if k <= units else None


@dataclass(frozen=True)
class SourceTerm:
    """The term a new source needs (``low``/``high`` factors in quadrature); ``met`` the share
    of units whose central 80 % it covers in-sample, ``cv_met`` the same with the term rebuilt
    from the other units for each (nested leave-one-unit-out, at the other units' own rank,
    their largest need where they are too few); ``coverage`` and ``cv_coverage`` the mean
    share of a unit's rows inside, likewise."""

    low: float
    high: float
    units: int
    rank: int
    met: float
    cv_met: float
    coverage: float
    cv_coverage: float


def _order_term(needs: Sequence[tuple[float, float]], k: int) -> tuple[float, float]:
    downs = sorted(d for d, _ in needs)
    ups = sorted(u for _, u in needs)
    return math.exp(-downs[k - 1]), math.exp(ups[k - 1])


def source_met(h: Held, term: tuple[float, float]) -> bool:
    """Whether a term (low, high) holds the unit's central 80 % (``unit_need``)."""
    d, u = unit_need(h)
    return d <= -math.log(term[0]) + _EPS and u <= math.log(term[1]) + _EPS


def source_term(held: Sequence[Held], level: float = 1 - ALPHA / 2) -> SourceTerm | None:
    """The split-conformal term over units (unit_need per unit, the ⌈(G+1)·level⌉-th smallest
    per side); None when there are too few units for that rank."""
    held = [h for h in held if h.ratios]
    k = unit_rank(len(held), level)
    if k is None:
        return None
    term = _order_term([unit_need(h) for h in held], k)
    met = sum(source_met(h, term) for h in held) / len(held)
    cov = sum(_unit_share(h, term) for h in held) / len(held)
    cv_terms = []
    for h in held:
        others = [unit_need(o) for o in held if o is not h]
        cv_terms.append(_order_term(others, unit_rank(len(others), level) or len(others)))
    cv_met = sum(source_met(h, t) for h, t in zip(held, cv_terms, strict=True)) / len(held)
    cv_cov = sum(_unit_share(h, t) for h, t in zip(held, cv_terms, strict=True)) / len(held)
    return SourceTerm(*term, len(held), k, met, cv_met, cov, cv_cov)


# ------------------------------------------------------------------ cross-fitting
T = TypeVar("T")

# A term sized on units and scored on the same units is scored in sample. Cross-fitted, the
# units fall in groups (a group: what shares its errors, e.g. one publication's files), and each
# group is scored against the term built from the other groups alone (and ``extra`` units that
# are never scored), so no unit is scored by a term calibrated on it.


def cross_fitted(
    groups: Mapping[str, Sequence[Held]],
    rule: Callable[[list[Held]], T],
    extra: Sequence[Held] = (),
) -> dict[str, T]:
    """Per group, what ``rule`` builds from ``extra`` and every other group's units."""
    return {
        g: rule([*extra, *(h for other, hs in groups.items() if other != g for h in hs)])
        for g in groups
    }

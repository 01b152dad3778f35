"""Split-conformal bands on measured ÷ predicted, calibrated by leaving whole units out.

A unit is what a new request is exchangeable with: a GPU (a known workload on an unseen card), a
workload (an unseen model, precision or shape under a known runtime), a runtime or an
architecture (an extrapolation the calibration set never made). Rows of one unit share their
errors, so a band is checked by holding each unit out with all its rows, rebuilding the band
from the other units, and counting the held-out rows that fall inside (leave-one-group-out
cross-validation of a split-conformal band). benchmarks/accuracy.py builds the rows; this
module is the procedure, so that it can be tested on its own.
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


def leave_one_unit_out(
    rows: Sequence[Row], step: int = 0, margin: float = 1.0, *, per_unit: bool = False
) -> float:
    """Each unit held out in turn with all its rows, the band built from the other units: the
    share of held-out rows inside it (``per_unit``: the mean over units of each unit's share,
    so that a unit of one row weighs what a unit of a hundred weighs)."""
    units = sorted({u for u, _ in rows})
    if len(units) < 2:
        return math.nan
    shares: list[float] = []
    inside = 0
    for held in units:
        lo, hi = conformal_band([r for u, r in rows if u != held], step, margin)
        mine = [lo <= r <= hi for u, r in rows if u == held]
        inside += sum(mine)
        shares.append(sum(mine) / len(mine))
    return sum(shares) / len(shares) if per_unit else inside / len(rows)


@dataclass(frozen=True)
class Fit:
    low: float
    high: float
    coverage: float  # leave-one-unit-out (share of held-out rows, or mean over units)
    units: int
    step: int = 0  # order statistics stepped outward past the conformal ones
    margin: float = 1.0

    @property
    def width(self) -> float:
        return self.high / self.low


def fit(rows: Sequence[Row], target: float = TARGET_COVERAGE, *, per_unit: bool = False) -> Fit:
    """The narrowest band (smallest margin, then fewest steps) whose leave-one-unit-out
    coverage reaches ``target``; the widest tried when none does (its coverage says so)."""
    n = len(rows)
    units = len({u for u, _ in rows})
    ratios = [r for _, r in rows]
    tries = [(s, m) for m in MARGINS for s in range(n // 2 + 1)]
    for s, m in tries:
        cov = leave_one_unit_out(rows, s, m, per_unit=per_unit)
        if cov >= target:
            return Fit(*conformal_band(ratios, s, m), cov, units, s, m)
    s, m = tries[-1]
    cov = leave_one_unit_out(rows, s, m, per_unit=per_unit)
    return Fit(*conformal_band(ratios, s, m), cov, units, s, m)


def widening(outer: tuple[float, float], base: tuple[float, float]) -> tuple[float, float]:
    """The factors that take ``base`` (a row's calibrated band) out to the envelope of itself
    and ``outer`` (the band an extrapolation needed): never narrowing."""
    return min(1.0, outer[0] / base[0]), max(1.0, outer[1] / base[1])

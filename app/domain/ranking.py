"""Ranking as arrays: one column per metric of the configurations a request evaluated, the
scores computed over whole columns, the rows shown found by a partial sort.

``rank.rank`` orders a request's candidates through here; ``benchmarks/rank_speed.py`` ranks
100,000 configurations with it (goal: at most 50 ms). The order is the one the sort key
(listed after: latency target missed, experimental software, no price under 'balanced',
a price without the host it needs under an objective that weighs money; then score, fewest
GPUs, slug) gives, stable among equal keys, as Python's ``sorted`` was;
scores are the objective's metric over the top one, rounded to 6 places as ``round`` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from app import vocab

PRICE_OBJECTIVES = frozenset(vocab.PRICE_OBJECTIVES)

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]
Bools = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Columns:
    """The candidates' metrics, one row each (NaN where a price is unknown)."""

    throughput: Floats  # work per second, as the objective counts it
    value: Floats  # work per dollar under the acquisition each row passed; NaN: no price
    price: Floats  # what 'cheapest' minimises: the job's cost, else the upfront cost; NaN: none
    num_gpus: Ints
    card: Ints  # the row's GPU by its place in slug order: the last tie-break
    misses_latency: Bools  # listed after every row that meets the latency target
    experimental: Bools  # software the rules call experimental: listed after supported rows
    # Among rows of one score, lower first, before the fewest GPUs (task 'serving': the first
    # token's latency, between cards whose tokens come as fast); None: no such key
    tiebreak: Floats | None = None
    # priced without the host it needs (a bought rig of four or more consumer or workstation
    # cards: compat.rig_host_unpriced): under an objective that weighs money, listed after
    # every row priced whole; None: no such row
    host_unpriced: Bools | None = None

    def __len__(self) -> int:
        return len(self.throughput)


@dataclass(frozen=True, slots=True)
class Ranking:
    order: NDArray[np.intp]  # rows best first: every ranked row, or the first k asked for
    score: Floats  # every row's score in [0, 1], best = 1
    speed_score: Floats  # throughput over the best
    value_score: Floats  # value over the best; NaN: no price (or no value anywhere)
    ranked: int  # rows with a metric: all, less those without a price under a price objective


def columns(
    throughput: list[float] | Floats,
    value: list[float | None] | Floats,
    price: list[float | None] | Floats,
    num_gpus: list[int] | Ints,
    slugs: list[str],
    meets_latency: list[bool | None] | None = None,
    experimental: list[bool] | Bools | None = None,
    tiebreak: list[float] | Floats | None = None,
    host_unpriced: list[bool] | Bools | None = None,
) -> Columns:
    """Columns from per-row lists (None: no price; ``meets_latency`` False: the target was
    missed, None: no target); slugs become their place in slug order."""
    names = sorted(set(slugs))
    code = {s: i for i, s in enumerate(names)}
    n = len(slugs)
    return Columns(
        throughput=np.asarray(throughput, dtype=np.float64),
        value=np.asarray(value, dtype=np.float64),  # None becomes NaN
        price=np.asarray(price, dtype=np.float64),
        num_gpus=np.asarray(num_gpus, dtype=np.int64),
        card=np.fromiter((code[s] for s in slugs), dtype=np.int64, count=n),
        misses_latency=(
            np.zeros(n, dtype=np.bool_)
            if meets_latency is None
            else np.fromiter((m is False for m in meets_latency), dtype=np.bool_, count=n)
        ),
        experimental=(
            np.zeros(n, dtype=np.bool_)
            if experimental is None
            else np.asarray(experimental, dtype=np.bool_)
        ),
        tiebreak=None if tiebreak is None else np.asarray(tiebreak, dtype=np.float64),
        host_unpriced=(
            None if host_unpriced is None else np.asarray(host_unpriced, dtype=np.bool_)
        ),
    )


def balanced_py(speed: float, value: float | None, speed_weight: float) -> float:
    """speed^w × value^(1−w); speed alone where there is no value (no price)."""
    if value is None:
        return speed
    if speed <= 0 or value <= 0:
        return 0.0
    return math.exp(speed_weight * math.log(speed) + (1.0 - speed_weight) * math.log(value))


def balanced(speed: Floats, value: Floats, speed_weight: float) -> Floats:
    """``balanced_py`` over columns (NaN value: speed alone)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mixed = np.exp(speed_weight * np.log(speed) + (1.0 - speed_weight) * np.log(value))
    positive = (speed > 0) & (value > 0)
    out: Floats = np.where(np.isnan(value), speed, np.where(positive, mixed, 0.0))
    return out


def raw_metric(
    cols: Columns, objective: str, speed_score: Floats, value_score: Floats, speed_weight: float
) -> Floats:
    """Larger is better; 0 where the objective has nothing to go on (no price)."""
    if objective == "balanced":
        return balanced(speed_score, value_score, speed_weight)
    if objective == "fastest":
        return cols.throughput
    if objective == "best_value":
        out: Floats = np.where(np.isnan(cols.value), 0.0, cols.value)
        return out
    p = cols.price
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse: Floats = np.where(p > 0, 1.0 / p, 0.0)  # NaN > 0 is false: no price scores 0
    return inverse


def rank_columns(
    cols: Columns,
    objective: str,
    speed_weight: float = 0.5,
    k: int | None = None,
    *,
    keep_unpriced: bool = False,
) -> Ranking:
    """Scores for every row and the order of the best ``k`` (every ranked row when None).

    Under a price objective a row without a price has no metric: it is left out of the
    order unless ``keep_unpriced`` (then it scores 0 and is ordered like any other row, as
    ``rank.rank`` has always listed it)."""
    n = len(cols)
    if n == 0:
        empty = np.empty(0, dtype=np.float64)
        return Ranking(np.empty(0, dtype=np.intp), empty, empty, empty, 0)
    t = cols.throughput
    best_speed = float(t.max()) or 1.0
    priced = ~np.isnan(cols.value)
    best_value = float(cols.value[priced].max()) if priced.any() else 0.0
    speed_score = t / best_speed
    value_score = cols.value / best_value if best_value else np.full(n, np.nan)
    raw = raw_metric(cols, objective, speed_score, value_score, speed_weight)
    top = float(raw.max()) or 1.0
    score = _round6(raw / top)
    if objective == "balanced":
        _exact_balanced(score, raw, top, speed_score, value_score, speed_weight)
    if objective in PRICE_OBJECTIVES and not keep_unpriced:
        has_price = priced if objective == "best_value" else ~np.isnan(cols.price)
        rows = np.flatnonzero(has_price)
    else:
        rows = np.arange(n)
    ranked = len(rows)
    behind = cols.misses_latency.astype(np.int64) * 8 + cols.experimental.astype(np.int64) * 4
    if objective == "balanced":
        # a card without a price cannot be scored on value: after the priced
        behind += (~priced).astype(np.int64) * 2
    elif objective in PRICE_OBJECTIVES:
        # scored 0 already (kept only where asked: rank.rank); the class keeps them after a
        # rig priced as its cards alone, which has a price of some kind
        behind += np.isnan(cols.value if objective == "best_value" else cols.price) * 2
    if objective != "fastest" and cols.host_unpriced is not None:
        # a rig priced as its cards alone has a value no one-card row can be set against (the
        # host its slots and supply need is missing from it): after the rows priced whole,
        # before those with no price at all
        behind += cols.host_unpriced.astype(np.int64)
    if k is not None and k < len(rows):
        # Partial sort on one key that orders as (behind, -score) does (scores lie in [0, 1],
        # so 2·behind − score keeps the classes apart): every row tied with the k-th stays in,
        # and the full key orders those few.
        primary = behind[rows] * 2.0 - score[rows]
        kth = primary[np.argpartition(primary, k - 1)[k - 1]]
        rows = rows[primary <= kth]
    keys: tuple[NDArray[Any], ...] = (cols.card[rows], cols.num_gpus[rows])
    if cols.tiebreak is not None:
        keys += (cols.tiebreak[rows],)
    keys += (-score[rows], behind[rows])
    order = rows[np.lexsort(keys)]  # stable: equal keys keep the caller's order
    if k is not None:
        order = order[:k]
    return Ranking(order, score, speed_score, value_score, ranked)


# Up to this many rows ``rank_few`` ranks them as lists: numpy's ~60 whole-column operations
# cost ~6 k instructions each whatever the rows, and a balanced answer ranks the dozen cards it
# walked (the open question's ranking 0.65 → 0.38 M instructions, issue 21); a larger ranking
# (every configuration, a large catalog) keeps the columns
FEW = 48


def rank_few(
    throughput: list[float],
    value: list[float | None],
    price: list[float | None],
    num_gpus: list[int],
    slugs: list[str],
    meets_latency: list[bool | None],
    experimental: list[bool],
    tiebreak: list[float] | None,
    host_unpriced: list[bool] | None,
    objective: str,
    speed_weight: float = 0.5,
    k: int | None = None,
) -> tuple[list[int], list[float], list[float], list[float]] | None:
    """``rank_columns`` of ``columns(...)`` of these lists with ``keep_unpriced``, to the last
    bit, as lists: (the order, every row's score, speed score, value score; NaN: no value
    score); None where a figure is not finite (a NaN throughput, an infinite value or price,
    a NaN tie-break), which only the columns answer as they do."""
    nan = math.nan
    isfinite = math.isfinite
    if not all(isfinite(t) for t in throughput):
        return None
    v = [nan if x is None else float(x) for x in value]
    p = [nan if x is None else float(x) for x in price]
    if any(x == math.inf or x == -math.inf for x in (*v, *p)):
        return None
    if tiebreak is not None and not all(x == x for x in tiebreak):
        return None
    best_speed = max(throughput) or 1.0
    priced = [x == x for x in v]
    best_value = max((x for x, ok in zip(v, priced, strict=True) if ok), default=0.0)
    speed = [t / best_speed for t in throughput]
    val = [x / best_value for x in v] if best_value else [nan] * len(v)
    if objective == "balanced":
        # balanced_py over each row: the numpy path's rows within a rounding of a half are
        # scored so too (_exact_balanced), and the others round alike either way
        raw = [
            balanced_py(s, None if x != x else x, speed_weight)
            for s, x in zip(speed, val, strict=True)
        ]
    elif objective == "fastest":
        raw = list(throughput)
    elif objective == "best_value":
        raw = [0.0 if x != x else x for x in v]
    else:
        raw = [1.0 / x if x > 0 else 0.0 for x in p]
    top = max(raw) or 1.0
    score = [round(r / top, 6) for r in raw]
    behind = [
        (8 if m is False else 0) + (4 if e else 0)
        for m, e in zip(meets_latency, experimental, strict=True)
    ]
    if objective == "balanced":
        behind = [b + (0 if ok else 2) for b, ok in zip(behind, priced, strict=True)]
    elif objective in PRICE_OBJECTIVES:
        unpriced = v if objective == "best_value" else p
        behind = [b + (2 if x != x else 0) for b, x in zip(behind, unpriced, strict=True)]
    if objective != "fastest" and host_unpriced is not None:
        behind = [b + (1 if h else 0) for b, h in zip(behind, host_unpriced, strict=True)]
    ties = tiebreak if tiebreak is not None else [0.0] * len(score)
    keys = list(zip(behind, [-x for x in score], ties, num_gpus, slugs, strict=True))
    order = sorted(range(len(keys)), key=keys.__getitem__)  # stable, as lexsort is
    if k is not None:
        order = order[:k]
    return order, score, speed, val


def _round6(x: Floats) -> Floats:
    """``round(v, 6)`` for every v: rint(v·10⁶)/10⁶ is the same (one correctly rounded
    division) except where the product's own rounding may cross the half: those few are
    rounded by ``round`` itself."""
    y = x * 1e6
    out: Floats = np.rint(y) / 1e6
    near = np.flatnonzero(np.abs(y - np.floor(y) - 0.5) < 1e-6)
    for i in near.tolist():
        out[i] = round(float(x[i]), 6)
    return out


def _exact_balanced(
    score: Floats, raw: Floats, top: float, speed: Floats, value: Floats, w: float
) -> None:
    """numpy's exp and log may differ from the math module's in the last bit, which moves a
    score only where it lies within a rounding's reach of a half at the 6th place: those rows
    are scored again with the scalar formula (``balanced_py``, which is ``rank.balanced``) and
    the top it gives."""
    y = raw / top * 1e6
    near = np.flatnonzero(np.abs(y - np.floor(y) - 0.5) < 1e-6)
    if not len(near):
        return
    lead = np.flatnonzero(raw >= top * (1.0 - 1e-9))
    vs = value.tolist()
    ss = speed.tolist()

    def scalar(i: int) -> float:
        v = vs[i]
        return balanced_py(ss[i], None if v != v else v, w)

    top_py = max((scalar(i) for i in lead.tolist()), default=0.0) or 1.0
    for i in near.tolist():
        score[i] = round(scalar(i) / top_py, 6)

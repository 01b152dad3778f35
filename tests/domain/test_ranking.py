"""Ranking as arrays (app.domain.ranking) against the scalar definition it replaces: scores
``round(metric / top, 6)``, the order of the sort key (listed after: latency missed,
experimental, unpriced (under balanced, and under a price objective where kept), a rig priced
without its host under an objective that weighs money; then -score, GPUs, slug), stable among
equals."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from app.domain import ranking

OBJECTIVES = ("fastest", "best_value", "cheapest", "balanced")


def _random_columns(rng: random.Random, n: int, *, ties: bool) -> ranking.Columns:
    """Rows with few distinct values when ``ties`` (exact ties everywhere), prices unknown in
    about one row of five."""

    def pick(values: list[float]) -> float:
        return rng.choice(values) if ties else rng.uniform(0.1, 100.0)

    def price(x: float) -> float | None:
        return None if rng.random() < 0.2 else x

    slugs = [f"gpu-{rng.randrange(6 if ties else 40)}" for _ in range(n)]
    return ranking.columns(
        throughput=[pick([1.0, 2.0, 4.0]) for _ in range(n)],
        value=[price(pick([0.5, 1.0, 3.0])) for _ in range(n)],
        price=[price(pick([10.0, 20.0])) for _ in range(n)],
        num_gpus=[rng.choice([1, 2, 4, 8]) for _ in range(n)],
        slugs=slugs,
        meets_latency=[rng.choice([None, True, False, False]) for _ in range(n)],
        experimental=[rng.random() < 0.1 for _ in range(n)],
        host_unpriced=[rng.random() < 0.1 for _ in range(n)],
    )


def _scalar(cols: ranking.Columns, objective: str, w: float) -> tuple[list[float], list[int]]:
    """The scores and full order, one row at a time with floats and ``sorted``."""
    t = cols.throughput.tolist()
    v = [None if math.isnan(x) else x for x in cols.value.tolist()]
    p = [None if math.isnan(x) else x for x in cols.price.tolist()]
    best_speed = max(t) or 1.0
    best_value = max((x for x in v if x is not None), default=None)
    speed = [x / best_speed for x in t]
    value = [x / best_value if x is not None and best_value else None for x in v]
    if objective == "balanced":
        raw = [ranking.balanced_py(s, vs, w) for s, vs in zip(speed, value, strict=True)]
    elif objective == "fastest":
        raw = list(t)
    elif objective == "best_value":
        raw = [x or 0.0 for x in v]
    else:
        raw = [1.0 / x if x else 0.0 for x in p]
    top = max(raw) or 1.0
    scores = [round(r / top, 6) for r in raw]
    keys = [
        (
            bool(cols.misses_latency[i]),
            bool(cols.experimental[i]),
            (objective == "balanced" and v[i] is None)
            or (objective == "best_value" and v[i] is None)
            or (objective == "cheapest" and p[i] is None),
            objective != "fastest"
            and bool(cols.host_unpriced is not None and cols.host_unpriced[i]),
            -scores[i],
            int(cols.num_gpus[i]),
            int(cols.card[i]),
        )
        for i in range(len(t))
    ]
    return scores, sorted(range(len(t)), key=keys.__getitem__)


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("ties", [True, False])
def test_scores_and_order_equal_the_scalar_definition(objective: str, ties: bool) -> None:
    rng = random.Random(7)
    for w in (0.5, 0.2, 0.9):
        cols = _random_columns(rng, 300, ties=ties)
        scores, order = _scalar(cols, objective, w)
        got = ranking.rank_columns(cols, objective, w, keep_unpriced=True)
        assert got.score.tolist() == scores  # exactly, not approximately
        assert got.order.tolist() == order
        assert got.ranked == 300


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_top_k_is_the_full_sorts_first_k(objective: str) -> None:
    rng = random.Random(11)
    cols = _random_columns(rng, 500, ties=True)  # many rows tied with the k-th
    full = ranking.rank_columns(cols, objective).order.tolist()
    for k in (1, 2, 5, 10, 37, len(full) - 1, len(full), len(full) + 5):
        top = ranking.rank_columns(cols, objective, k=k)
        assert top.order.tolist() == full[:k]
        assert top.ranked == len(full)


def test_exact_ties_keep_the_callers_order_then_break_by_gpus_and_slug() -> None:
    cols = ranking.columns(
        throughput=[2.0, 2.0, 2.0, 2.0, 2.0],
        value=[1.0] * 5,
        price=[10.0] * 5,
        num_gpus=[2, 1, 1, 1, 1],
        slugs=["a", "b", "b", "a", "c"],
    )
    for k in (None, 1, 2, 3):
        out = ranking.rank_columns(cols, "fastest", k=k).order.tolist()
        # equal scores: fewer GPUs first, then slug, then as given (rows 1 and 2 are equal)
        assert out == [3, 1, 2, 4, 0][:k]


def test_a_tiebreak_column_orders_equal_scores_before_the_gpu_count() -> None:
    # serving: between cards whose tokens come as fast, the sooner first token first
    cols = ranking.columns(
        throughput=[2.0, 2.0, 2.0, 1.0],
        value=[1.0] * 4,
        price=[10.0] * 4,
        num_gpus=[1, 2, 1, 1],
        slugs=["a", "b", "c", "d"],
        tiebreak=[300.0, 200.0, 250.0, 0.0],
    )
    for k in (None, 1, 2, 3):
        assert ranking.rank_columns(cols, "fastest", k=k).order.tolist() == [1, 2, 0, 3][:k]


@pytest.mark.parametrize("objective", ["best_value", "cheapest"])
def test_unknown_prices_are_not_ranked_under_a_price_objective(objective: str) -> None:
    cols = ranking.columns(
        throughput=[9.0, 1.0, 2.0, 3.0],
        value=[None, 1.0, 3.0, None],
        price=[None, 20.0, 10.0, None],
        num_gpus=[1, 1, 1, 1],
        slugs=["fast-unpriced", "b", "c", "d"],
    )
    r = ranking.rank_columns(cols, objective)
    assert r.order.tolist() == [2, 1]
    assert r.ranked == 2
    assert ranking.rank_columns(cols, objective, k=1).order.tolist() == [2]
    assert r.score[0] == 0.0 and r.score[2] == 1.0
    # as rank.rank lists them: scored 0, ordered with the rest
    kept = ranking.rank_columns(cols, objective, keep_unpriced=True)
    assert kept.order.tolist() == [2, 1, 3, 0] and kept.ranked == 4  # 'd' < 'fast-...'


def test_balanced_lists_unpriced_rows_after_every_priced_one() -> None:
    cols = ranking.columns(
        throughput=[100.0, 1.0, 2.0],
        value=[None, 1.0, 1.0],
        price=[None, 5.0, 5.0],
        num_gpus=[1, 1, 1],
        slugs=["fast-unpriced", "b", "c"],
    )
    r = ranking.rank_columns(cols, "balanced")
    assert r.order.tolist() == [2, 1, 0]
    assert math.isnan(r.value_score[0]) and r.score[0] == 1.0  # speed alone, yet listed last


def test_latency_misses_and_experimental_software_come_after() -> None:
    cols = ranking.columns(
        throughput=[10.0, 9.0, 8.0, 1.0],
        value=[1.0] * 4,
        price=[1.0] * 4,
        num_gpus=[1] * 4,
        slugs=["a", "b", "c", "d"],
        meets_latency=[False, None, True, True],
        experimental=[False, True, False, False],
    )
    assert ranking.rank_columns(cols, "fastest").order.tolist() == [2, 3, 1, 0]
    assert ranking.rank_columns(cols, "fastest", k=2).order.tolist() == [2, 3]


def test_round6_is_pythons_round_near_halves_too() -> None:
    rng = random.Random(3)
    xs = [rng.random() for _ in range(20_000)]
    # values at or next to a half in the 7th place, where x·10⁶ rounds either way
    for m in range(0, 10_000_000, 99_991):
        half = (m + 0.5) / 1e6
        xs += [half, math.nextafter(half, 0.0), math.nextafter(half, 1.0)]
    got = ranking._round6(np.array(xs))
    assert got.tolist() == [round(x, 6) for x in xs]


def test_empty_columns_rank_to_nothing() -> None:
    cols = ranking.columns([], [], [], [], [])
    r = ranking.rank_columns(cols, "balanced", k=3)
    assert len(r.order) == 0 and r.ranked == 0

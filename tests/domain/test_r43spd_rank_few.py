"""A request's few candidates ranked as lists (ranking.rank_few, issue 21's speed) give what
the columns give (ranking.rank_columns with keep_unpriced, as rank.rank asks): the same order
of the first k, and every row's score, speed score and value score to the last bit, under every
objective, with exact ties, unpriced rows, latency misses, experimental software, rigs priced
without their host, a serving tie-break, and scores a rounding's reach from a half."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from app.domain import ranking

OBJECTIVES = ("fastest", "best_value", "cheapest", "balanced")


def _lists(rng: random.Random, n: int, *, ties: bool, tiebreak: bool) -> Any:
    def pick(values: list[float]) -> float:
        return rng.choice(values) if ties else rng.uniform(0.1, 100.0)

    def price(x: float) -> float | None:
        return None if rng.random() < 0.2 else x

    return (
        [pick([1.0, 2.0, 4.0, 0.0]) for _ in range(n)],
        [price(pick([0.5, 1.0, 3.0])) for _ in range(n)],
        [price(pick([10.0, 20.0, 0.0])) for _ in range(n)],
        [rng.choice([1, 2, 4, 8]) for _ in range(n)],
        [f"gpu-{rng.randrange(6 if ties else 40)}" for _ in range(n)],
        [rng.choice([None, True, False, False]) for _ in range(n)],
        [rng.random() < 0.1 for _ in range(n)],
        [pick([5.0, 7.0]) for _ in range(n)] if tiebreak else None,
        [rng.random() < 0.1 for _ in range(n)] if rng.random() < 0.5 else None,
    )


def _both(lists: Any, objective: str, w: float, k: int | None) -> None:
    t, v, p, g, names, meets, exp, tie, rig = lists
    got = ranking.rank_few(t, v, p, g, names, meets, exp, tie, rig, objective, w, k)
    assert got is not None
    order, score, speed, value = got
    want = ranking.rank_columns(
        ranking.columns(*lists),
        objective,
        w,
        k,
        keep_unpriced=True,
    )
    assert order == want.order.tolist()
    assert score == want.score.tolist()
    assert speed == want.speed_score.tolist()
    np.testing.assert_array_equal(np.array(value), want.value_score)  # NaN where no value


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("ties", [True, False])
def test_the_lists_rank_as_the_columns(objective: str, ties: bool) -> None:
    rng = random.Random(f"{objective}-{ties}")
    for _ in range(150):
        n = rng.randrange(1, ranking.FEW + 1)
        lists = _lists(rng, n, ties=ties, tiebreak=rng.random() < 0.3)
        for k in (None, 1, 3, 10, n):
            _both(lists, objective, rng.choice([0.5, 0.3, 0.8]), k)


def test_balanced_scores_at_a_half_are_the_scalar_formulas() -> None:
    # values whose balanced score lands within a rounding of a half at the 6th place: the
    # columns score those rows again with balanced_py (their _exact_balanced), the lists always
    rng = random.Random(7)
    hits = 0
    for _ in range(3000):
        base = rng.uniform(0.2, 1.0)
        half = (math.floor(base * 1e6) + 0.5) / 1e6
        speeds = [1.0, half**2, rng.uniform(0.1, 1.0)]
        lists: Any = (
            speeds,
            [1.0, 1.0, rng.uniform(0.1, 1.0)],
            [1.0, 2.0, 3.0],
            [1, 1, 2],
            ["a", "b", "c"],
            [None, None, None],
            [False, False, False],
            None,
            None,
        )
        cols = ranking.columns(*lists)
        raw = ranking.balanced(cols.throughput / 1.0, cols.value / 1.0, 0.5)
        y = raw * 1e6
        hits += bool(np.any(np.abs(y - np.floor(y) - 0.5) < 1e-6))
        _both(lists, "balanced", 0.5, 2)
    assert hits > 100  # the near-half branch was exercised


def test_figures_the_lists_cannot_promise_are_left_to_the_columns() -> None:
    base: Any = ([1.0, 2.0], [1.0, None], [3.0, None], [1, 1], ["a", "b"], [None, None])
    rest: Any = ([False, False], None, None, "balanced")
    assert ranking.rank_few(*base, *rest) is not None
    nan_speed: Any = ([1.0, math.nan], *base[1:])
    assert ranking.rank_few(*nan_speed, *rest) is None
    inf_value: Any = (base[0], [math.inf, None], *base[2:])
    assert ranking.rank_few(*inf_value, *rest) is None
    nan_tie: Any = (*base, [False, False], [1.0, math.nan], None, "balanced")
    assert ranking.rank_few(*nan_tie) is None

"""r32 new-user walk: `deadline.may_miss` changed with `limit` (ResNet-50 training within
24 h: more at limit 10 than at 8), as it counted only the rows shown. It counts every ranked
configuration that meets the deadline on its estimate but not at its band's slow end, so it is
one number whatever rows are asked for; with every configuration shown it is the number of
rows that warn so."""

from __future__ import annotations

from typing import Any

import pytest

from app.recommend import schemas as s
from app.recommend import service


def _answer(shipped: Any, limit: int) -> s.RecommendationResponse:
    gpus, offers, rules = shipped
    body = {
        "workload": {"preset": "resnet-50", "task": "training"},
        "constraints": {"max_hours": 24},
        "limit": limit,
    }
    return service.recommend(
        s.RecommendationRequest.model_validate(body), gpus, rules, offers=offers
    )


@pytest.fixture(scope="module")
def every(shipped_catalog: Any) -> s.RecommendationResponse:
    return _answer(shipped_catalog, 200)


def test_may_miss_counts_every_ranked_configuration(every: s.RecommendationResponse) -> None:
    assert every.deadline is not None and every.counts is not None
    assert every.counts.ranked == len(every.recommendations)
    warned = [r for r in every.recommendations if any("may miss the" in w for w in r.warnings)]
    assert warned  # the question has rows at risk: the test can fail
    assert every.deadline.may_miss == len(warned)
    assert f"{len(warned)} of the {every.counts.ranked} ranked" in every.deadline.message


@pytest.mark.parametrize("limit", [3, 8, 10])
def test_may_miss_does_not_depend_on_the_rows_shown(
    shipped_catalog: Any, every: s.RecommendationResponse, limit: int
) -> None:
    few = _answer(shipped_catalog, limit)
    assert few.deadline is not None and every.deadline is not None
    assert len(few.recommendations) == limit
    assert few.deadline.may_miss == every.deadline.may_miss
    shown = sum(any("may miss the" in w for w in r.warnings) for r in few.recommendations)
    if not shown:  # the count is of configurations below the rows shown: said so
        assert "none of them a row shown" in few.deadline.message

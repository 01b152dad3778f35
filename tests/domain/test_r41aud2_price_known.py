"""A row is priced the way its question acquires: asked to buy, a card only rented has no
price (README: GPUs without a price stay in 'balanced' answers with ``price_known: false``),
and asked to rent, a card only sold has none."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import rank
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import RESNET50, RTX4090, RULES

# the fixture's own prices, one way in taken away
RENTED_ONLY = replace(RTX4090, slug="rented-only", street_price=None, launch_price_usd=None)
SOLD_ONLY = replace(RTX4090, slug="sold-only", cloud_price=None)
WORK = WorkloadSpec(model=RESNET50, task="inference", batch_size=8, precision="fp16")


def _ctx(acquisition: str) -> ev.Context:
    return ev.Context(
        work=WORK, rules=RULES, limits=ev.Limits(objective="balanced", acquisition=acquisition)
    )


@pytest.mark.parametrize(
    ("gpu", "acquisition", "known"),
    [
        (RENTED_ONLY, "buy", False),
        (RENTED_ONLY, "rent", True),
        (RENTED_ONLY, "either", True),
        (SOLD_ONLY, "rent", False),
        (SOLD_ONLY, "buy", True),
        (SOLD_ONLY, "either", True),
    ],
)
def test_a_row_is_priced_only_the_way_it_is_asked_for(
    gpu: object, acquisition: str, known: bool
) -> None:
    ctx = _ctx(acquisition)
    config = ev.Configuration(gpu, 1)  # type: ignore[arg-type]
    res = ev.evaluate(config, ctx)
    assert res.ok, res.exclusion
    assert rank.price_known(rank.Candidate.of(res)) is known
    assert ev.price_known(config, ctx) is known
    # the columns a balanced answer counts its unpriced cards from say the same
    seen, _ = ev.price_columns([config], [config.gpu], [1], ctx)
    assert seen == [known]


def test_the_words_name_the_price_the_question_lacks() -> None:
    assert costs.NO_PRICE_WORDS["buy"] == "No purchase price known"
    assert not costs.priced_as_asked("buy", None, 1.2)
    assert costs.priced_as_asked("either", None, 1.2)

"""A budget for the way not asked: an hourly cap asked to buy, a purchase cap asked to rent.

Neither price limits the other way in, yet the cap was handed to the engine, which then
needed a price of every card: asked to buy ResNet-50's training with max_hourly_usd 1, the 37
cards with no purchase price went from ranked (price_known false, as any balanced answer
keeps them) to excluded ("no purchase price known, and the objective or budget needs one"),
the answer saying nothing of the cap. Now the other way's cap is dropped and said."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from tests.support import recommend_with

RESNET = {"preset": "resnet-50"}


def _recommend(catalog: Any, **cons: Any) -> s.RecommendationResponse:
    body = {"workload": RESNET, "constraints": cons, "limit": 1}
    return recommend_with(catalog, body)


def test_an_hourly_cap_asked_to_buy_leaves_out_no_card_and_is_said(shipped_catalog: Any) -> None:
    plain = _recommend(shipped_catalog, acquisition="buy")
    capped = _recommend(shipped_catalog, acquisition="buy", max_hourly_usd=1.0)
    assert capped.counts == plain.counts and capped.counts is not None
    assert capped.counts.unpriced > 0  # the cards with no purchase price stay ranked
    assert (
        "constraints.max_hourly_usd not applied: acquisition 'buy' ranks buying, so a rental "
        "price limits nothing here (acquisition 'either' weighs both)"
    ) in capped.warnings


def test_a_purchase_cap_asked_to_rent_leaves_out_no_card(shipped_catalog: Any) -> None:
    plain = _recommend(shipped_catalog, acquisition="rent")
    capped = _recommend(shipped_catalog, acquisition="rent", max_purchase_usd=100.0)
    assert capped.counts == plain.counts
    assert any(w.startswith("constraints.max_purchase_usd not applied") for w in capped.warnings)


def test_under_either_both_caps_still_hold(shipped_catalog: Any) -> None:
    capped = _recommend(shipped_catalog, acquisition="either", max_purchase_usd=100.0)
    assert capped.counts is not None
    assert capped.counts.unpriced == 0 and capped.counts.excluded > 1
    assert not any("not applied" in w for w in capped.warnings)
    assert s.ConstraintsIn(max_hourly_usd=2.0).applied_caps() == (None, 2.0)
    assert s.ConstraintsIn(acquisition="rent", max_purchase_usd=9.0).applied_caps() == (None, None)

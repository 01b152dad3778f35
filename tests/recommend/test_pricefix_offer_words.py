"""A row's offer lines and verdict in words: a way in over the budget is shown with its price
and said not to be offered; a purchase price's caveat is said where the price is."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from app.domain import cost as costs
from app.recommend import rows

NODE = costs.CloudOffer(
    "fluidstack", "H100_PCIE_80GB::4", 4, 11.56, None, "on-demand", "2026-11-30", "skypilot"
)
CARD = costs.PurchaseOffer(29_200.0, "market", "2026-09", "poet")
WHY = "buying the 4 cards costs $116,800, over the $5,000 purchase budget"


def _pricing(**kw: object) -> costs.Pricing:
    rent = costs.OfferChoice(NODE, 1, 4, NODE.usd_per_hour, False)
    usage = costs.Usage(hours_per_week=100, years=3, resale_fraction=0.4)
    return costs.Pricing(rent=rent, buy=CARD, num_gpus=4, usage=usage, **kw)  # type: ignore[arg-type]


def _cost() -> costs.CostEstimate:
    return costs.CostEstimate(
        purchase_usd=116_800.0, hourly_usd=11.56, energy_usd_per_hour=0.14, power_w=1400.0,
        time_to_finish_h=None, rent_to_finish_usd=None, energy_to_finish_usd=None,
        buy_to_finish_usd=None, break_even_hours=None, samples_per_usd_rent=None,
        samples_per_usd_buy=None, horizon_hours=15_600.0,
    )  # fmt: skip


def _verdict(parts: dict[str, object]) -> dict[str, Any]:
    return cast(dict[str, Any], parts["verdict"])


def test_a_purchase_over_the_budget_reads_as_not_offered_and_the_verdict_rents() -> None:
    over = _pricing(left_out="buy", left_out_why=WHY)
    parts, _, buy = rows.priced_parts(over, _cost())
    verdict = _verdict(parts)
    assert verdict["cheaper"] == "rent" and verdict["break_even_hours"] is None
    # then the on-demand caveat of 100 h a week for 3 years (cost.verdict_caveats)
    assert verdict["note"].startswith(f"renting, the way within the budget: {WHY}; the rent is")
    assert verdict["buy_total_usd"] < verdict["rent_total_usd"]  # shown, as the note explains
    assert buy is not None and buy["usd"] == 116_800.0  # the price stays visible
    (line,) = [x for x in rows.offer_lines(over) if x.startswith("Buy:")]
    assert line == (
        "Buy: 4× $29,200 (market (new or used listings) price, 2026-09): not offered, " + WHY + "."
    )
    (rented,) = [x for x in rows.offer_lines(over) if x.startswith("Rent ")]
    assert "not offered" not in rented


def test_within_the_budget_the_verdict_and_lines_are_as_before() -> None:
    parts, _, _ = rows.priced_parts(_pricing(), _cost())
    verdict = _verdict(parts)
    # only the on-demand caveat a 100-h-a-week, 3-year usage carries (cost.verdict_caveats)
    assert verdict["cheaper"] == "buy" and verdict["note"].startswith("the rent is the on-demand")
    assert verdict["break_even_hours"] is not None
    (line,) = [x for x in rows.offer_lines(_pricing()) if x.startswith("Buy:")]
    assert line == "Buy: 4× $29,200 (market (new or used listings) price, 2026-09)."


def test_a_rental_over_its_budget_reads_as_not_offered() -> None:
    why = "renting costs $11.56/h, over the $5.00/h budget"
    over = _pricing(left_out="rent", left_out_why=why)
    (rented,) = [x for x in rows.offer_lines(over) if x.startswith("Rent ")]
    assert rented.endswith(f"as of 2026-11-30: not offered, {why}.")
    parts, _, _ = rows.priced_parts(over, _cost())
    assert _verdict(parts)["cheaper"] == "buy"
    assert _verdict(parts)["note"] == f"buying, the way within the budget: {why}"


def test_a_single_marketplace_listing_is_named_as_such_where_it_is_paid() -> None:
    """New old stock at one Newegg Marketplace asking price had read as a "new street price"."""
    nos = costs.PurchaseOffer(
        1095.0, "new", "2026-03-06", "svi",
        note="new old stock: one Newegg Marketplace (third-party seller) asking price",
    )  # fmt: skip
    one = costs.Pricing(rent=None, buy=nos, num_gpus=1, usage=costs.Usage())
    (line,) = [x for x in rows.offer_lines(one) if x.startswith("Buy:")]
    assert line == (
        "Buy: 1× $1,095 (new price, 2026-03-06; new old stock: one Newegg Marketplace "
        "(third-party seller) asking price)."
    )
    plain = dataclasses.replace(nos, note=None)
    (line,) = [x for x in rows.offer_lines(dataclasses.replace(one, buy=plain)) if "Buy" in x]
    assert line == "Buy: 1× $1,095 (new street price, 2026-03-06)."

"""Purchase basis "auto" and a market price below an as-current new one (cost.choose_purchase):
a market figure is the cheapest listings of the card, new or used, so it is what a buyer pays."""

from __future__ import annotations

from app.domain import cost


def _p(usd: float, condition: str, as_of: str) -> cost.PurchaseOffer:
    return cost.PurchaseOffer(usd, condition, as_of, f"{condition} {as_of}")


def test_auto_pays_a_same_month_market_price_below_the_new_one_and_says_so() -> None:
    # GPU Poet, September 2026: RTX 5090 "New on Amazon" $5,258, best deal $4,795
    new, market = _p(5258.0, "new", "2026-09"), _p(4795.0, "market", "2026-09")
    paid = cost.choose_purchase([new, market])
    assert paid is not None
    assert (paid.condition, paid.usd, paid.as_of) == ("market", 4795.0, "2026-09")
    assert paid.note is not None and "$5,258" in paid.note and "2026-09" in paid.note
    # asked by name, each basis is still its own
    assert cost.choose_purchase([new, market], "new") is new
    assert cost.choose_purchase([new, market], "used") is market


def test_auto_keeps_the_new_price_when_it_is_the_lower_or_the_market_one_is_old() -> None:
    new = _p(449.0, "new", "2026-09")
    assert cost.choose_purchase([new, _p(600.0, "market", "2026-09")]) is new
    # a market price more than six months older than the new one is no longer what it costs
    assert cost.choose_purchase([new, _p(300.0, "market", "2025-12")]) is new


def test_a_cheaper_used_price_does_not_replace_a_current_new_one() -> None:
    # a second-hand card is another good: basis 'used' asks for it by name
    new, used = _p(449.0, "new", "2026-09"), _p(300.0, "used", "2026-09")
    assert cost.choose_purchase([new, used]) is new
    assert cost.choose_purchase([new, used], "used") is used


def test_the_buy_price_a_page_shows_is_the_market_one() -> None:
    new, market = _p(875.0, "new", "2026-09"), _p(600.0, "market", "2026-09")
    shown = cost.buy_price([new, market])
    assert shown is not None and shown.offer is not None
    assert (shown.offer.condition, shown.offer.usd) == ("market", 600.0)

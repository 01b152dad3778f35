"""purchase_basis 'used' never pays a used asking price above the card's current new price."""

from __future__ import annotations

from app.domain.cost import (
    GpuOffers,
    PurchaseOffer,
    RentalPolicy,
    Usage,
    choose_purchase,
    price_configuration,
)

# the RTX 4060 Ti 16GB's prices in data/offers/purchase.yaml: a new street price (March 2026)
# and one used eBay asking price above it (August 2026)
NEW = PurchaseOffer(449.0, "new", "2026-03-31", "compute-market")
LISTING = PurchaseOffer(599.99, "used", "2026-08-11", "ebay", note="one listing")


def test_a_used_price_above_the_new_one_gives_way_to_the_new_price_and_says_so() -> None:
    paid = choose_purchase([NEW, LISTING], "used")
    assert paid is not None
    assert (paid.condition, paid.usd, paid.as_of, paid.source) == (
        "new", 449.0, "2026-03-31", "compute-market",
    )  # fmt: skip
    assert paid.note == "new: no used price below new; used: $599.99 on 2026-08-11"
    # the row's pricing carries it: the purchase a used question pays is the new one
    pricing = price_configuration(GpuOffers((), (NEW, LISTING)), 1, RentalPolicy(), Usage(), "used")
    assert pricing.buy == paid and pricing.purchase_usd == 449.0


def test_a_used_price_below_new_is_what_used_pays() -> None:
    cheap = PurchaseOffer(380.0, "used", "2026-08-11", "ebay")
    assert choose_purchase([NEW, cheap], "used") is cheap
    market = PurchaseOffer(420.0, "market", "2026-08", "poet")
    assert choose_purchase([NEW, market], "used") is market


def test_a_new_price_long_before_the_used_one_is_no_current_price_to_fall_back_on() -> None:
    # more than NEW_PRICE_LEAD_MONTHS older, as 'auto' reads it: prices may have moved since
    old_new = PurchaseOffer(449.0, "new", "2025-06", "shop")
    assert choose_purchase([old_new, LISTING], "used") is LISTING


def test_a_new_price_keeps_its_own_caveat_beside_the_reason() -> None:
    nos = PurchaseOffer(500.0, "new", "2026-07", "newegg", note="one marketplace listing")
    paid = choose_purchase([nos, LISTING], "used")
    assert paid is not None and paid.usd == 500.0
    assert paid.note is not None and paid.note.endswith("; one marketplace listing")


def test_auto_and_the_other_bases_are_unchanged() -> None:
    assert choose_purchase([NEW, LISTING]) is NEW
    assert choose_purchase([NEW, LISTING], "new") is NEW
    assert choose_purchase([LISTING], "used") is LISTING

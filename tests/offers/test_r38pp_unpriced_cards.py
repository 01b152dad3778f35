"""Issue 23's purchase-price gap after the seventh search (2026-12-07), read from the shipped
data the way `gpu-advisor db seed` reads it: no dated, sourced price was found for the Arc A770
16 GB or the M1/M1 Pro/M1 Max/M1 Ultra/M2 Max/M3/M3 Max machines, so `purchase_basis: auto`
pays none (never a stale launch price, never an estimate); the GTX 1080 Ti and RTX 2080 Ti keep
their one new-old-stock listing and have no used price. A sourced price added later must change
these assertions together with data/offers/README.md, which names what was searched."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from app.catalog.loader import read_catalog
from app.domain.cost import PurchaseOffer, buy_price, choose_purchase
from tests.support import seeded_purchase_offers

DATA = Path(__file__).resolve().parents[2] / "data"
CATALOG = {e.slug: e for e in read_catalog(DATA)}
# a fixed day, so the three-year rule reads the same whenever the suite runs
TODAY = date(2026, 12, 15)
OFFERS = seeded_purchase_offers(list(CATALOG.values()), DATA, TODAY)

UNPRICED = (
    "arc-a770-16gb",
    "apple-m1",
    "apple-m1-pro",
    "apple-m1-max",
    "apple-m1-ultra",
    "apple-m2-max",
    "apple-m3",
    "apple-m3-max",
)
# new old stock, SiliconValueIndex's Newegg run of 2026-03-06 (data/offers/purchase.yaml)
NEW_ONLY = {"gtx-1080-ti": 399.0, "rtx-2080-ti": 695.0}


def _offers(slug: str) -> list[PurchaseOffer]:
    return list(OFFERS.get(slug, ()))


@pytest.mark.parametrize("slug", UNPRICED)
def test_the_card_is_in_the_catalog_and_auto_pays_no_price_for_it(slug: str) -> None:
    assert slug in CATALOG
    offers = _offers(slug)
    # no new, used or market row: only a launch price (or nothing) can be there
    assert {o.condition for o in offers} <= {"launch"}, offers
    assert choose_purchase(offers, "auto") is None
    for basis in ("new", "used"):
        assert choose_purchase(offers, basis) is None, basis


def test_the_a770s_only_price_is_its_2022_launch_which_is_stale_and_never_paid() -> None:
    offers = _offers("arc-a770-16gb")
    assert [(o.condition, o.usd) for o in offers] == [("launch", 349.0)]
    assert offers[0].as_of.startswith("2022-10") and offers[0].stale
    bp = buy_price(offers)
    # the page says why there is none: the launch price is there, too old to stand for one
    assert bp is not None and bp.offer is None and bp.stale_launch == offers[0]


@pytest.mark.parametrize(("slug", "usd"), sorted(NEW_ONLY.items()))
def test_the_old_geforce_card_is_paid_at_its_dated_new_listing_never_a_used_price(
    slug: str, usd: float
) -> None:
    offers = _offers(slug)
    assert not [o for o in offers if o.condition in ("used", "market")], offers
    pick = choose_purchase(offers, "auto")
    assert pick is not None
    assert (pick.condition, pick.usd, pick.as_of) == ("new", usd, "2026-03-06")
    # the buyer is told it is one seller's new old stock, not a street price
    assert pick.note is not None and "new old stock" in pick.note
    assert "siliconvalueindex" in pick.source.lower()
    assert choose_purchase(offers, "used") is None

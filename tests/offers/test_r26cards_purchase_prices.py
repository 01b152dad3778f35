"""The six consumer cards added without a purchase price (rx-7800-xt, rx-7700-xt, rx-9070,
rx-9060-xt-16gb, rtx-3050-8gb, rtx-5060) now carry dated, sourced prices, read from the shipped
data the way `gpu-advisor db seed` reads it, and `purchase_basis: auto` pays a current one or
none (a launch price more than three years old is never what it pays)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from app.catalog.loader import read_catalog
from app.domain.cost import PurchaseOffer, choose_purchase, launch_is_stale
from tests.support import seeded_purchase_offers

DATA = Path(__file__).resolve().parents[2] / "data"
CATALOG = {e.slug: e for e in read_catalog(DATA)}
# a fixed day, so the three-year rule reads the same whenever the suite runs
TODAY = date(2026, 12, 15)
OFFERS = seeded_purchase_offers(list(CATALOG.values()), DATA, TODAY)

CARDS = ("rx-7800-xt", "rx-7700-xt", "rx-9070", "rx-9060-xt-16gb", "rtx-3050-8gb", "rtx-5060")


def _offers(slug: str) -> list[PurchaseOffer]:
    return list(OFFERS.get(slug, ()))


@pytest.mark.parametrize("slug", CARDS)
def test_the_card_has_a_launch_price_dated_by_its_announcement_month(slug: str) -> None:
    """A launch price whose source carries no date would be dated by the bare release year,
    which reads as December: a September 2023 price would look current until 2027."""
    entry = CATALOG[slug]
    assert entry.launch_price_usd is not None and entry.launch_price_usd > 0
    source_id = entry.field_sources.get("launch_price_usd")
    ref = next(s for s in entry.sources if s.id == source_id)
    assert ref.url and ref.url.startswith("https://") and ref.title.strip()
    launch = [o for o in _offers(slug) if o.condition == "launch"]
    assert len(launch) == 1
    assert launch[0].usd == entry.launch_price_usd
    assert launch[0].as_of[:4] == str(entry.release_year)
    assert len(launch[0].as_of) >= 7, launch[0].as_of  # year and month, not the bare year
    assert ref.url in launch[0].source


@pytest.mark.parametrize("slug", CARDS)
def test_every_price_of_the_card_is_dated_and_sourced(slug: str) -> None:
    offers = _offers(slug)
    assert offers
    for o in offers:
        assert o.usd > 0 and o.as_of[:2] == "20", o
        assert "https://" in o.source, o


@pytest.mark.parametrize("slug", [s for s in CARDS if s != "rtx-3050-8gb"])
def test_auto_pays_a_current_sourced_price(slug: str) -> None:
    chosen = choose_purchase(_offers(slug), "auto")
    assert chosen is not None and not chosen.stale
    assert "https://" in chosen.source
    if chosen.condition == "launch":
        assert not launch_is_stale(chosen.as_of, TODAY)
    else:  # a 2026 market (GPU Poet best deal) price, not the launch price
        assert chosen.as_of.startswith("2026-")


def test_the_2023_cards_launch_prices_are_too_old_and_a_market_price_stands_in() -> None:
    for slug in ("rx-7800-xt", "rx-7700-xt"):
        offers = _offers(slug)
        assert [o.stale for o in offers if o.condition == "launch"] == [True]
        chosen = choose_purchase(offers, "auto")
        assert chosen is not None and chosen.condition == "market"
        assert chosen.usd != CATALOG[slug].launch_price_usd


def test_the_rtx_3050_has_only_a_stale_launch_price_and_auto_pays_none() -> None:
    offers = _offers("rtx-3050-8gb")
    assert [o.condition for o in offers] == ["launch"] and offers[0].stale
    assert choose_purchase(offers, "auto") is None
    assert choose_purchase(offers, "launch") is not None


def test_the_rtx_5060_new_price_gives_way_to_the_cheaper_market_price_of_its_month() -> None:
    offers = _offers("rtx-5060")
    new = [o for o in offers if o.condition == "new"]
    market = [o for o in offers if o.condition == "market"]
    assert len(new) == 1 and len(market) == 1 and new[0].as_of == market[0].as_of
    chosen = choose_purchase(offers, "auto")
    assert chosen is not None and chosen.condition == "market"
    assert chosen.usd == min(new[0].usd, market[0].usd)


def test_rx_7900_xt_int8_is_its_fp16_wmma_rate_like_the_xtx() -> None:
    """RDNA 3: AMD's GPUOpen table gives I8 and FP16 the same 512 ops per clock per CU."""
    for slug in ("rx-7900-xt", "rx-7900-xtx"):
        entry = CATALOG[slug]
        assert entry.int8_tops is not None and entry.int8_tops == entry.fp16_tflops
        assert entry.field_sources.get("int8_tops") == "gpuopen-rdna4-matrix"

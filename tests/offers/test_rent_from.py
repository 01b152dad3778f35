"""A GPU's "from" price: the lowest launchable on-demand offer per GPU-hour, how many
launchable offers and the newest date among them; a quoted price never counts."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.domain.cost import CloudOffer
from app.domain.rent_from import inconsistency, rent_from
from app.offers import repository, service
from app.offers.models import CloudOfferRow
from app.offers.repository import OfferFilter


def offer(
    usd: float,
    gpus: int = 1,
    *,
    tier: str = "on-demand",
    spot: float | None = None,
    as_of: str = "2026-11-30",
    quoted: bool = False,
    provider: str = "cloud",
) -> CloudOffer:
    return CloudOffer(
        provider=provider,
        instance_type=f"{gpus}x-{usd}-{tier}",
        gpus=gpus,
        usd_per_hour=usd,
        spot_usd_per_hour=spot,
        tier=tier,
        as_of=as_of,
        source="test",
        quoted=quoted,
    )


# ---------------------------------------------------------------------------- the rule


def test_the_lowest_price_per_gpu_hour_wins_not_the_lowest_instance_price() -> None:
    r = rent_from([offer(3.0, 1, provider="one"), offer(16.0, 8, provider="eight")])
    assert r is not None
    assert r.usd_per_gpu_hour == 2.0 and r.provider == "eight" and r.offers == 2


def test_a_quoted_price_is_never_the_from_price_nor_counted() -> None:
    r = rent_from([offer(0.5, quoted=True, as_of="2026-12-01"), offer(2.0, as_of="2026-11-01")])
    assert r is not None
    assert r.usd_per_gpu_hour == 2.0
    assert r.offers == 1 and r.as_of == "2026-11-01"  # the quote's newer date does not count
    assert rent_from([offer(0.5, quoted=True)]) is None


def test_as_of_is_the_newest_launchable_offer() -> None:
    r = rent_from([offer(1.0, as_of="2026-07"), offer(2.0, as_of="2026-11-30")])
    assert r is not None and r.as_of == "2026-11-30"


def test_spot_is_reported_apart_and_only_when_cheaper() -> None:
    r = rent_from([offer(2.0, spot=0.8), offer(1.2, 2, tier="spot")])
    assert r is not None
    assert r.usd_per_gpu_hour == 2.0  # a spot-tier row is not an on-demand price
    assert r.spot_usd_per_gpu_hour == 0.6 and r.offers == 2
    dearer = rent_from([offer(2.0, spot=1.995), offer(6.0, 2, tier="spot")])
    assert dearer is not None and dearer.spot_usd_per_gpu_hour is None
    only_spot = rent_from([offer(1.0, tier="spot")])
    assert only_spot is not None
    assert only_spot.usd_per_gpu_hour is None and only_spot.spot_usd_per_gpu_hour == 1.0


def test_an_offer_whose_spot_price_is_above_its_on_demand_price_is_not_used() -> None:
    # RunPod's L40S in the SkyPilot snapshot: $0.43 on demand, $0.86 spot (swapped)
    swapped = offer(0.43, spot=0.86, provider="runpod")
    assert inconsistency(0.43, 0.86) is not None and "0.86" in (inconsistency(0.43, 0.86) or "")
    assert inconsistency(0.86, 0.43) is None and inconsistency(0.86, None) is None
    assert inconsistency(0.86, 0.86) is None  # a spot-only row carries its price in both
    r = rent_from([swapped, offer(0.81, provider="other")])
    assert r is not None
    assert (r.usd_per_gpu_hour, r.provider, r.offers) == (0.81, "other", 1)
    assert r.spot_usd_per_gpu_hour is None  # its spot price is no more usable than its other
    assert rent_from([swapped]) is None


def test_the_from_price_names_its_instance() -> None:
    r = rent_from([offer(0.52, 2, tier="community"), offer(0.30, 1)])
    assert r is not None
    assert (r.usd_per_gpu_hour, r.instance_gpus, r.tier) == (0.26, 2, "community")
    assert r.instance_type == "2x-0.52-community"
    spot_only = rent_from([offer(1.0, tier="spot")])
    assert spot_only is not None and spot_only.instance_gpus is None and spot_only.tier is None


# ---------------------------------------------------------------------------- shipped data


@pytest.fixture(scope="module")
def session(read_settings: Settings) -> Iterator[Session]:
    engine = make_engine(read_settings.database_url)
    with session_scope(make_session_factory(engine)) as s:
        yield s
    engine.dispose()


def _launchable(session: Session, slug: str) -> list[CloudOfferRow]:
    # The provenance rule read off the rows (data/offers/README.md): a seeded offer without
    # the provider's accelerator name is a quoted price; a spot price above the on-demand one
    # makes the row inconsistent, neither price used.
    rows = repository.list_cloud(session, OfferFilter(gpus=[slug]))
    return [
        r
        for r in rows
        if not (r.origin == "seed" and r.accelerator is None)
        and not (r.spot_usd_per_hour is not None and r.spot_usd_per_hour > r.usd_per_hour)
    ]


def test_every_gpu_rents_from_its_cheapest_launchable_on_demand_offer(session: Session) -> None:
    prices = service.rent_from_by_gpu(session)
    slugs = {r.gpu_slug for r in repository.list_cloud(session, OfferFilter())}
    priced = {s for s in slugs if _launchable(session, s)}
    assert set(prices) == priced and len(priced) >= 30  # ~38 GPUs with a launchable offer
    for slug in sorted(priced):
        rows = _launchable(session, slug)
        p = prices[slug]
        on_demand = [r.usd_per_hour / r.gpus for r in rows if r.tier != "spot"]
        assert p.usd_per_gpu_hour == pytest.approx(min(on_demand)), slug
        assert p.offers == len(rows), slug
        assert p.as_of == max(r.as_of for r in rows), slug


def test_h100_rents_from_its_offers_not_the_quoted_price(session: Session) -> None:
    h100 = service.rent_from_by_gpu(session)["h100-sxm"]
    every = repository.list_cloud(session, OfferFilter(gpus=["h100-sxm"]))
    quoted = [r for r in every if r.accelerator is None and r.origin == "seed"]
    assert quoted and h100.offers == len(every) - len(quoted)
    assert h100.usd_per_gpu_hour is not None
    assert h100.usd_per_gpu_hour < min(r.usd_per_hour for r in quoted)


def test_mi300x_has_offers_though_the_catalog_has_no_cloud_price(session: Session) -> None:
    mi300x = service.rent_from_by_gpu(session)["mi300x"]
    assert mi300x.offers == len(_launchable(session, "mi300x")) >= 1
    assert mi300x.usd_per_gpu_hour is not None


def test_the_prices_are_built_once_and_follow_an_offer_change(settings: Settings) -> None:
    engine = make_engine(settings.database_url)
    try:
        with session_scope(make_session_factory(engine)) as s:
            first = service.rent_from_by_gpu(s)
            assert service.rent_from_by_gpu(s) is first
            cheapest = first["h100-sxm"].usd_per_gpu_hour
            assert cheapest is not None
            values = {
                "gpu_slug": "h100-sxm",
                "gpus": 1,
                "spot_usd_per_hour": None,
                "tier": "on-demand",
                "regions": 1,
                "as_of": "2026-12-01",
                "source": "test",
            }
            # a quoted price (seeded, no accelerator name) changes nothing, cheap as it is
            repository.add_cloud(
                s,
                {
                    **values,
                    "provider": "blog",
                    "instance_type": "1x quoted",
                    "accelerator": None,
                    "usd_per_hour": cheapest / 4,
                    "origin": "seed",
                },
            )
            repository.flush(s)
            after_quote = service.rent_from_by_gpu(s)["h100-sxm"]
            assert after_quote.usd_per_gpu_hour == cheapest
            assert after_quote.offers == first["h100-sxm"].offers
            # an imported instance is launchable: it is the new "from" price and the newest
            repository.add_cloud(
                s,
                {
                    **values,
                    "provider": "labcloud",
                    "instance_type": "lab-1x",
                    "accelerator": "H100",
                    "usd_per_hour": cheapest / 2,
                    "origin": "import",
                },
            )
            repository.flush(s)
            after = service.rent_from_by_gpu(s)["h100-sxm"]
            assert after.usd_per_gpu_hour == pytest.approx(cheapest / 2)
            assert after.provider == "labcloud" and after.as_of == "2026-12-01"
            assert after.offers == first["h100-sxm"].offers + 1
    finally:
        engine.dispose()


def test_the_api_gives_one_gpu_its_from_price(read_client: TestClient) -> None:
    body = read_client.get("/api/v1/gpus/h100-sxm").json()
    rent = body["rent_from"]
    # the detail lists no quoted price among its offers (issue 23: it is `seen_price`)
    launchable = [o for o in body["offers"] if o["kind"] == "cloud"]
    assert all(o["launchable"] for o in launchable)
    assert rent["offers"] == len(launchable)
    on_demand = [o["usd_per_gpu_hour"] for o in launchable if o["tier"] != "spot"]
    assert rent["usd_per_gpu_hour"] == pytest.approx(min(on_demand), abs=1e-4)
    assert rent["usd_per_gpu_hour"] < body["cloud_price"]["usd_per_hour"]  # not the quote
    assert read_client.get("/api/v1/gpus/mi300x").json()["rent_from"]["offers"] >= 1


def test_the_buy_prices_are_built_once_and_follow_a_purchase_offer(settings: Settings) -> None:
    engine = make_engine(settings.database_url)
    try:
        with session_scope(make_session_factory(engine)) as s:
            rent, buys = service.catalog_prices(s)
            assert service.buy_prices_by_gpu(s) is buys  # kept with the offers' snapshot
            assert service.rent_from_by_gpu(s) is rent
            old = buys["rtx-2060-super"]
            assert old.offer is None and old.stale_launch is not None  # no current price
            # a used price comes in: the 2060 Super now has one, what a recommendation pays
            repository.add_purchase(
                s,
                {
                    "gpu_slug": "rtx-2060-super",
                    "condition": "used",
                    "usd": 350.0,
                    "as_of": "2026-12-01",
                    "source": "test",
                    "origin": "import",
                },
            )
            repository.flush(s)
            now = service.buy_prices_by_gpu(s)["rtx-2060-super"]
            assert now.offer is not None
            assert (now.offer.usd, now.offer.condition) == (350.0, "used")
            assert now == service.buy_price(s, "rtx-2060-super")
    finally:
        engine.dispose()


def test_the_api_names_the_instance_behind_the_from_price(read_client: TestClient) -> None:
    body = read_client.get("/api/v1/gpus/a10").json()
    rent = body["rent_from"]
    cheapest = [
        o
        for o in body["offers"]
        if o["kind"] == "cloud"
        and o["instance_type"] == rent["instance_type"]
        and o["provider"] == rent["provider"]
    ]
    assert len(cheapest) == 1, rent
    (o,) = cheapest
    assert (rent["instance_gpus"], rent["tier"]) == (o["gpus"], o["tier"])
    assert rent["usd_per_gpu_hour"] == pytest.approx(o["usd_per_gpu_hour"], abs=1e-4)


def test_the_pages_say_the_from_prices_instance_in_words(read_client: TestClient) -> None:
    rent = read_client.get("/api/v1/gpus/a10").json()["rent_from"]
    tier = rent["tier"] if rent["tier"] == "on-demand" else f"{rent['tier']} tier"
    words = f"{rent['instance_gpus']}-GPU instance, {tier}"
    for path in ("/gpus/a10", "/gpus?q=a10", "/compare?slugs=a10,l4"):
        html = read_client.get(path).text
        text = " ".join(re.sub(r"<[^>]+>", "", html).split())
        assert words in text, path

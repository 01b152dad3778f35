"""GET /api/v1/gpus/compare compares on what the GPUs rent and buy at, as the compare page
does (issue 23): the lowest launchable offer, never the catalog's quoted price, which each
item still carries beside (`cloud_price`); GET /api/v1/offers says which offers launch."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

SLUGS = "rtx-4090,rtx-3090,rtx-5090"


@pytest.fixture(scope="module")
def body(read_client: TestClient) -> dict:
    r = read_client.get(f"/api/v1/gpus/compare?slugs={SLUGS}")
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_prices_compared_are_the_offers_not_the_quote(body: dict) -> None:
    assert "rent_from.usd_per_gpu_hour" in body["fields"] and "buy_at.usd" in body["fields"]
    assert "cloud_price_usd_per_hour" not in body["fields"]
    base = body["gpus"][0]["gpu"]
    for row in body["gpus"]:
        gpu, ratios = row["gpu"], row["ratios"]
        # the old keys stay as aliases of the offers' ratios, never the quote's
        assert ratios["cloud_price_usd_per_hour"] == ratios["rent_from.usd_per_gpu_hour"]
        assert ratios["purchase_usd"] == ratios["buy_at.usd"]
        rent = gpu["rent_from"]
        if rent is None or rent["usd_per_gpu_hour"] is None:
            assert ratios["rent_from.usd_per_gpu_hour"] is None
            continue
        want = rent["usd_per_gpu_hour"] / base["rent_from"]["usd_per_gpu_hour"]
        assert ratios["rent_from.usd_per_gpu_hour"] == pytest.approx(want, rel=1e-3)
        if gpu["buy_at"] and gpu["buy_at"]["usd"]:
            want = gpu["buy_at"]["usd"] / base["buy_at"]["usd"]
            assert ratios["buy_at.usd"] == pytest.approx(want, rel=1e-3)


def test_a_gpu_with_launchable_offers_is_priced_and_a_quote_is_not_its_price(
    read_client: TestClient, body: dict
) -> None:
    for row in body["gpus"]:
        slug = row["gpu"]["slug"]
        offers = read_client.get(f"/api/v1/offers?gpu={slug}&kind=cloud&limit=500").json()
        launchable = [o for o in offers["items"] if o["launchable"]]
        assert launchable, slug  # each of the three rents somewhere
        cheapest = min(o["usd_per_gpu_hour"] for o in launchable if o["tier"] != "spot")
        assert row["gpu"]["rent_from"]["usd_per_gpu_hour"] == pytest.approx(cheapest, abs=1e-4)
    quote = body["gpus"][0]["gpu"]["cloud_price"]  # the 4090's quoted price: shown, not used
    assert quote is not None
    assert quote["usd_per_hour"] != body["gpus"][0]["gpu"]["rent_from"]["usd_per_gpu_hour"]


def test_the_api_and_the_page_show_the_same_rent_price(read_client: TestClient, body: dict) -> None:
    html = read_client.get(f"/compare?slugs={SLUGS}").text
    shown = [float(v) for v in re.findall(r'data-rent-from="([0-9.]+)"', html)]
    assert shown == [row["gpu"]["rent_from"]["usd_per_gpu_hour"] for row in body["gpus"]]


def test_each_offer_says_whether_it_launches(read_client: TestClient) -> None:
    items = read_client.get("/api/v1/offers?limit=500").json()["items"]
    cloud = [o for o in items if o["kind"] == "cloud"]
    assert all(not o["launchable"] for o in items if o["kind"] == "purchase")
    assert all(not o["launchable"] for o in cloud if o["inconsistent"])
    quoted = [o for o in cloud if o["origin"] == "seed" and "per-GPU price" in o["instance_type"]]
    assert quoted and not any(o["launchable"] for o in quoted)
    assert any(o["launchable"] for o in cloud)


def test_the_openapi_schema_describes_the_flag_and_the_compared_prices(
    read_client: TestClient,
) -> None:
    schemas = read_client.get("/openapi.json").json()["components"]["schemas"]
    assert "quoted" in schemas["OfferOut"]["properties"]["launchable"]["description"]
    assert "rent_from" in schemas["GpuCompareRow"]["properties"]["ratios"]["description"]

"""r30 review (a researcher filtering GET /api/v1/offers): a filter only cloud offers have,
asked of purchases, and a provider no offer comes from, are refused naming the field; they
had answered with every purchase unfiltered, or a silent empty page. And `offers list`
says how many of the offers it shows."""

from __future__ import annotations

import io

import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from app.cli.offers import _offers_table
from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.errors import InvalidInput
from app.offers import service
from app.offers.repository import OfferFilter
from app.offers.schemas import OfferOut, OfferPage


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"kind": "purchase", "min_gpus": 2}, "min_gpus"),
        ({"kind": "purchase", "max_usd_per_hour": 1}, "max_usd_per_hour"),
        ({"kind": "purchase", "provider": "lambda"}, "provider"),
        ({"provider": "lamda"}, "provider"),  # a misspelt cloud
        ({"kind": "cloud", "provider": "lambda,nocloud"}, "provider"),
    ],
)
def test_a_filter_that_cannot_apply_is_a_422_naming_it(
    read_client: TestClient, params: dict[str, object], field: str
) -> None:
    r = read_client.get("/api/v1/offers", params=params)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == field


def test_the_refusal_names_the_providers_there_are(read_client: TestClient) -> None:
    r = read_client.get("/api/v1/offers", params={"provider": "lamda"})
    message = r.json()["error"]["message"]
    assert "lamda" in message and "lambda" in message and "runpod" in message


def test_filters_that_apply_still_filter(read_client: TestClient) -> None:
    # provider case is ignored as before; purchases alone, unfiltered, are still listed
    rows = read_client.get("/api/v1/offers", params={"provider": "LAMBDA", "limit": 500}).json()
    assert rows["total"] > 0 and {o["provider"] for o in rows["items"]} == {"lambda"}
    buys = read_client.get("/api/v1/offers", params={"kind": "purchase", "limit": 1}).json()
    assert buys["total"] > 0 and buys["items"][0]["kind"] == "purchase"


def test_the_service_refuses_as_the_api_does(read_settings: Settings) -> None:
    engine = make_engine(read_settings.database_url)
    try:
        with session_scope(make_session_factory(engine)) as s:
            with pytest.raises(InvalidInput) as exc:
                service.list_offers(s, read_settings, OfferFilter(min_gpus=8), kind="purchase")
            assert exc.value.field == "min_gpus"
            # without a kind the cloud-only filter lists cloud offers only, as before
            page = service.list_offers(s, read_settings, OfferFilter(min_gpus=8), limit=500)
            assert page.total > 0 and all(o.kind == "cloud" and o.gpus >= 8 for o in page.items)
    finally:
        engine.dispose()


def _offer(i: int) -> OfferOut:
    return OfferOut(
        id=i, gpu="rtx-4090", kind="purchase", usd=1000.0 + i, condition="new",
        as_of="2026-11-01", source="test", stale=False, origin="seed",
    )  # fmt: skip


def _title(page: OfferPage) -> str:
    con = Console(record=True, width=200, file=io.StringIO())
    con.print(_offers_table(page, 200))
    return con.export_text().splitlines()[0].strip()


def test_the_table_says_how_many_it_shows() -> None:
    some = OfferPage(total=53, limit=4, offset=0, stale_after_days=90,
                     items=[_offer(i) for i in range(4)])  # fmt: skip
    assert _title(some).startswith("4 of 53 offers")
    every = OfferPage(total=2, limit=500, offset=0, stale_after_days=90,
                      items=[_offer(i) for i in range(2)])  # fmt: skip
    assert _title(every).startswith("2 offers")

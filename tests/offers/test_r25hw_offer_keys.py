"""GET /api/v1/offers lists cloud and purchase offers, two tables with their own ids: ``key``
('<kind>-<id>') is unique across the list, and ``id`` stays as it was."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.offers.schemas import OfferOut


def test_offer_keys_are_unique_where_ids_are_not(read_client: TestClient) -> None:
    items: list[dict[str, object]] = []
    total = read_client.get("/api/v1/offers", params={"limit": 1}).json()["total"]
    while len(items) < total:
        page = read_client.get("/api/v1/offers", params={"limit": 500, "offset": len(items)})
        items += page.json()["items"]
    assert {o["kind"] for o in items} == {"cloud", "purchase"}
    ids = {(o["kind"], o["id"]) for o in items}
    # the two tables share ids (the bug): plain ids collide across kinds
    assert len({i for _, i in ids}) < len(items)
    keys = [o["key"] for o in items]
    assert len(set(keys)) == len(keys)
    assert all(o["key"] == f"{o['kind']}-{o['id']}" for o in items)


def test_the_key_is_in_the_openapi_contract(read_client: TestClient) -> None:
    schema = read_client.get("/openapi.json").json()["components"]["schemas"]
    offer = next(v for k, v in schema.items() if k.startswith("OfferOut"))
    assert "unique" in offer["properties"]["key"]["description"]
    assert "not unique" in offer["properties"]["id"]["description"]


def test_the_key_is_derived_not_stored() -> None:
    row = OfferOut(
        id=7, gpu="a40", kind="purchase", as_of="2026", source="s", stale=False, origin="seed"
    )
    assert row.key == "purchase-7"
    assert OfferOut.model_validate(row.model_dump()).key == "purchase-7"

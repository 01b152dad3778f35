"""GET /api/v1/meta dates the data it describes: its data_as_of is the newest date of the
catalog's prices and the offers', each also given on its own."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _all_offers(client: TestClient) -> list[dict]:
    items: list[dict] = []
    while True:
        page = client.get(f"/api/v1/offers?limit=500&offset={len(items)}").json()
        items += page["items"]
        if len(items) >= page["total"] or not page["items"]:
            return items


def test_data_as_of_is_the_newest_of_catalog_and_offers(read_client: TestClient) -> None:
    meta = read_client.get("/api/v1/meta").json()
    assert meta["offers_as_of"] == max(o["as_of"] for o in _all_offers(read_client))
    assert meta["data_as_of"] == max(meta["catalog_as_of"], meta["offers_as_of"])
    # the shipped offers are newer than the catalog's own price fields: the date was theirs
    assert meta["data_as_of"] == meta["offers_as_of"] > meta["catalog_as_of"]

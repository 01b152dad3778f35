"""A GPU's detail (GET /api/v1/gpus/{slug}, the /gpus/<slug> page) lists as offers what can be
rented or bought; the catalog's quoted price (the RTX 4090's Vast.ai $0.136, `launchable:
false`) is said beside them as `seen_price`, "seen at $x (source, date)", never listed among
them (issue 23). GET /api/v1/offers, the offers table itself, keeps every row it stores."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.offers import service
from app.offers.repository import OfferFilter


@pytest.fixture(scope="module")
def session(read_settings: Settings) -> Iterator[Session]:
    engine = make_engine(read_settings.database_url)
    with session_scope(make_session_factory(engine)) as s:
        yield s
    engine.dispose()


def _quoted(items: list[dict[str, object]]) -> list[dict[str, object]]:
    return [o for o in items if str(o.get("instance_type")).endswith("(per-GPU price)")]


def test_the_detail_offers_leave_the_quote_out(session: Session, read_settings: Settings) -> None:
    every = service.list_offers(session, read_settings, OfferFilter(gpus=["rtx-4090"]), limit=500)
    listed = service.offers_for_gpu(session, read_settings, "rtx-4090")
    every_d = [o.model_dump() for o in every.items]
    assert _quoted(every_d), "the shipped catalog quotes a 4090 price"
    assert not _quoted([o.model_dump() for o in listed])
    # nothing else is dropped: the bookable cloud offers and the purchases stay
    assert len(listed) == len(every.items) - len(_quoted(every_d))
    assert all(o.launchable for o in listed if o.kind == "cloud" and not o.inconsistent)


def test_the_api_detail_says_the_quote_as_seen_not_as_an_offer(read_client: TestClient) -> None:
    gpu = read_client.get("/api/v1/gpus/rtx-4090").json()
    assert not _quoted(gpu["offers"])
    cloud = [o for o in gpu["offers"] if o["kind"] == "cloud"]
    assert cloud and all(o["launchable"] or o["inconsistent"] for o in cloud)
    seen = gpu["seen_price"]
    assert seen["usd_per_gpu_hour"] == 0.136 and seen["text"].startswith("seen at $0.136/h")
    # the cheapest listed offer is a bookable one, the price it rents from
    cheapest = min(o["usd_per_gpu_hour"] for o in cloud if o["tier"] != "spot")
    assert gpu["rent_from"]["usd_per_gpu_hour"] == pytest.approx(cheapest, abs=1e-4)
    assert cheapest > 0.136
    # the offers list, asked directly, keeps it, flagged
    listed = read_client.get(
        "/api/v1/offers", params={"gpu": "rtx-4090", "kind": "cloud", "limit": 500}
    ).json()["items"]
    assert [o["launchable"] for o in _quoted(listed)] == [False]


def test_the_page_says_the_quote_beside_the_table(read_client: TestClient) -> None:
    html = read_client.get("/gpus/rtx-4090").text
    table = html[html.index("data-offers-table") :]
    table = table[: table.index("</table>")]
    assert "(per-GPU price)" not in table and "quoted, not bookable" not in table
    assert "data-seen-price>Also seen at $0.136/h per GPU on Vast.ai (" in html

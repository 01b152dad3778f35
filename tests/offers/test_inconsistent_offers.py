"""An offer row whose spot price is above its on-demand price contradicts itself (RunPod's L40S
rows in the SkyPilot snapshot: $0.43 on demand, $0.86 spot, the pair swapped): it is listed,
flagged, but neither price is ranked, used as a "from" price or launched
(data/offers/README.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.domain.cost import RentalPolicy, Usage, price_configuration
from app.offers import service
from app.offers.loader import read_seed_cloud_offers
from app.offers.mapping import load_mapping

DATA = Path(__file__).resolve().parents[2] / "data"
SWAPPED = {"1x_L40S_SECURE", "2x_L40S_SECURE", "4x_L40S_SECURE", "8x_L40S_SECURE"}


@pytest.fixture(scope="module")
def session(read_settings: Settings) -> Iterator[Session]:
    engine = make_engine(read_settings.database_url)
    with session_scope(make_session_factory(engine)) as s:
        yield s
    engine.dispose()


def test_the_loader_keeps_the_rows_as_the_snapshot_has_them() -> None:
    # loaded, not dropped: the rows stay visible (and fixable) in the offers list
    rows = {
        o.instance_type: o
        for o in read_seed_cloud_offers(DATA, load_mapping(DATA))
        if o.provider == "runpod" and o.gpu_slug == "l40s"
    }
    assert set(rows) >= SWAPPED
    one = rows["1x_L40S_SECURE"]
    assert (one.usd_per_hour, one.spot_usd_per_hour) == (0.43, 0.86)


def test_the_recommender_never_sees_them(session: Session) -> None:
    l40s = service.cloud_offers_by_gpu(session)["l40s"]
    assert not {o.instance_type for o in l40s if o.provider == "runpod"} & SWAPPED
    offers = service.gpu_offers(session)["l40s"]
    for allow_spot in (False, True):
        pricing = price_configuration(offers, 1, RentalPolicy(allow_spot=allow_spot), Usage())
        assert pricing.rent is not None
        assert pricing.rent.offer.instance_type not in SWAPPED
        assert pricing.rent.usd_per_hour > 0.43
    rent = service.rent_from_by_gpu(session)["l40s"]
    assert rent.usd_per_gpu_hour is not None and rent.usd_per_gpu_hour > 0.43
    assert rent.instance_type not in SWAPPED


def test_the_offers_list_shows_them_flagged(read_client: TestClient) -> None:
    body = read_client.get("/api/v1/offers", params={"gpu": "l40s", "kind": "cloud"}).json()
    flagged = {o["instance_type"] for o in body["items"] if o["inconsistent"]}
    assert flagged == SWAPPED
    for o in body["items"]:
        if o["inconsistent"]:
            assert o["spot_usd_per_hour"] > o["usd_per_hour"]
            assert "spot price" in o["inconsistent_reason"]
        else:
            assert o["inconsistent_reason"] is None
    # the GPU's own page data: listed among its offers, not its "from" price
    gpu = read_client.get("/api/v1/gpus/l40s").json()
    assert {o["instance_type"] for o in gpu["offers"] if o["inconsistent"]} >= SWAPPED
    assert gpu["rent_from"]["instance_type"] not in SWAPPED
    assert gpu["rent_from"]["usd_per_gpu_hour"] > 0.43


def test_a_launch_spec_never_rents_one(read_client: TestClient) -> None:
    spec = {"gpu": "l40s", "upload": "http://x.example/api/v1/reports"}
    named = read_client.get(
        "/api/v1/offers/launch-spec",
        params={**spec, "provider": "runpod", "instance_type": "1x_L40S_SECURE"},
    )
    assert named.status_code == 422, named.text
    error = named.json()["error"]
    assert error["details"]["field"] == "instance_type" and "spot price" in error["message"]
    for allow_spot in (False, True):
        r = read_client.get("/api/v1/offers/launch-spec", params={**spec, "allow_spot": allow_spot})
        assert r.status_code == 200, r.text
        task = yaml.safe_load(r.text)
        assert not any(t in r.text for t in SWAPPED), task.get("resources")

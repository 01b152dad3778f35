"""Offers in a real database (SQLite, and PostgreSQL when configured): the shipped data,
reseeding, importing, and the API."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.offers import loader, service
from app.offers.files import OfferFileError
from app.offers.repository import OfferFilter

SEEWEB = Path(__file__).parent / "data" / "seeweb-vms.csv"


def _total(session: Session, settings: Settings, **kw: object) -> int:
    return service.list_offers(session, settings, OfferFilter(**kw), limit=1).total  # type: ignore[arg-type]


def test_shipped_offers_cover_the_catalog_with_dates_and_sources(read_client: TestClient) -> None:
    body = read_client.get("/api/v1/offers", params={"kind": "cloud", "limit": 500}).json()
    assert body["total"] > 600
    items = body["items"]
    offset = 500
    while offset < body["total"]:
        items += read_client.get(
            "/api/v1/offers", params={"kind": "cloud", "limit": 500, "offset": offset}
        ).json()["items"]
        offset += 500
    assert len({o["gpu"] for o in items}) >= 40
    assert len({o["provider"] for o in items}) >= 8
    assert all(o["as_of"] and o["source"] for o in items)
    purchases = read_client.get("/api/v1/offers", params={"kind": "purchase", "limit": 500}).json()
    # new prices come from data/offers/purchase.yaml only (the catalog's street prices are
    # market figures: the cheapest listings, new or used)
    conditions = {o["condition"] for o in purchases["items"]}
    assert conditions == {"new", "used", "launch", "market"}
    assert all(o["as_of"] and o["source"] and o["usd"] > 0 for o in purchases["items"])


def test_offer_filters(read_client: TestClient) -> None:
    rows = read_client.get(
        "/api/v1/offers",
        params={"gpu": "h100-sxm", "provider": "lambda", "min_gpus": 8, "max_usd_per_hour": 30},
    ).json()["items"]
    assert rows and all(
        o["gpu"] == "h100-sxm" and o["provider"] == "lambda" and o["gpus"] >= 8
        and o["usd_per_hour"] <= 30 and o["kind"] == "cloud"
        for o in rows
    )  # fmt: skip
    node = next(o for o in rows if o["instance_type"] == "gpu_8x_h100_sxm5")
    assert node["usd_per_gpu_hour"] == pytest.approx(node["usd_per_hour"] / 8, rel=1e-3)
    bad = read_client.get("/api/v1/offers", params={"kind": "rental"})
    assert bad.status_code == 422 and bad.json()["error"]["details"]["field"] == "kind"
    assert read_client.get("/api/v1/offers", params={"min_gpus": 0}).status_code == 422
    # a slug the catalog does not hold is a typo said as one, not an empty list
    typo = read_client.get("/api/v1/offers", params={"gpu": "h100-sxmm"})
    assert typo.status_code == 422 and typo.json()["error"]["details"]["field"] == "gpu"
    assert "h100-sxmm" in typo.json()["error"]["message"]


def test_stale_offers_are_flagged_and_can_be_left_out(read_client: TestClient) -> None:
    every = read_client.get("/api/v1/offers", params={"gpu": "rtx-3090", "limit": 500}).json()
    assert every["stale_after_days"] == 90
    stale = [o for o in every["items"] if o["stale"]]
    assert stale, "the launch price (2020) is stale"
    fresh = read_client.get(
        "/api/v1/offers", params={"gpu": "rtx-3090", "include_stale": "false", "limit": 500}
    ).json()
    assert fresh["total"] == every["total"] - len(stale)
    assert not any(o["stale"] for o in fresh["items"])


def test_gpu_detail_includes_its_offers(read_client: TestClient) -> None:
    body = read_client.get("/api/v1/gpus/rtx-4090").json()
    kinds = {o["kind"] for o in body["offers"]}
    assert kinds == {"cloud", "purchase"}
    assert all(o["gpu"] == "rtx-4090" for o in body["offers"])


def test_import_is_idempotent_keeps_across_reseed_and_a_broken_file_changes_nothing(
    client: TestClient, settings: Settings, tmp_path: Path
) -> None:
    engine = make_engine(settings.database_url)
    factory = make_session_factory(engine)
    try:
        with session_scope(factory) as s:
            before = _total(s, settings)
            first = service.import_files(
                s, settings, [SEEWEB], provider="seeweb", as_of="2026-11-30"
            )
        assert (first.added, first.updated) == (8, 0)
        with session_scope(factory) as s:
            again = service.import_files(
                s, settings, [SEEWEB], provider="seeweb", as_of="2026-11-30"
            )
            assert (again.added, again.updated, again.unchanged) == (0, 0, 8)
            assert _total(s, settings) == before + 8
        broken = tmp_path / "vms.csv"
        broken.write_text(SEEWEB.read_text().replace(",6.8,", ",6.8x,"))
        newer = tmp_path / "newer.csv"
        newer.write_text(SEEWEB.read_text().replace(",0.85,", ",0.95,"))
        with pytest.raises(OfferFileError), session_scope(factory) as s:
            service.import_files(
                s, settings, [newer, broken], provider="seeweb", as_of="2026-12-01"
            )
        with session_scope(factory) as s:
            assert _total(s, settings) == before + 8
            l40s = service.list_offers(
                s, settings, OfferFilter(providers=["seeweb"], gpus=["l40s"])
            ).items
            assert {o.usd_per_hour for o in l40s} == {
                0.85,
                1.7,
                6.8,
            }  # the good file was not applied
        # an import of a shipped instance wins over the shipped row and survives reseeding
        lambda_a10 = tmp_path / "lambda.csv"
        lambda_a10.write_text(
            "gpu,provider,instance_type,gpus,usd_per_hour,as_of,source\n"
            "a10,lambda,gpu_1x_a10,1,0.55,2026-11-29,https://example.org/lambda\n"
        )
        with session_scope(factory) as s:
            assert service.import_files(s, settings, [lambda_a10]).updated == 1
        with session_scope(factory) as s:
            result = loader.seed(s, settings.data_dir)
            assert result.kept_user == 1 and result.inserted == 0 and result.updated == 0
        with session_scope(factory) as s:
            a10 = service.list_offers(
                s, settings, OfferFilter(providers=["lambda"], gpus=["a10"])
            ).items
            row = next(o for o in a10 if o.instance_type == "gpu_1x_a10")
            assert (row.usd_per_hour, row.origin) == (0.55, "import")
    finally:
        engine.dispose()


def test_stale_cutoff_follows_settings() -> None:
    assert service.stale_cutoff(Settings(offer_stale_days=30), date(2026, 11, 30)) == "2026-10-31"


def test_launch_spec_download(read_client: TestClient) -> None:
    import yaml

    r = read_client.get(
        "/api/v1/offers/launch-spec",
        params={"gpu": "a40", "gpus": 2, "provider": "runpod", "upload": "http://lab:8000"},
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/x-yaml")
    assert "attachment" in r.headers["content-disposition"]
    task = yaml.safe_load(r.text)
    assert task["resources"]["cloud"] == "runpod"
    assert task["resources"]["accelerators"] == "A40:2"
    assert task["resources"]["instance_type"] == "2x_A40_SECURE"
    # RunPod's L40S rows list a spot price above the on-demand one: none is launched, and
    # the answer says why rather than "no such provider"
    swapped = read_client.get(
        "/api/v1/offers/launch-spec",
        params={"gpu": "l40s", "gpus": 2, "provider": "runpod", "upload": "http://lab:8000"},
    )
    assert swapped.status_code == 422 and swapped.json()["error"]["details"]["field"] == "provider"
    assert "spot price" in swapped.json()["error"]["message"]
    assert "--upload http://lab:8000" in task["run"]
    bad = read_client.get(
        "/api/v1/offers/launch-spec", params={"gpu": "l40s", "upload": "ftp://lab.x"}
    )
    assert bad.status_code == 422 and bad.json()["error"]["details"]["field"] == "upload"
    none = read_client.get(
        "/api/v1/offers/launch-spec", params={"gpu": "mi250", "upload": "http://lab:8000"}
    )
    assert none.status_code == 422 and "no launchable offer" in none.json()["error"]["message"]

"""One rule for a value that names nothing: a catalog slug the catalog lacks, in a query
parameter or a body field, is a 422 naming that parameter or field; 404 is for a path, and
names the path parameter."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from httpx import Response

from app.catalog import service as catalog
from app.catalog.repository import GpuFilter
from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.errors import InvalidInput


def _error(r: Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text[:300]
    return dict(r.json()["error"])


def test_an_unknown_gpu_slug_filter_on_device_reports_is_422(read_client: TestClient) -> None:
    err = _error(read_client.get("/api/v1/device-reports?gpu_slug=nope"), 422)
    assert err["details"]["field"] == "gpu_slug" and "nope" in err["message"]
    assert read_client.get("/api/v1/device-reports?gpu_slug=h100-sxm").status_code == 200


def test_compare_with_an_unknown_slug_is_422_naming_slugs(read_client: TestClient) -> None:
    err = _error(read_client.get("/api/v1/gpus/compare?slugs=h100-sxm,nope"), 422)
    assert err["code"] == "invalid_input" and err["details"]["field"] == "slugs"
    assert "nope" in err["message"]


def test_estimate_with_an_unknown_gpu_is_422_naming_the_body_field(
    read_client: TestClient,
) -> None:
    body = {"workload": {"preset": "llama-3-8b"}, "gpu": "nope"}
    err = _error(read_client.post("/api/v1/estimate", json=body), 422)
    assert err["code"] == "invalid_input" and err["details"]["field"] == "gpu"


def test_a_missing_report_names_the_path_parameter_as_a_bad_one_does(
    read_client: TestClient,
) -> None:
    missing = _error(read_client.get("/api/v1/device-reports/999999"), 404)
    bad = _error(read_client.get("/api/v1/device-reports/-1"), 422)
    assert missing["details"]["field"] == bad["details"]["field"] == "report_id"
    run = _error(read_client.get("/api/v1/benchmark-runs/no-such-run"), 404)
    assert run["details"]["field"] == "run_id"


def test_an_unknown_architecture_is_named(read_settings: Settings) -> None:
    engine = make_engine(read_settings.database_url)
    with session_scope(make_session_factory(engine)) as session:
        catalog.require_architectures(session, ["hopper", "Ampere"], "architecture")
        try:
            catalog.require_architectures(session, ["Hopper", "foo"], "architecture")
        except InvalidInput as exc:
            assert exc.details["field"] == "architecture" and "'foo'" in exc.message
        else:
            raise AssertionError("an unknown architecture passed")
    engine.dispose()


def test_a_listing_sorts_on_a_figure_the_caller_supplies(read_settings: Settings) -> None:
    # what the GPU list needs to sort on the offers' prices it shows (rent_from, buy_at)
    engine = make_engine(read_settings.database_url)
    with session_scope(make_session_factory(engine)) as session:
        f = GpuFilter(vendors=["nvidia"])
        every = catalog.list_gpus(session, f, limit=500)
        slugs = [g.slug for g in every.items]
        values: dict[str, float | None] = {s: float(i % 7) for i, s in enumerate(slugs)}
        values[slugs[0]] = None
        extra = {"rent_from.usd_per_gpu_hour": values}
        up = catalog.list_gpus(
            session, f, sort="rent_from.usd_per_gpu_hour", limit=500, sort_values=extra
        )
        down = catalog.list_gpus(
            session, f, sort="-rent_from.usd_per_gpu_hour", limit=5, offset=2, sort_values=extra
        )
        try:
            catalog.list_gpus(session, f, sort="buy_at.usd", sort_values=extra)
        except InvalidInput as exc:
            assert exc.details["field"] == "sort" and "rent_from.usd_per_gpu_hour" in exc.message
        else:
            raise AssertionError("an unknown sort passed")
    engine.dispose()
    shown = [values[g.slug] for g in up.items]
    assert up.total == every.total == len(shown)
    assert shown[-1] is None  # unknown last
    known = [v for v in shown if v is not None]
    assert known == sorted(known)
    full_down = sorted(
        (s for s in slugs if values[s] is not None), key=lambda s: (-(values[s] or 0), s)
    )
    assert [g.slug for g in down.items] == full_down[2:7]

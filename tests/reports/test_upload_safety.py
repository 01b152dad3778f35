"""Uploads store once per Idempotency-Key, refuse values no database should hold with a
422 naming the field, stay within the retention bounds, and can be deleted by an admin."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.reports.factory import gpu_report

JSON = {"content-type": "application/json"}


def _total(client: TestClient) -> int:
    return int(client.get("/api/v1/device-reports").json()["total"])


def test_retried_upload_with_same_key_stores_once(client: TestClient) -> None:
    key = {"Idempotency-Key": "bench-2026-11-30-host-a-1"}
    first = client.post("/api/v1/device-reports", json=gpu_report(), headers=key)
    again = client.post("/api/v1/device-reports", json=gpu_report(), headers=key)
    assert first.status_code == again.status_code == 201
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["idempotent-replayed"] == "true"
    assert _total(client) == 1
    other = client.post("/api/v1/device-reports", json=gpu_report(bf16=700.0), headers=key)
    assert other.status_code == 409
    assert other.json()["error"]["details"]["field"] == "Idempotency-Key"
    assert _total(client) == 1


def test_concurrent_retries_store_once(client: TestClient) -> None:
    body = json.dumps(gpu_report()).encode()

    def post(_: int) -> int:
        r = client.post("/api/v1/device-reports", content=body,
                        headers={**JSON, "Idempotency-Key": "same"})  # fmt: skip
        return int(r.json()["id"])

    with ThreadPoolExecutor(8) as pool:
        ids = set(pool.map(post, range(16)))
    assert len(ids) == 1 and _total(client) == 1


@pytest.mark.parametrize("key", ["", "x" * 201, "tab\there", "ünï".encode()])
def test_bad_idempotency_key_is_named(read_client: TestClient, key: str | bytes) -> None:
    r = read_client.post(
        "/api/v1/device-reports", json=gpu_report(), headers={"Idempotency-Key": key}
    )
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == "Idempotency-Key"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'"duration_s": NaN', "duration_s"),
        (b'"duration_s": Infinity', "duration_s"),
        (b'"duration_s": -Infinity', "duration_s"),
        (b'"duration_s": 1e999', "duration_s"),
        (b'"profile": "quick\\u0000"', "profile"),
        (b'"profile": "\\ud800"', "profile"),
    ],
)
def test_values_a_database_cannot_hold_are_422(client: TestClient, raw: bytes, field: str) -> None:
    body = json.dumps(gpu_report()).encode()
    key = raw.split(b":")[0]
    start = body.index(key)
    end = body.index(b",", start)
    r = client.post("/api/v1/device-reports", content=body[:start] + raw + body[end:], headers=JSON)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == field
    assert _total(client) == 0


@pytest.mark.parametrize("depth", [300, 5000, 200_000])
def test_deep_nesting_is_422(read_client: TestClient, depth: int) -> None:
    report = json.dumps(gpu_report())
    nested = "[" * depth + "]" * depth
    body = report[:-1] + f', "extra": {nested}}}'
    r = read_client.post("/api/v1/device-reports", content=body.encode(), headers=JSON)
    assert r.status_code == 422, r.text[:300]
    assert r.json()["error"]["details"]["field"].startswith(("extra", "body"))
    assert _total(read_client) == 0


@pytest.mark.parametrize("report_id", [2**31, 2**62, 10**30])
def test_ids_past_the_column_are_not_found(client: TestClient, report_id: int) -> None:
    r = client.get(f"/api/v1/device-reports/{report_id}")
    assert r.status_code in (404, 422), r.text
    assert r.json()["error"]["details"]["field"] in ("id", "report_id")
    rec = client.post("/api/v1/recommendations",
                      json={"workload": {"preset": "resnet-50"}, "device_report_id": report_id})  # fmt: skip
    assert rec.status_code == 422 and rec.json()["error"]["details"]["field"] == "device_report_id"


@pytest.mark.parametrize("segment", ["²", "1" * 5000, "%C2%B2", "12abc", "-1"])
def test_odd_report_page_ids_are_404(client: TestClient, segment: str) -> None:
    r = client.get(f"/device/reports/{segment}")
    assert r.status_code == 404
    assert "text/html" in r.headers["content-type"]


def test_retention_drops_the_oldest(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"report_retention_count": 2}))
    with TestClient(app) as c:
        # three different reports (the same one sent again is answered with its first copy)
        bodies = [{**gpu_report(), "duration_s": 10.0 + i} for i in range(3)]
        ids = [c.post("/api/v1/device-reports", json=b).json()["id"] for b in bodies]
        listed = [r["id"] for r in c.get("/api/v1/device-reports").json()["items"]]
        assert sorted(listed) == sorted(ids[1:])
    app.state.engine.dispose()


def test_admin_deletes_a_report(client: TestClient, admin: dict[str, str]) -> None:
    report_id = client.post("/api/v1/device-reports", json=gpu_report()).json()["id"]
    assert client.delete(f"/api/v1/device-reports/{report_id}").status_code == 401
    assert client.delete(f"/api/v1/device-reports/{report_id}", headers=admin).status_code == 204
    assert client.get(f"/api/v1/device-reports/{report_id}").status_code == 404
    gone = client.delete(f"/api/v1/device-reports/{report_id}", headers=admin)
    assert gone.status_code == 404 and gone.json()["error"]["details"]["field"] == "report_id"

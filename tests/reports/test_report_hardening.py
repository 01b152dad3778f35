"""parse_report refuses what no database should store even when no guard screened the body,
and every time the API gives is timezone-aware UTC."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from app.errors import InvalidInput
from app.reports.schemas import ReportSummary, RunOut, WorkerOut
from app.reports.service import parse_report
from tests.reports.factory import gpu_report


def _with_name(name: str) -> bytes:
    report = gpu_report()
    report["environment"]["device_name"] = name
    return json.dumps(report).encode()


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"a":' * 5000 + b"1" + b"}" * 5000, "body"),
        (json.dumps({**gpu_report(), "profile": "\ud800"}).encode(), "profile"),
        (_with_name("H100\u0000"), "environment.device_name"),
    ],
    ids=["deep", "surrogate", "nul"],
)
def test_parse_report_refuses_unstorable_values(raw: bytes, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_report(raw)
    assert caught.value.status_code == 422
    assert caught.value.details["field"] == field


def test_naive_and_offset_times_leave_as_utc() -> None:
    naive = datetime(2026, 1, 2, 3, 4, 5)
    summary = ReportSummary(id=1, created_at=naive, device_name="x", backend="cuda",
                            gpu_slug=None, profile="quick", origin="upload", headline={})  # fmt: skip
    assert summary.model_dump(mode="json")["created_at"] == "2026-01-02T03:04:05Z"
    plus_two = datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    worker = WorkerOut(label="a", host="h", backend="cpu", device_name=None, state="online",
                       cpu_only=True, last_seen=plus_two, run_id=None)  # fmt: skip
    assert worker.model_dump(mode="json")["last_seen"] == "2026-01-02T03:04:05Z"
    run = RunOut(id="r", status="succeeded", profile="quick", device="cpu", progress=1.0,
                 step=None, error=None, report_id=None, label=None, worker=None,
                 heartbeat_at=naive, cancel_requested=False, created_at=naive,
                 started_at=naive, finished_at=naive).model_dump(mode="json")  # fmt: skip
    for name in ("created_at", "started_at", "finished_at", "heartbeat_at"):
        assert run[name] == "2026-01-02T03:04:05Z", name


def _utc(text: str) -> datetime:
    parsed = datetime.fromisoformat(text)
    assert text.endswith("Z") and parsed.tzinfo is not None, text
    return parsed.astimezone(UTC)


def test_every_api_time_has_an_offset(client: TestClient) -> None:
    key = {"Idempotency-Key": "k-1"}
    posted = client.post("/api/v1/device-reports", json=gpu_report(), headers=key).json()
    replayed = client.post("/api/v1/device-reports", json=gpu_report(), headers=key).json()
    shown = client.get(f"/api/v1/device-reports/{posted['id']}").json()
    listed = client.get("/api/v1/device-reports").json()["items"][0]
    times = {_utc(d["created_at"]) for d in (posted, replayed, shown, listed)}
    assert len(times) == 1
    run = client.post("/api/v1/benchmark-runs", json={}).json()
    _utc(run["created_at"])
    for item in client.get("/api/v1/benchmark-runs").json()["items"]:
        for name in ("created_at", "heartbeat_at", "started_at", "finished_at"):
            if item[name] is not None:
                _utc(item[name])

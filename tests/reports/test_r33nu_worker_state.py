"""A worker is busy while its run is active, not until its next presence write (a new user's
walk, 2026-12-06): the device page, loaded during a run, still said "busy worker vm" beside
"Done — open device report #4", since the presence row keeps the run's id until the worker
writes again. The run's own state decides."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.reports import repository
from app.reports.runs import worker_states


def _worker_on(settings: Settings, status: str) -> str:
    """A worker whose presence row names a run in ``status``; its label."""
    label, run_id = f"w-{uuid.uuid4().hex[:8]}", str(uuid.uuid4())
    factory = make_session_factory(make_engine(settings.database_url))
    now = datetime.now(UTC)
    with session_scope(factory) as s:
        repository.add_run(
            s, {"id": run_id, "status": status, "profile": "quick", "device": "auto",
                "label": label, "progress": 1.0 if status == "succeeded" else 0.5,
                "step": "done", "timeout_s": 600.0},
        )  # fmt: skip
        repository.save_worker(
            s, {"label": label, "host": "box", "backend": "cpu", "device_name": "a CPU",
                "started_at": now, "last_seen": now, "run_id": run_id},
        )  # fmt: skip
    return label


@pytest.mark.parametrize(("status", "state"), [
    ("running", "busy"), ("queued", "busy"),
    ("succeeded", "online"), ("failed", "online"), ("cancelled", "online"),
])  # fmt: skip
def test_busy_follows_the_run(settings: Settings, status: str, state: str) -> None:
    label = _worker_on(settings, status)
    factory = make_session_factory(make_engine(settings.database_url))
    with session_scope(factory) as s:
        mine = [w for w in worker_states(s, lapse_s=30.0) if w.label == label]
    assert [w.state for w in mine] == [state]
    assert (mine[0].run_id is not None) == (state == "busy")


def test_the_device_page_says_online_after_the_run(settings: Settings, client: TestClient) -> None:
    label = _worker_on(settings, "succeeded")
    page = client.get("/device").text
    assert f'data-worker="{label}" data-worker-state="online"' in page
    listed = client.get("/api/v1/workers").json()["items"]
    assert [w["state"] for w in listed if w["label"] == label] == ["online"]

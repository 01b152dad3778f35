"""Benchmark runs: a real child process per run, 202 + polling, one at a time, timeout,
cancel, crash -> failed with a reason; the server keeps serving."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.reports.factory import gpu_report

# A stand-in for `gpu-advisor bench` that speaks the same contract: progress lines, then
# the report at --output. It lets these tests exercise the job runner without torch.
FAKE_BENCH = r"""
import json, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
mode, report = sys.argv[1], json.loads(sys.argv[2])
args = dict(zip(sys.argv[3::2], sys.argv[4::2]))
with open(args["--progress-jsonl"], "a") as f:
    for i in range(3):
        f.write(json.dumps({"step": f"step {i}", "fraction": (i + 1) / 4}) + "\n"); f.flush()
        time.sleep(0.05)
if mode == "crash":
    print("RuntimeError: CUDA out of memory", file=sys.stderr); sys.exit(3)
if mode == "sleep":
    time.sleep(60)
if mode == "garbage":
    open(args["--output"], "w").write("{not json"); sys.exit(0)
open(args["--output"], "w").write(json.dumps(report))
"""


def make_client(settings: Settings, mode: str, timeout: float = 30) -> TestClient:
    command = [sys.executable, "-c", FAKE_BENCH, mode, json.dumps(gpu_report())]
    app = create_app(settings.model_copy(update={"bench_command": command, "bench_timeout_s": timeout}))
    return TestClient(app)


@pytest.fixture
def clients(settings: Settings) -> Iterator[dict]:
    made: list[TestClient] = []

    def factory(mode: str, timeout: float = 30) -> TestClient:
        c = make_client(settings, mode, timeout)
        made.append(c)
        return c

    yield {"make": factory}
    for c in made:
        c.app.state.engine.dispose()  # type: ignore[attr-defined]


def wait_final(client: TestClient, run_id: str, limit: float = 30) -> dict:
    seen = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        run = client.get(f"/api/v1/benchmark-runs/{run_id}").json()
        seen.append(run["progress"])
        if run["status"] not in ("queued", "running"):
            run["_seen"] = seen
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish: {run}")


def test_run_succeeds_and_stores_report(clients) -> None:  # type: ignore[no-untyped-def]
    c = clients["make"]("ok")
    r = c.post("/api/v1/benchmark-runs", json={"profile": "quick"})
    assert r.status_code == 202, r.text
    run = wait_final(c, r.json()["id"])
    assert run["status"] == "succeeded", run
    assert run["progress"] == 1.0 and run["report_id"]
    assert run["_seen"] == sorted(run["_seen"])  # progress only moves forward
    report = c.get(f"/api/v1/device-reports/{run['report_id']}").json()
    assert report["origin"] == "run" and report["gpu_slug"] == "h100-sxm"


def test_one_run_at_a_time_and_cancel(clients) -> None:  # type: ignore[no-untyped-def]
    c = clients["make"]("sleep")
    first = c.post("/api/v1/benchmark-runs", json={}).json()
    second = c.post("/api/v1/benchmark-runs", json={})
    assert second.status_code == 409
    assert second.json()["error"]["details"]["active_run"] == first["id"]
    assert c.get("/api/v1/health").json()["status"] == "ok"  # still serving
    cancelled = c.delete(f"/api/v1/benchmark-runs/{first['id']}")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert c.delete(f"/api/v1/benchmark-runs/{first['id']}").status_code == 409
    # the slot is free again
    third = c.post("/api/v1/benchmark-runs", json={})
    assert third.status_code == 202
    c.delete(f"/api/v1/benchmark-runs/{third.json()['id']}")


def test_timeout_fails_with_reason(clients) -> None:  # type: ignore[no-untyped-def]
    c = clients["make"]("sleep", timeout=1.0)
    run = wait_final(c, c.post("/api/v1/benchmark-runs", json={}).json()["id"])
    assert run["status"] == "failed" and "timed out after 1 s" in run["error"]


def test_crash_fails_with_its_message(clients) -> None:  # type: ignore[no-untyped-def]
    c = clients["make"]("crash")
    run = wait_final(c, c.post("/api/v1/benchmark-runs", json={}).json()["id"])
    assert run["status"] == "failed"
    assert "exited with code 3" in run["error"] and "out of memory" in run["error"]
    assert c.get("/api/v1/health").status_code == 200


def test_bad_report_from_child_fails(clients) -> None:  # type: ignore[no-untyped-def]
    c = clients["make"]("garbage")
    run = wait_final(c, c.post("/api/v1/benchmark-runs", json={}).json()["id"])
    assert run["status"] == "failed" and "rejected" in run["error"]
    assert c.get("/api/v1/device-reports").json()["total"] == 0


def test_bad_run_requests(clients) -> None:  # type: ignore[no-untyped-def]
    c = clients["make"]("ok")
    r = c.post("/api/v1/benchmark-runs", json={"profile": "forever"})
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "profile"
    r = c.post("/api/v1/benchmark-runs", json={"device": "tpu; rm -rf /"})
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "device"
    assert c.get("/api/v1/benchmark-runs/nope").status_code == 404


def test_stale_running_run_is_failed_on_restart(settings: Settings, tmp_path: Path) -> None:
    c = make_client(settings, "sleep")
    run = c.post("/api/v1/benchmark-runs", json={}).json()
    # a new server process on the same database finds the orphaned run
    app2 = create_app(settings)
    with TestClient(app2) as c2:
        after = c2.get(f"/api/v1/benchmark-runs/{run['id']}").json()
        assert after["status"] == "failed" and "restarted" in after["error"]
    assert c.delete(f"/api/v1/benchmark-runs/{run['id']}").status_code == 409
    for child in list(c.app.state.jobs._children.values()):  # type: ignore[attr-defined]
        child.proc.kill()
    # the first server's follower must not overwrite the recorded outcome
    c.app.state.jobs.wait(run["id"], timeout=10)  # type: ignore[attr-defined]
    assert c2.get(f"/api/v1/benchmark-runs/{run['id']}").json()["status"] == "failed"
    app2.state.engine.dispose()
    c.app.state.engine.dispose()  # type: ignore[attr-defined]

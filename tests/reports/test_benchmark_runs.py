"""Benchmark runs on workers: the web process queues a run, a real `gpu-advisor worker`
process takes it from the queue and runs the benchmark in its own child; 202 + polling,
one run at a time per worker, timeout, cancel from any web process, crash -> failed with a
reason, a dead worker's run failed once its heartbeat lapses, tokens, two labelled workers
on one Redis queue."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.reports.factory import gpu_report
from tests.support import ROOT

# A stand-in for `gpu-advisor bench` that speaks the same contract: progress lines, then
# the report at --output. It lets these tests exercise the workers without torch.
FAKE_BENCH = r"""
import json, os, sys, time
mode, report = sys.argv[1], json.loads(sys.argv[2])
args = dict(zip(sys.argv[3::2], sys.argv[4::2]))
with open(args["--progress-jsonl"], "a") as f:
    f.write(json.dumps({"step": "pid", "pid": os.getpid()}) + "\n")
    for i in range(3):
        f.write(json.dumps({"step": f"step {i}", "fraction": (i + 1) / 4}) + "\n"); f.flush()
        time.sleep(0.05)
if mode == "crash":
    print("RuntimeError: CUDA out of memory", file=sys.stderr); sys.exit(3)
if mode == "sleep":
    time.sleep(120)
if mode == "garbage":
    open(args["--output"], "w").write("{not json"); sys.exit(0)
open(args["--output"], "w").write(json.dumps(report))
"""
REDIS_URL = "redis://127.0.0.1:6379/12"  # this suite's own Redis database


def bench_command(mode: str) -> list[str]:
    return [sys.executable, "-c", FAKE_BENCH, mode, json.dumps(gpu_report())]


class Worker:
    def __init__(self, proc: subprocess.Popen[bytes], label: str, log: Path) -> None:
        self.proc, self.label, self.log = proc, label, log

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def queue_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'queue.db'}"


@pytest.fixture
def start_worker(
    settings: Settings, tmp_path: Path, queue_url: str
) -> Iterator[Callable[..., Worker]]:
    started: list[Worker] = []

    def start(mode: str, label: str | None = None, queue: str | None = None,
              database_url: str | None = None) -> Worker:  # fmt: skip
        label = label or f"w-{uuid.uuid4().hex[:8]}"
        log = tmp_path / f"worker-{label}.log"
        env = {
            **os.environ,
            "GPU_ADVISOR_DATABASE_URL": database_url or settings.database_url,
            "GPU_ADVISOR_QUEUE_URL": queue or queue_url,
            "GPU_ADVISOR_BENCH_COMMAND": json.dumps(bench_command(mode)),
            "GPU_ADVISOR_BENCH_JOBS_DIR": str(tmp_path / f"jobs-{label}"),
            "GPU_ADVISOR_RUN_HEARTBEAT_S": "0.3",
        }
        with log.open("wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "app.cli", "worker", "--label", label],
                                    cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
        worker = Worker(proc, label, log)
        started.append(worker)
        return worker

    yield start
    for w in started:
        w.stop()


@pytest.fixture
def make_client(settings: Settings, queue_url: str) -> Iterator[Callable[..., TestClient]]:
    made: list[TestClient] = []

    def make(label: str, **changes: Any) -> TestClient:
        update = {"queue_url": queue_url, "worker_label": label, "bench_timeout_s": 60.0} | changes
        c = TestClient(create_app(settings.model_copy(update=update)))
        made.append(c)
        return c

    yield make
    for c in made:
        c.app.state.engine.dispose()  # type: ignore[attr-defined]


def wait_final(client: TestClient, run_id: str, limit: float = 90) -> dict:
    seen = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        run = client.get(f"/api/v1/benchmark-runs/{run_id}").json()
        seen.append(run["progress"])
        if run["status"] not in ("queued", "running"):
            run["_seen"] = seen
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish: {run}")


def wait_status(client: TestClient, run_id: str, status: str, limit: float = 90) -> dict:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        run = client.get(f"/api/v1/benchmark-runs/{run_id}").json()
        if run["status"] == status:
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} never became {status}: {run}")


def test_run_succeeds_on_the_worker_and_stores_report(start_worker, make_client, tmp_path) -> None:
    w = start_worker("ok")
    c = make_client(w.label)
    r = c.post("/api/v1/benchmark-runs", json={"profile": "quick"})
    assert r.status_code == 202, r.text
    assert r.json()["label"] == w.label and r.json()["status"] == "queued"
    run = wait_final(c, r.json()["id"])
    assert run["status"] == "succeeded", (run, w.log.read_text()[-2000:])
    assert run["worker"] == w.label
    assert run["progress"] == 1.0 and run["report_id"]
    assert run["_seen"] == sorted(run["_seen"])  # progress only moves forward
    report = c.get(f"/api/v1/device-reports/{run['report_id']}").json()
    assert report["origin"] == "run" and report["gpu_slug"] == "h100-sxm"
    assert list((tmp_path / f"jobs-{w.label}").iterdir()) == []  # run directory removed


def test_one_run_per_worker_and_cancel(start_worker, make_client) -> None:
    w = start_worker("sleep")
    c = make_client(w.label)
    first = c.post("/api/v1/benchmark-runs", json={}).json()
    second = c.post("/api/v1/benchmark-runs", json={})
    assert second.status_code == 409
    assert second.json()["error"]["details"]["active_run"] == first["id"]
    wait_status(c, first["id"], "running")
    assert c.get("/api/v1/health").json()["status"] == "ok"  # still serving
    cancelled = c.delete(f"/api/v1/benchmark-runs/{first['id']}")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    assert c.delete(f"/api/v1/benchmark-runs/{first['id']}").status_code == 409
    # the slot is free again
    third = c.post("/api/v1/benchmark-runs", json={})
    assert third.status_code == 202
    c.delete(f"/api/v1/benchmark-runs/{third.json()['id']}")


def test_timeout_fails_with_reason(start_worker, make_client) -> None:
    w = start_worker("sleep")
    c = make_client(w.label, bench_timeout_s=1.0)
    run = wait_final(c, c.post("/api/v1/benchmark-runs", json={}).json()["id"])
    assert run["status"] == "failed" and "timed out after 1 s" in run["error"]


def test_crash_fails_with_its_message(start_worker, make_client) -> None:
    w = start_worker("crash")
    c = make_client(w.label)
    run = wait_final(c, c.post("/api/v1/benchmark-runs", json={}).json()["id"])
    assert run["status"] == "failed"
    assert "exited with code 3" in run["error"] and "out of memory" in run["error"]
    assert c.get("/api/v1/health").status_code == 200


def test_bad_report_from_child_fails(start_worker, make_client) -> None:
    w = start_worker("garbage")
    c = make_client(w.label)
    run = wait_final(c, c.post("/api/v1/benchmark-runs", json={}).json()["id"])
    assert run["status"] == "failed" and "rejected" in run["error"]
    assert c.get("/api/v1/device-reports").json()["total"] == 0


def test_bad_run_requests(make_client) -> None:
    c = make_client("nobody")
    r = c.post("/api/v1/benchmark-runs", json={"profile": "forever"})
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "profile"
    r = c.post("/api/v1/benchmark-runs", json={"device": "tpu; rm -rf /"})
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "device"
    r = c.post("/api/v1/benchmark-runs", json={"label": "../x"})
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "label"
    assert c.get("/api/v1/benchmark-runs/nope").status_code == 404


def test_queued_run_waits_for_its_worker_and_can_be_cancelled(make_client) -> None:
    c = make_client("nobody-listens")
    run = c.post("/api/v1/benchmark-runs", json={}).json()
    time.sleep(0.5)
    assert c.get(f"/api/v1/benchmark-runs/{run['id']}").json()["status"] == "queued"
    assert c.delete(f"/api/v1/benchmark-runs/{run['id']}").json()["status"] == "cancelled"


def test_web_restart_leaves_a_running_run_alone(start_worker, make_client) -> None:
    w = start_worker("sleep")
    c = make_client(w.label)
    run = c.post("/api/v1/benchmark-runs", json={}).json()
    wait_status(c, run["id"], "running")
    # a new web process on the same database must not fail a run a worker is running
    with make_client(w.label) as c2:
        assert c2.get(f"/api/v1/benchmark-runs/{run['id']}").json()["status"] == "running"
        # and cancelling works from the other process
        assert c2.delete(f"/api/v1/benchmark-runs/{run['id']}").json()["status"] == "cancelled"
    assert c.get(f"/api/v1/benchmark-runs/{run['id']}").json()["status"] == "cancelled"


def _bench_child(worker: Worker) -> psutil.Process:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for child in psutil.Process(worker.proc.pid).children(recursive=True):
            if "-c" in child.cmdline():
                return child
        time.sleep(0.1)
    raise AssertionError("the worker started no benchmark child")


def test_killed_worker_fails_its_run_and_takes_its_child(start_worker, make_client) -> None:
    w = start_worker("sleep")
    c = make_client(w.label, run_heartbeat_lapse_s=3.0)
    run = c.post("/api/v1/benchmark-runs", json={}).json()
    wait_status(c, run["id"], "running")
    child = _bench_child(w)
    os.kill(w.proc.pid, signal.SIGKILL)
    w.proc.wait()
    child.wait(timeout=10)  # the benchmark dies with its worker
    # nobody left to finish it: failed once the heartbeat lapses, and the worker is free again
    failed = wait_final(c, run["id"], limit=30)
    assert failed["status"] == "failed" and "heartbeat" in failed["error"]
    assert c.post("/api/v1/benchmark-runs", json={}).status_code == 202


def test_run_token_guards_start_and_cancel(start_worker, make_client) -> None:
    w = start_worker("sleep")
    c = make_client(w.label, run_token="runs-secret")
    assert c.post("/api/v1/benchmark-runs", json={}).status_code == 401
    bad = c.post("/api/v1/benchmark-runs", json={}, headers={"Authorization": "Bearer no"})
    assert bad.status_code == 403
    auth = {"Authorization": "Bearer runs-secret"}
    run = c.post("/api/v1/benchmark-runs", json={}, headers=auth).json()
    assert c.delete(f"/api/v1/benchmark-runs/{run['id']}").status_code == 401
    assert c.get(f"/api/v1/benchmark-runs/{run['id']}").status_code == 200  # reading is open
    assert (
        c.delete(f"/api/v1/benchmark-runs/{run['id']}", headers=auth).json()["status"]
        == "cancelled"
    )


def _redis_up() -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(REDIS_URL, socket_timeout=1).ping())
    except Exception:
        return False


@pytest.mark.skipif(not _redis_up(), reason="no Redis at 127.0.0.1:6379")
def test_two_labelled_workers_share_one_redis_queue(start_worker, make_client) -> None:
    suffix = uuid.uuid4().hex[:6]
    a = start_worker("ok", label=f"host-a-{suffix}", queue=REDIS_URL)
    b = start_worker("sleep", label=f"host-b-{suffix}", queue=REDIS_URL)
    c = make_client(a.label, queue_url=REDIS_URL)
    run_b = c.post("/api/v1/benchmark-runs", json={"label": b.label}).json()
    run_a = c.post("/api/v1/benchmark-runs", json={"label": a.label}).json()
    done = wait_final(c, run_a["id"])
    assert done["status"] == "succeeded" and done["worker"] == a.label
    running = wait_status(c, run_b["id"], "running")
    assert running["worker"] == b.label
    # cancel from another web process ("another host"): b's worker stops its child
    with make_client(a.label, queue_url=REDIS_URL) as other:
        assert other.delete(f"/api/v1/benchmark-runs/{run_b['id']}").json()["status"] == "cancelled"


def _worker_state(client: TestClient, label: str, want: str, limit: float = 60) -> dict:
    deadline = time.monotonic() + limit
    seen = None
    while time.monotonic() < deadline:
        r = client.get("/api/v1/workers")
        assert r.status_code == 200, r.text
        seen = next((w for w in r.json()["items"] if w["label"] == label), None)
        if seen is not None and seen["state"] == want:
            return seen
        time.sleep(0.2)
    raise AssertionError(f"worker {label} never {want}: last seen {seen}")


def test_a_worker_says_it_is_online_busy_then_offline(start_worker, make_client) -> None:
    w = start_worker("sleep")
    c = make_client(w.label, run_heartbeat_lapse_s=3.0)
    online = _worker_state(c, w.label, "online")
    assert online["cpu_only"] == (online["backend"] == "cpu") and online["host"]
    run = c.post("/api/v1/benchmark-runs", json={"profile": "quick"}).json()
    busy = _worker_state(c, w.label, "busy")
    assert busy["run_id"] == run["id"]
    c.delete(f"/api/v1/benchmark-runs/{run['id']}")
    _worker_state(c, w.label, "online")
    w.stop()
    gone = _worker_state(c, w.label, "offline")
    assert gone["run_id"] is None

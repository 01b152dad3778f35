"""Load and fault suite: a real `gpu-advisor serve` on 127.0.0.1, real clients, bounded loops.

Not a test (nothing here asserts a time); it prints one JSON line per scenario, which the
README's "Load and faults, measured" table records. Scenarios:

  uploads    N concurrent device-report uploads at once (each with an Idempotency-Key), then a
             retry of one of them; acknowledged vs stored, 5xx, health latency meanwhile
  reads      C concurrent clients for S seconds on recommendations or the catalog, with 1 or 2
             web workers; requests/s, errors, p50/p99, health p99 meanwhile
  kill-writes  uploads from 32 clients, kill -9 of the server mid-stream, restart: every
             acknowledged upload must be stored
  kill-run   a run on the local worker, kill -9 of the worker (and of `serve`): the benchmark
             child must die, the run must end 'failed' once its heartbeat lapses

  .venv/bin/python benchmarks/load.py uploads --db sqlite --levels 1,10,50,200
  .venv/bin/python benchmarks/load.py reads --db postgres --what recommendations \
      --workers 2 --levels 1,32,128 --seconds 20

Rate limits are switched off for the server under test (the point is capacity, not the
limiter); GPU_ADVISOR_LOAD_PG names the PostgreSQL database to use (its schema is reset).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.reports.factory import gpu_report  # noqa: E402

PG = os.environ.get("GPU_ADVISOR_LOAD_PG", "postgresql://postgres@127.0.0.1:5432/test_reliability")
QUESTION = {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4},
            "objective": "best_value", "limit": 5}  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def reset_pg(url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


def server_env(db: str, tmp: Path, **extra: str) -> dict[str, str]:
    if db == "postgres":
        reset_pg(PG)
        url = PG
    else:
        url = f"sqlite:///{tmp / 'load.db'}"
    return {
        **os.environ,
        "GPU_ADVISOR_DATABASE_URL": url,
        "GPU_ADVISOR_QUEUE_URL": f"sqlite:///{tmp / 'queue.db'}",
        "GPU_ADVISOR_RATE_LIMIT_WRITES_BURST": "0",
        "GPU_ADVISOR_RATE_LIMIT_EXPENSIVE_BURST": "0",
        "GPU_ADVISOR_BENCH_JOBS_DIR": str(tmp / "jobs"),
        **extra,
    }


@contextmanager
def serve(
    env: dict[str, str], workers: int = 1, worker: bool = False
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    subprocess.run([sys.executable, "-m", "app.cli", "db", "upgrade"], env=env, cwd=ROOT,
                   check=True, capture_output=True)  # fmt: skip
    cmd = [sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--workers", str(workers)]
    if not worker:
        cmd.append("--no-worker")
    log = open(Path(env["GPU_ADVISOR_BENCH_JOBS_DIR"]).parent / f"serve-{port}.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        yield base, proc
    finally:
        stop(proc)
        log.close()


def wait_healthy(base: str, proc: subprocess.Popen[bytes], limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited")
        try:
            if httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError("server never became healthy")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        family = psutil.Process(proc.pid).children(recursive=True)
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for p in family:
            if p.is_running():
                p.kill()


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 3)


PROBE = r"""
import sys, time, httpx
base, out = sys.argv[1], open(sys.argv[2], "w")
with httpx.Client(timeout=30) as client:
    while True:
        t = time.perf_counter()
        try:
            client.get(base + "/api/v1/health")
            out.write(f"{time.perf_counter() - t}\n")
        except httpx.HTTPError:
            out.write("30\n")
        out.flush()
        time.sleep(0.2)
"""


async def health_probe(base: str, stop_at: asyncio.Event, out: list[float]) -> None:
    """Health latency, seen from a process of its own (the load clients' event loop is busy
    with their own responses and would add its delay to the figure)."""
    path = Path(tempfile.mkstemp(suffix=".probe")[1])
    proc = subprocess.Popen([sys.executable, "-c", PROBE, base, str(path)])
    try:
        await stop_at.wait()
    finally:
        proc.kill()
        proc.wait()
        out.extend(float(x) for x in path.read_text().split())
        path.unlink()


# ------------------------------------------------------------------------------- scenarios


async def uploads(base: str, n: int) -> dict[str, Any]:
    body = json.dumps(gpu_report()).encode()
    statuses: Counter[str] = Counter()
    health: list[float] = []
    done = asyncio.Event()
    probe = asyncio.create_task(health_probe(base, done, health))
    limits = httpx.Limits(max_connections=n + 5)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        before = (await client.get(f"{base}/api/v1/device-reports?limit=1")).json()["total"]

        async def one(i: int) -> None:
            try:
                headers = {"content-type": "application/json", "Idempotency-Key": f"load-{n}-{i}"}
                url = f"{base}/api/v1/device-reports"
                r = await client.post(url, content=body, headers=headers)
                statuses[str(r.status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1

        t = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - t
        retry = await client.post(f"{base}/api/v1/device-reports", content=body, headers={
            "content-type": "application/json", "Idempotency-Key": f"load-{n}-0"})  # fmt: skip
        after = (await client.get(f"{base}/api/v1/device-reports?limit=1")).json()["total"]
    done.set()
    await probe
    return {"concurrent": n, "acknowledged": statuses.get("201", 0), "stored": after - before,
            "statuses": dict(statuses), "wall_s": round(wall, 2),
            "retry_same_key": retry.status_code, "health_max_s": pct(health, 1.0),
            "health_p99_s": pct(health, 0.99)}  # fmt: skip


async def reads(base: str, what: str, clients: int, seconds: float) -> dict[str, Any]:
    statuses: Counter[str] = Counter()
    latencies: list[float] = []
    health: list[float] = []
    done = asyncio.Event()
    probe = asyncio.create_task(health_probe(base, done, health))
    deadline = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=clients + 5)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:

        async def loop() -> None:
            while time.monotonic() < deadline:
                t = time.perf_counter()
                try:
                    if what == "recommendations":
                        r = await client.post(f"{base}/api/v1/recommendations", json=QUESTION)
                    else:
                        r = await client.get(f"{base}/api/v1/gpus?limit=50&sort=-memory_gb")
                    statuses[str(r.status_code)] += 1
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1
                latencies.append(time.perf_counter() - t)

        t = time.perf_counter()
        await asyncio.gather(*(loop() for _ in range(clients)))
        wall = time.perf_counter() - t
    done.set()
    await probe
    ok = statuses.get("200", 0)
    return {"what": what, "clients": clients, "seconds": round(wall, 1),
            "requests_per_s": round(ok / wall, 1), "errors": sum(statuses.values()) - ok,
            "statuses": dict(statuses), "p50_s": pct(latencies, 0.5), "p99_s": pct(latencies, 0.99),
            "health_p99_s": pct(health, 0.99), "health_max_s": pct(health, 1.0)}  # fmt: skip


async def upload_stream(base: str, clients: int, acked: set[str], stop_at: asyncio.Event) -> None:
    body = json.dumps(gpu_report()).encode()
    async with httpx.AsyncClient(timeout=30) as client:

        async def loop() -> None:
            while not stop_at.is_set():
                key = uuid.uuid4().hex
                try:
                    r = await client.post(f"{base}/api/v1/device-reports", content=body,
                                          headers={"content-type": "application/json",
                                                   "Idempotency-Key": key})  # fmt: skip
                    if r.status_code == 201:
                        acked.add(key)
                except httpx.HTTPError:
                    await asyncio.sleep(0.05)

        await asyncio.gather(*(loop() for _ in range(clients)))


def kill_writes(db: str, tmp: Path, seconds: float) -> dict[str, Any]:
    env = server_env(db, tmp)
    acked: set[str] = set()
    with serve(env) as (base, proc):

        async def go() -> None:
            stop_at = asyncio.Event()
            task = asyncio.create_task(upload_stream(base, 32, acked, stop_at))
            await asyncio.sleep(seconds)
            proc.send_signal(signal.SIGKILL)  # mid-stream, no warning
            await asyncio.sleep(1)
            stop_at.set()
            await task

        asyncio.run(go())
        proc.wait()
    with serve(env) as (base, _):
        stored_keys = set()
        from sqlalchemy import create_engine, text

        url = env["GPU_ADVISOR_DATABASE_URL"].replace("postgresql://", "postgresql+psycopg://", 1)
        engine = create_engine(url)
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT idempotency_key FROM device_reports"))
            stored_keys = {r[0] for r in rows}
        engine.dispose()
    return {"db": db, "acknowledged": len(acked), "stored": len(stored_keys),
            "acknowledged_but_lost": len(acked - stored_keys)}  # fmt: skip


SLEEP_BENCH = "import time, sys; time.sleep(600)"


def kill_run(db: str, tmp: Path) -> dict[str, Any]:
    env = server_env(
        db,
        tmp,
        GPU_ADVISOR_BENCH_COMMAND=json.dumps([sys.executable, "-c", SLEEP_BENCH]),
        GPU_ADVISOR_RUN_HEARTBEAT_LAPSE_S="5",
        GPU_ADVISOR_WORKER_LABEL="load-host",
    )
    out: dict[str, Any] = {"db": db}
    with serve(env, worker=True) as (base, proc):
        run = httpx.post(f"{base}/api/v1/benchmark-runs", json={}, timeout=30).json()
        child = worker = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child is None:
            for p in psutil.Process(proc.pid).children(recursive=True):
                if SLEEP_BENCH in " ".join(p.cmdline()):
                    child = p
                elif "worker" in p.cmdline():
                    worker = p
            time.sleep(0.2)
        assert child is not None and worker is not None, "no benchmark child appeared"
        t = time.monotonic()
        worker.kill()
        child.wait(timeout=10)
        out["child_died_with_worker_s"] = round(time.monotonic() - t, 2)
        while time.monotonic() - t < 60:
            status = httpx.get(f"{base}/api/v1/benchmark-runs/{run['id']}", timeout=10).json()
            if status["status"] != "running":
                break
            time.sleep(0.5)
        out["run_after_worker_kill"] = status["status"]
        out["run_marked_failed_after_s"] = round(time.monotonic() - t, 1)
    # kill -9 of `serve` itself: its worker and the worker's benchmark child go with it
    with serve(env, worker=True) as (base, proc):
        httpx.post(f"{base}/api/v1/benchmark-runs", json={}, timeout=30)
        time.sleep(8)
        family = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(3)
        out["survivors_after_serve_kill"] = sum(1 for p in family if p.is_running()
                                                and p.status() != psutil.STATUS_ZOMBIE)  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("scenario", choices=["uploads", "reads", "kill-writes", "kill-run"])
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--levels", default="1,10,50,200")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--what", choices=["recommendations", "catalog"], default="recommendations")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-load-") as d:
        tmp = Path(d)
        (tmp / "jobs").mkdir()
        common = {"scenario": args.scenario, "db": args.db}
        if args.scenario == "uploads":
            with serve(server_env(args.db, tmp), args.workers) as (base, _):
                for n in levels:
                    result = asyncio.run(uploads(base, n))
                    print(json.dumps(common | {"workers": args.workers} | result), flush=True)
        elif args.scenario == "reads":
            with serve(server_env(args.db, tmp), args.workers) as (base, _):
                for c in levels:
                    result = asyncio.run(reads(base, args.what, c, args.seconds))
                    print(json.dumps(common | {"workers": args.workers} | result), flush=True)
        elif args.scenario == "kill-writes":
            print(json.dumps(common | kill_writes(args.db, tmp, args.seconds)), flush=True)
        else:
            print(json.dumps(common | kill_run(args.db, tmp)), flush=True)


if __name__ == "__main__":
    main()

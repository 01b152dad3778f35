"""Readiness: whether the database answers, its schema is at the code's head, and it (and
the disks under it and the benchmark runs) can take writes. Checked in the background so a
probe is answered at once; the route is in router.py."""

from __future__ import annotations

import shutil
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import anyio
from fastapi import Request

# The health check runs on its own few threads: it must answer while every request thread
# is busy (the issue measured health at 29 s during concurrent uploads).
_HEALTH_LIMITER: anyio.CapacityLimiter | None = None
HEALTH_TIMEOUT_S = 3.0
# How often the app re-checks readiness in the background (see keep_checking).
REFRESH_S = 1.0


@lru_cache(maxsize=1)
def _head() -> str | None:
    from app.system.migrate import head_revision

    return head_revision()


def _free_disk(path: Path, minimum: int) -> str:
    while not path.exists() and path != path.parent:
        path = path.parent
    free = shutil.disk_usage(path).free
    if free < minimum:
        return f"failed: {free // 2**20} MiB free at {path}, below {minimum // 2**20} MiB"
    return "ok"


def readiness(request: Request) -> dict[str, str]:
    """Each check's verdict: 'ok' or 'failed: why'. Blocking; run in a thread."""
    from sqlalchemy import text

    from app.system import migrate

    settings = request.app.state.settings
    engine = request.app.state.health_engine
    checks: dict[str, str] = {}
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
            checks["database"] = "ok"
            dialect = conn.dialect.name
            if dialect == "postgresql":
                read_only = conn.execute(text("SELECT current_setting('transaction_read_only')"))
                recovery = conn.execute(text("SELECT pg_is_in_recovery()")).scalar()
                ro = read_only.scalar() == "on" or bool(recovery)
                checks["writable"] = "failed: the database is read-only" if ro else "ok"
        current = migrate.current_revision(engine)
        head = _head()
        checks["schema"] = (
            "ok" if current == head else f"failed: schema at {current}, the code needs {head}"
        )
    except Exception as exc:  # the point of a health check is to report, not raise
        checks["database"] = f"failed: unreachable ({type(exc).__name__})"
        return checks
    database = engine.url.database if engine.url.get_backend_name() == "sqlite" else None
    if database and database != ":memory:":
        db_path = Path(database)
        writable = all(p.exists() and _writable(p) for p in (db_path, db_path.parent))
        checks["writable"] = "ok" if writable else f"failed: {db_path} is not writable"
        checks["disk"] = _free_disk(db_path.parent, settings.min_free_disk_bytes)
    runs_dir = settings.bench_jobs_dir or Path(tempfile.gettempdir())
    checks["run_disk"] = _free_disk(Path(runs_dir), settings.min_free_disk_bytes)
    return checks


def _writable(path: Path) -> bool:
    import os

    return os.access(path, os.W_OK)


async def check_now(request: Request) -> dict[str, str]:
    global _HEALTH_LIMITER
    if _HEALTH_LIMITER is None:
        _HEALTH_LIMITER = anyio.CapacityLimiter(4)
    try:
        with anyio.fail_after(HEALTH_TIMEOUT_S):
            return await anyio.to_thread.run_sync(
                readiness, request, limiter=_HEALTH_LIMITER, abandon_on_cancel=True
            )
    except TimeoutError:
        return {"database": f"failed: no answer within {HEALTH_TIMEOUT_S:g} s"}


async def keep_checking(app: Any, every_s: float = REFRESH_S) -> None:
    """Runs for the app's lifetime: the checks' latest verdict, so a probe is answered at
    once even when every request thread is busy (GIL and all)."""
    from starlette.requests import Request as _Request

    request = _Request({"type": "http", "app": app, "headers": []})
    while True:
        app.state.readiness = (time.monotonic(), await check_now(request))
        await anyio.sleep(every_s)

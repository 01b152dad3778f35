"""The task queue benchmark runs travel on: Huey (README "Benchmark workers" says why).

One queue per worker label ("gpu-advisor.<label>"), so a run asked for a machine is taken by
that machine's worker. The database row is the run's state of truth (status, heartbeat,
cancel flag); the queue only carries "run <id>" to a worker. Delivery is at least once (a
task enqueued while no worker listens waits for one; Huey retries a task whose execution
raised), and executing a run twice is harmless: the worker claims the row with a
conditional update and stores the report under the idempotency key 'run:<id>'.
"""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path

from huey import Huey, RedisHuey, SqliteHuey
from sqlalchemy.engine import make_url

from app.config import Settings

TASK_NAME = "run_benchmark"


def default_label(settings: Settings) -> str:
    return (settings.worker_label or socket.gethostname() or "local")[:100]


def queue_location(settings: Settings) -> str:
    if settings.queue_url:
        return settings.queue_url
    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return f"sqlite:///{url.database}.queue"
    import hashlib

    from platformdirs import user_data_dir

    # One queue file per database, so two servers on one machine never share a queue.
    digest = hashlib.sha256(settings.database_url.encode()).hexdigest()[:12]
    base = Path(user_data_dir("gpu-advisor", appauthor=False))
    return f"sqlite:///{base / f'queue-{digest}.db'}"


def safe_location(location: str) -> str:
    """The queue's URL with any password hidden, for a line a user or a log reads."""
    if location.startswith("redis"):
        return (
            make_url(location.replace("redis", "postgresql", 1))
            .render_as_string(hide_password=True)
            .replace("postgresql", "redis", 1)
        )
    return location


class QueueUnavailable(Exception):
    """The run queue does not answer: Redis down or refusing, a SQLite file it cannot open."""


def check_reachable(huey: Huey, location: str) -> None:
    """Ask the queue one cheap question before a worker listens on it. Huey's consumer
    retries a queue that does not answer forever, logging a traceback a second, so a worker
    pointed at a Redis that is down had never said so in a line nor exited."""
    from redis.exceptions import RedisError

    try:
        huey.pending_count()
    except (RedisError, sqlite3.Error) as exc:
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        shown = safe_location(location)
        raise QueueUnavailable(f"cannot use the run queue {shown}: {why}") from exc


# Set by `gpu-advisor worker` before its consumer starts; the web process leaves it unset.
_executor: Callable[[str], None] | None = None


def set_executor(executor: Callable[[str], None]) -> None:
    global _executor
    _executor = executor


def run_task(run_id: str) -> None:
    if _executor is None:  # pragma: no cover - only workers execute runs
        raise RuntimeError("benchmark runs execute on workers, never in the web process")
    _executor(run_id)


def make_queue(settings: Settings, label: str) -> tuple[Huey, Callable[[str], object]]:
    """The Huey queue of workers labelled ``label``, and its one task."""
    name = f"gpu-advisor.{label}"
    location = queue_location(settings)
    huey: Huey
    if location.startswith(("redis://", "rediss://", "unix://")):
        huey = RedisHuey(name, url=location, results=False)
    else:
        path = make_url(location).database or "queue.db"
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            huey = SqliteHuey(name, filename=path, results=False, timeout=30)
        except OSError as exc:
            why = f"{exc.strerror or exc}: {exc.filename or Path(path).parent}"
            raise QueueUnavailable(f"cannot use the run queue {location}: {why}") from exc
        except sqlite3.Error as exc:  # SqliteHuey opens the file and makes its tables here
            raise QueueUnavailable(f"cannot use the run queue {location}: {exc}") from exc
    task = huey.task(name=TASK_NAME, retries=2, retry_delay=1)(run_task)
    return huey, task


_cache: dict[tuple[str, str], Callable[[str], object]] = {}


def enqueue(settings: Settings, label: str, run_id: str) -> None:
    key = (queue_location(settings), label)
    if key not in _cache:
        _cache[key] = make_queue(settings, label)[1]
    _cache[key](run_id)

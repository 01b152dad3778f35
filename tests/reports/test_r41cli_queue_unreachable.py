"""r41 walk: `gpu-advisor worker` with GPU_ADVISOR_QUEUE_URL on a Redis that is down never
exited and wrote a traceback into its log every second (Huey's consumer retries for ever); a
SQLite queue in a folder it cannot make was a traceback. Each is now one line naming the
queue (its password hidden) and exit 1, before the worker touches the database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.failures import failure_of
from app.config import Settings
from app.reports import queue

DOWN = "redis://:sekrit@127.0.0.1:1/0"  # port 1: refused at once on any host


def test_a_redis_that_is_down_is_unavailable_with_its_password_hidden() -> None:
    huey, _ = queue.make_queue(Settings(queue_url=DOWN), "box")
    with pytest.raises(queue.QueueUnavailable) as caught:
        queue.check_reachable(huey, DOWN)
    message = str(caught.value)
    assert message.startswith("cannot use the run queue redis://:***@127.0.0.1:1/0: ")
    assert "sekrit" not in message
    assert failure_of(caught.value) == ("queue_unavailable", "GPU_ADVISOR_QUEUE_URL", message)


def test_a_sqlite_queue_in_a_folder_it_cannot_make_is_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    url = f"sqlite:///{blocker / 'q.db'}"
    with pytest.raises(queue.QueueUnavailable, match="cannot use the run queue sqlite:///"):
        queue.make_queue(Settings(queue_url=url), "box")


def test_a_reachable_sqlite_queue_passes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    huey, _ = queue.make_queue(Settings(queue_url=url), "box")
    queue.check_reachable(huey, url)  # no exception: the worker goes on to listen


def test_worker_on_a_redis_that_is_down_exits_1_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "GPU_ADVISOR_QUEUE_URL": DOWN,
           "GPU_ADVISOR_DATABASE_URL": f"sqlite:///{tmp_path / 'a.db'}"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "worker", "--label", "box"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert line.startswith("error: cannot use the run queue redis://:***@127.0.0.1:1/0")

"""r34 new user: every line `gpu-advisor serve` logs is in the one configured format. README
"Operations" promises one JSON object per line on stderr, but `make run`'s log had uvicorn's
own plain lines ("INFO:     Started server process [11195]") and the benchmark worker's
("2026-12-06 16:15:30,738 huey Executing app.reports.queue.run_benchmark: …") between them.

Each check runs in a child interpreter: logging's configuration is process-wide."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

UVICORN = """
import logging, logging.config
from app.http.observability import uvicorn_log_config
logging.config.dictConfig(uvicorn_log_config("INFO", json_lines={json_lines}))
logging.getLogger("uvicorn.error").info("Started server process [%d]", 11195)
logging.getLogger("uvicorn.access").info("GET / 200")  # ours replace these: not shown
"""

WORKER = """
import logging
from app.cli.main import worker_logging
from app.config import Settings
worker_logging(Settings())
logging.getLogger("huey.consumer").info("Huey consumer started with 1 thread")
logging.getLogger("huey").info("Executing app.reports.queue.run_benchmark: 1")
logging.getLogger("gpu_advisor.worker").info("run 1: already taken, ended or cancelled")
"""


def _stderr_lines(code: str, **env: str) -> list[str]:
    run_env = {k: v for k, v in os.environ.items() if k != "GPU_ADVISOR_LOG_FORMAT"}
    run_env.update(PYTHONPATH=str(ROOT), **env)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=run_env, cwd=ROOT, timeout=120, check=True)  # fmt: skip
    return [line for line in done.stderr.splitlines() if line.strip()]


def test_uvicorns_own_lines_are_json_lines() -> None:
    lines = _stderr_lines(UVICORN.format(json_lines=True))
    assert len(lines) == 1, lines
    entry = json.loads(lines[0])
    assert entry["logger"] == "uvicorn.error"
    assert entry["level"] == "info"
    assert entry["message"] == "Started server process [11195]"


def test_uvicorns_lines_follow_the_text_format_when_asked() -> None:
    lines = _stderr_lines(UVICORN.format(json_lines=False))
    assert lines == ["INFO [uvicorn.error] Started server process [11195]"]


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_the_workers_and_its_queues_lines_are_in_the_configured_format(fmt: str) -> None:
    lines = _stderr_lines(WORKER, GPU_ADVISOR_LOG_FORMAT=fmt)
    assert len(lines) == 3, lines
    if fmt == "json":
        loggers = [json.loads(line)["logger"] for line in lines]
        assert loggers == ["huey.consumer", "huey", "gpu_advisor.worker"]
    else:
        assert lines[0] == "INFO [huey.consumer] Huey consumer started with 1 thread"
        assert lines[2] == "INFO [gpu_advisor.worker] run 1: already taken, ended or cancelled"

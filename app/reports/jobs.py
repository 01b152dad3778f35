"""Benchmark runs on the server's own machine, each in a child process.

The web process never imports torch or runs a benchmark itself: it starts
`gpu-advisor bench` as a child, follows the progress file it writes, enforces the
timeout, and stores the report when the child succeeds. The run's state lives in the
database, so any worker can answer status requests.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.errors import AppError, Conflict, NotFound
from app.reports import repository
from app.reports.schemas import RunOut
from app.reports.service import store_report

log = logging.getLogger("gpu_advisor.jobs")
POLL_S = 0.2
_start_lock = threading.Lock()


def _now() -> datetime:
    return datetime.now(UTC)


def run_out(row: object) -> RunOut:
    return RunOut.model_validate(row, from_attributes=True)


@dataclass
class _Child:
    proc: subprocess.Popen[bytes]
    workdir: Path
    cancelled: bool = False


class JobManager:
    def __init__(self, settings: Settings, session_factory: sessionmaker[Session]) -> None:
        self.settings = settings
        self.session_factory = session_factory
        self._children: dict[str, _Child] = {}
        self._threads: dict[str, threading.Thread] = {}

    def _command(self, profile: str, device: str, output: Path, progress: Path) -> list[str]:
        base = self.settings.bench_command or [sys.executable, "-m", "app.cli", "bench"]
        return [
            *base,
            "--profile", profile,
            "--device", device,
            "--output", str(output),
            "--progress-jsonl", str(progress),
        ]  # fmt: skip

    def start(self, profile: str, device: str) -> RunOut:
        run_id = str(uuid.uuid4())
        # The lock closes the race between two requests in this process; the database check
        # covers other workers.
        with _start_lock, session_scope(self.session_factory) as s:
            active = repository.active_run(s)
            if active is not None:
                raise Conflict(
                    f"benchmark run {active.id} is still {active.status}; one run at a time",
                    details={"active_run": active.id},
                )
            repository.add_run(
                s,
                {"id": run_id, "status": "queued", "profile": profile, "device": device,
                 "progress": 0.0, "step": "starting"},
            )  # fmt: skip
        base_dir = self.settings.bench_jobs_dir
        if base_dir is not None:
            base_dir.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix=f"run-{run_id[:8]}-", dir=base_dir))
        output, progress = workdir / "report.json", workdir / "progress.jsonl"
        stderr = (workdir / "stderr.log").open("wb")
        try:
            proc = subprocess.Popen(
                self._command(profile, device, output, progress),
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # so a cancel or timeout can kill the whole group
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        except OSError as exc:
            self._finish(run_id, "failed", error=f"could not start the benchmark: {exc}")
            raise AppError(f"could not start the benchmark: {exc}") from exc
        finally:
            stderr.close()
        self._children[run_id] = _Child(proc, workdir)
        with session_scope(self.session_factory) as s:
            repository.update_run(
                s, run_id, {"status": "running", "pid": proc.pid, "started_at": _now()}
            )
        thread = threading.Thread(target=self._follow, args=(run_id,), daemon=True)
        self._threads[run_id] = thread
        thread.start()
        return self.get(run_id)

    def get(self, run_id: str) -> RunOut:
        with session_scope(self.session_factory) as s:
            row = repository.get_run(s, run_id)
            if row is None:
                raise NotFound(f"no benchmark run with id '{run_id}'", field="id")
            return run_out(row)

    def list(self) -> list[RunOut]:
        with session_scope(self.session_factory) as s:
            return [run_out(r) for r in repository.list_runs(s)]

    def cancel(self, run_id: str) -> RunOut:
        run = self.get(run_id)
        if run.status not in repository.ACTIVE:
            raise Conflict(f"benchmark run {run_id} already ended: {run.status}", field="id")
        child = self._children.get(run_id)
        if child is not None:
            child.cancelled = True
            _kill(child.proc.pid)
            self.wait(run_id, timeout=10)
        else:
            # Started by another worker on this machine: signal it by pid; its follower
            # records the outcome, and we record the cancel in case none is left.
            with session_scope(self.session_factory) as s:
                row = repository.get_run(s, run_id)
                if row is not None and row.pid:
                    _kill(row.pid)
            self._finish(run_id, "cancelled", error="cancelled by request")
        return self.get(run_id)

    def wait(self, run_id: str, timeout: float | None = None) -> RunOut:
        thread = self._threads.get(run_id)
        if thread is not None:
            thread.join(timeout)
        return self.get(run_id)

    def _follow(self, run_id: str) -> None:
        child = self._children[run_id]
        deadline = time.monotonic() + self.settings.bench_timeout_s
        progress_file = child.workdir / "progress.jsonl"
        last = (0.0, "starting")
        try:
            while child.proc.poll() is None:
                if time.monotonic() > deadline:
                    _kill(child.proc.pid)
                    child.proc.wait()
                    self._finish(
                        run_id,
                        "failed",
                        error=f"timed out after {self.settings.bench_timeout_s:g} s",
                    )
                    return
                current = _read_progress(progress_file, last)
                if current != last:
                    last = current
                    with session_scope(self.session_factory) as s:
                        repository.update_run(s, run_id, {"progress": last[0], "step": last[1]})
                time.sleep(POLL_S)
            self._conclude(run_id, child)
        except Exception as exc:  # the follower must always leave the run in a final state
            log.exception("benchmark run %s: follower failed", run_id)
            self._finish(run_id, "failed", error=f"internal error: {exc}")
        finally:
            self._children.pop(run_id, None)

    def _conclude(self, run_id: str, child: _Child) -> None:
        code = child.proc.returncode
        if child.cancelled:
            self._finish(run_id, "cancelled", error="cancelled by request")
            return
        if code != 0:
            self._finish(run_id, "failed", error=_describe_exit(code, child.workdir))
            return
        output = child.workdir / "report.json"
        if not output.exists():
            self._finish(run_id, "failed", error="the benchmark exited without writing a report")
            return
        try:
            with session_scope(self.session_factory) as s:
                stored = store_report(s, output.read_bytes(), origin="run")
        except AppError as exc:
            self._finish(run_id, "failed", error=f"the report was rejected: {exc.message}")
            return
        self._finish(run_id, "succeeded", report_id=stored.id)

    def _finish(
        self, run_id: str, status: str, *, error: str | None = None, report_id: int | None = None
    ) -> None:
        values: dict[str, object] = {"status": status, "error": error, "finished_at": _now()}
        if status == "succeeded":
            values.update(progress=1.0, step="done", report_id=report_id)
        with session_scope(self.session_factory) as s:
            repository.finish_run(s, run_id, values)


def _read_progress(path: Path, last: tuple[float, str]) -> tuple[float, str]:
    try:
        lines = path.read_text(encoding="utf-8").strip().splitlines()
    except OSError:
        return last
    for line in reversed(lines):
        try:
            event = json.loads(line)
            return float(event.get("fraction", last[0])), str(event.get("step", last[1]))[:200]
        except (ValueError, TypeError, AttributeError):
            continue  # a line being written right now
    return last


def _describe_exit(code: int, workdir: Path) -> str:
    tail = ""
    with contextlib.suppress(OSError, IndexError):
        tail = (workdir / "stderr.log").read_text(errors="replace").strip().splitlines()[-1][:300]
    if code < 0:
        name = (
            signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        )
        why = " (likely out of memory)" if -code == signal.SIGKILL else ""
        return f"the benchmark was killed by {name}{why}" + (f": {tail}" if tail else "")
    return f"the benchmark exited with code {code}" + (f": {tail}" if tail else "")


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)

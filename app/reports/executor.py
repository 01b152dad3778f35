"""A benchmark run executed by `gpu-advisor worker`, in a child process of the worker.

The worker claims the run's row, starts `gpu-advisor bench` as a child that dies with the
worker (Linux: PR_SET_PDEATHSIG), and while it runs writes a heartbeat and the progress,
polls the cancel flag any host may set, and enforces the timeout. A report is stored under
the idempotency key 'run:<id>', so a second delivery of the same run stores nothing new.
The run directory is removed whatever the outcome.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from app.bench.cpu import cpu_model
from app.config import Settings
from app.db import session_scope, write_scope
from app.errors import AppError
from app.http.observability import record_run_outcome
from app.reports import repository
from app.reports.service import store_once
from app.system.process import die_with_parent

log = logging.getLogger("gpu_advisor.worker")
POLL_S = 0.2


def _now() -> datetime:
    return datetime.now(UTC)


def probe_backend() -> tuple[str, str | None]:
    """What this machine would benchmark, without importing torch (the worker only queues
    children that do): an NVIDIA or AMD driver's device node, Apple silicon, else the CPU."""
    if Path("/dev/nvidiactl").exists() or shutil.which("nvidia-smi"):
        name = None
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=5, check=False,
            )  # fmt: skip
            lines = out.stdout.strip().splitlines()
            name = lines[0][:200] if lines else None
        return "cuda", name
    if Path("/dev/kfd").exists():
        return "rocm", None
    if sys.platform == "darwin" and platform.machine() == "arm64":
        return "mps", None
    # the CPU's model name, as the report's environment gives it ("AMD EPYC 7763 …");
    # platform.processor() is the architecture on Linux ("x86_64"), which named no device
    return "cpu", (cpu_model() or platform.machine() or None)


class Executor:
    def __init__(self, settings: Settings, factory: sessionmaker[Session], label: str) -> None:
        self.settings = settings
        self.factory = factory
        self.label = label
        self.current: str | None = None  # the run it is on, for its presence row
        self.backend, self.device_name = probe_backend()
        self.started_at = _now()

    def say_alive(self) -> None:
        """Write this worker's presence row: the device page reads it before a run starts."""
        with write_scope(self.factory) as s:
            repository.save_worker(
                s,
                {"label": self.label, "host": socket.gethostname()[:200],
                 "backend": self.backend, "device_name": self.device_name,
                 "started_at": self.started_at, "last_seen": _now(), "run_id": self.current},
            )  # fmt: skip

    def keep_saying_alive(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.say_alive()
            except Exception:  # a lost database must not kill the worker; runs report it
                log.warning("worker %s: could not write its presence", self.label, exc_info=True)
            stop.wait(max(1.0, self.settings.run_heartbeat_s * 2.5))

    def recover(self) -> int:
        """At start-up: runs this worker was running when it stopped cannot finish."""
        with write_scope(self.factory) as s:
            failed = repository.fail_worker_runs(
                s, self.label, "the worker restarted during the run", _now()
            )
        record_run_outcome("failed", failed)
        return failed

    def _command(self, profile: str, device: str, output: Path, progress: Path) -> list[str]:
        base = self.settings.bench_command or [sys.executable, "-m", "app.cli", "bench"]
        return [
            *base,
            "--profile", profile,
            "--device", device,
            "--output", str(output),
            "--progress-jsonl", str(progress),
        ]  # fmt: skip

    def __call__(self, run_id: str) -> None:
        with write_scope(self.factory) as s:
            if not repository.claim_run(s, run_id, self.label, _now()):
                log.info("run %s: already taken, ended or cancelled; skipped", run_id)
                return
            row = repository.get_run(s, run_id)
            assert row is not None
            profile, device = row.profile, row.device
            timeout = row.timeout_s or self.settings.bench_timeout_s
        self.current = run_id
        with contextlib.suppress(Exception):
            self.say_alive()
        base_dir = self.settings.bench_jobs_dir
        if base_dir is not None:
            base_dir.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix=f"run-{run_id[:8]}-", dir=base_dir))
        try:
            self._run(run_id, profile, device, timeout, workdir)
        except Exception as exc:  # a run must always end in a final state
            log.exception("run %s: the worker failed", run_id)
            self._finish(run_id, "failed", error=f"internal error in the worker: {exc}"[:500])
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            self.current = None
            with contextlib.suppress(Exception):
                self.say_alive()

    def _run(self, run_id: str, profile: str, device: str, timeout: float, workdir: Path) -> None:
        output, progress = workdir / "report.json", workdir / "progress.jsonl"
        with (workdir / "stderr.log").open("wb") as stderr:
            proc = subprocess.Popen(
                self._command(profile, device, output, progress),
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # a cancel or timeout kills the whole group
                preexec_fn=die_with_parent,  # and the benchmark never outlives its worker
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        with write_scope(self.factory) as s:
            repository.update_run(s, run_id, {"pid": proc.pid, "step": "starting"})
        deadline = time.monotonic() + timeout
        last = (0.0, "starting")
        beat = 0.0
        while proc.poll() is None:
            now = time.monotonic()
            if now > deadline:
                _kill(proc)
                self._finish(run_id, "failed", error=f"timed out after {timeout:g} s")
                return
            with session_scope(self.factory) as s:
                cancel = repository.cancel_requested(s, run_id)
            if cancel:
                _kill(proc)
                self._finish(run_id, "cancelled", error="cancelled by request")
                return
            current = _read_progress(progress, last)
            if current != last or now - beat >= self.settings.run_heartbeat_s:
                last, beat = current, now
                with write_scope(self.factory) as s:
                    repository.update_run(
                        s, run_id, {"progress": last[0], "step": last[1], "heartbeat_at": _now()}
                    )
            time.sleep(POLL_S)
        self._conclude(run_id, proc.returncode, workdir)

    def _conclude(self, run_id: str, code: int, workdir: Path) -> None:
        if code != 0:
            self._finish(run_id, "failed", error=_describe_exit(code, workdir))
            return
        output = workdir / "report.json"
        if not output.exists():
            self._finish(run_id, "failed", error="the benchmark exited without writing a report")
            return
        try:
            stored, _ = store_once(
                self.factory,
                output.read_bytes(),
                "run",
                idempotency_key=f"run:{run_id}",
                retention=(
                    self.settings.report_retention_count,
                    self.settings.report_retention_bytes,
                ),
            )
        except AppError as exc:
            self._finish(run_id, "failed", error=f"the report was rejected: {exc.message}"[:500])
            return
        self._finish(run_id, "succeeded", report_id=stored.id)

    def _finish(
        self, run_id: str, status: str, *, error: str | None = None, report_id: int | None = None
    ) -> None:
        values: dict[str, object] = {"status": status, "error": error, "finished_at": _now()}
        if status == "succeeded":
            values.update(progress=1.0, step="done", report_id=report_id)
        with write_scope(self.factory) as s:
            repository.finish_run(s, run_id, values)
        record_run_outcome(status)


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


def _last_error(stderr: str) -> str:
    """The benchmark's last "error: …" message, whole: rich wraps a message at the console's
    width, so the log's last line alone was the end of a sentence ("device node (/dev/nvidiactl,
    …); use --device cpu or auto" for "no CUDA or ROCm device for --device cuda:0: …"). Without
    such a line (a traceback, a kill), the last line."""
    lines = [line.rstrip() for line in stderr.strip().splitlines()]
    starts = [i for i, line in enumerate(lines) if line.startswith("error:")]
    if not starts:
        return lines[-1][:300] if lines else ""
    first = starts[-1]
    message = " ".join(line.strip() for line in lines[first:] if line.strip())
    return message.removeprefix("error:").strip()[:500]


def _describe_exit(code: int, workdir: Path) -> str:
    tail = ""
    with contextlib.suppress(OSError):
        tail = _last_error((workdir / "stderr.log").read_text(errors="replace"))
    if code < 0:
        name = (
            signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        )
        why = " (likely out of memory)" if -code == signal.SIGKILL else ""
        return f"the benchmark was killed by {name}{why}" + (f": {tail}" if tail else "")
    return f"the benchmark exited with code {code}" + (f": {tail}" if tail else "")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            proc.kill()
    proc.wait()


def run_worker(settings: Settings, label: str) -> None:
    """`gpu-advisor worker`: take runs for ``label`` from the queue, one at a time."""
    from app.db import make_engine, make_session_factory
    from app.reports import queue

    huey, _ = queue.make_queue(settings, label)
    queue.check_reachable(huey, queue.queue_location(settings))
    engine = make_engine(settings.database_url, pool_size=2)
    executor = Executor(settings, make_session_factory(engine), label)
    failed = executor.recover()
    if failed:
        log.warning("failed %d run(s) this worker was running when it stopped", failed)
    queue.set_executor(executor)
    # One run at a time: a benchmark wants the whole machine. A short idle poll keeps a
    # queued run's wait short on SQLite (Redis blocks on the list instead).
    consumer = huey.create_consumer(
        workers=1, periodic=False, initial_delay=0.1, backoff=1.15, max_delay=0.5
    )
    stop = threading.Event()
    presence = threading.Thread(
        target=executor.keep_saying_alive, args=(stop,), name="worker-presence", daemon=True
    )
    presence.start()
    try:
        consumer.run()
    finally:
        stop.set()
        engine.dispose()

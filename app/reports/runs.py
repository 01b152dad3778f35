"""Benchmark runs as the web process sees them: create (and enqueue), show, list, cancel.

The web process never starts a benchmark: it writes the run's row and puts "run <id>" on
the queue of the worker labelled for it (app/reports/queue.py); `gpu-advisor worker` takes
it (app/reports/executor.py). Everything a run's state needs is in the row, so any web
process on any host can answer and cancel: cancelling sets a flag the worker polls.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope, write_scope
from app.errors import AppError, Conflict, NotFound
from app.http.observability import record_run_outcome
from app.reports import queue, repository
from app.reports.schemas import RunOut, RunPage, RunStarted, WorkerOut, WorkerPage

LAPSED = "its worker stopped sending heartbeats (the worker died or lost the database)"


def _now() -> datetime:
    return datetime.now(UTC)


# What each step of a run means to someone watching it: the runner's step names start with
# the suite's own word (app/bench/runner.py, suites/*), the rest is the detail.
STEP_LABELS: tuple[tuple[str, str], ...] = (
    ("waiting", "Waiting for a worker to take the run"),
    ("cancelled", "Cancelled"),
    ("starting", "Starting the benchmark"),
    ("environment", "Describing the machine"),
    ("warm-up", "Warming up the device"),
    ("matmul", "Matrix multiply speed"),
    ("gemm", "Matrix multiply over layer shapes"),
    ("conv", "Convolution speed"),
    ("memory", "Memory bandwidth"),
    ("transfer", "Copies between host and device"),
    ("batch", "Throughput against batch size"),
    ("peak memory", "Peak memory of a training step"),
    ("attention", "Attention kernels"),
    ("element-wise", "Element-wise bandwidth"),
    ("normalisation", "Normalisation bandwidth"),
    ("embedding", "Embedding look-ups"),
    ("launch", "Kernel launch overhead"),
    ("collectives", "Traffic between GPUs"),
    ("kernels", "Kernel profiles"),
    ("done", "Done"),
)


def step_label(step: str | None) -> str | None:
    """The step in words, with the runner's detail (precision, shape) in brackets."""
    if not step:
        return None
    low = step.lower()
    for prefix, label in STEP_LABELS:
        if low.startswith(prefix):
            detail = step[len(prefix) :].strip(" :")
            plain = prefix in ("waiting", "cancelled", "done")
            return f"{label} ({detail})" if detail and not plain else label
    return step


def run_out(row: object) -> RunOut:
    out = RunOut.model_validate(row, from_attributes=True)
    out.step_label = step_label(out.step)
    return out


class Unavailable(AppError):
    status_code = 503
    code = "queue_unavailable"


class Runs:
    def __init__(self, settings: Settings, factory: sessionmaker[Session]) -> None:
        self.settings = settings
        self.factory = factory

    def reap(self) -> None:
        """Fail runs whose worker's heartbeat lapsed: nobody is left to finish them."""
        before = _now() - timedelta(seconds=self.settings.run_heartbeat_lapse_s)
        with session_scope(self.factory) as s:
            if not repository.has_lapsed_runs(s, before):
                return  # the common case costs one read, no write lock
        with write_scope(self.factory) as s:
            lapsed = repository.fail_lapsed_runs(s, before, LAPSED, _now())
        record_run_outcome("failed", lapsed)

    def start(self, profile: str, device: str, label: str | None) -> RunStarted:
        label = label or queue.default_label(self.settings)
        self.reap()
        run_id = str(uuid.uuid4())
        try:
            with write_scope(self.factory) as s:
                row = repository.add_run(
                    s,
                    {"id": run_id, "status": "queued", "profile": profile, "device": device,
                     "label": label, "progress": 0.0, "step": "waiting for a worker",
                     "timeout_s": self.settings.bench_timeout_s},
                )  # fmt: skip
                warning = _no_worker(s, label) or _device_mismatch(s, label, device)
                created = RunStarted(**run_out(row).model_dump(), warning=warning)
        except IntegrityError:
            self._busy(label)
            raise
        try:
            queue.enqueue(self.settings, label, run_id)
        except Exception as exc:
            with write_scope(self.factory) as s:
                failed = {"status": "failed", "finished_at": _now(),
                          "error": "the run queue is unavailable"}  # fmt: skip
                repository.finish_run(s, run_id, failed)
            raise Unavailable(
                f"the run queue is unavailable ({type(exc).__name__}); retry shortly"
            ) from exc
        return created

    def _busy(self, label: str) -> None:
        with session_scope(self.factory) as s:
            active = repository.active_run(s, label)
            if active is not None:
                raise Conflict(
                    f"worker '{label}' already has run {active.id} ({active.status}); "
                    "one run at a time per worker",
                    field="label",
                    details={"active_run": active.id},
                )

    def get(self, run_id: str) -> RunOut:
        self.reap()
        return self._get(run_id)

    def _get(self, run_id: str) -> RunOut:
        with session_scope(self.factory) as s:
            row = repository.get_run(s, run_id[:36])
            if row is None:
                raise NotFound(f"no benchmark run with id '{run_id[:40]}'", field="run_id")
            return run_out(row)

    def list(self, limit: int = 20, offset: int = 0) -> RunPage:
        self.reap()
        with session_scope(self.factory) as s:
            total, rows = repository.list_runs(s, limit, offset)
            return RunPage(
                total=total, limit=limit, offset=offset, items=[run_out(r) for r in rows]
            )

    def cancel(self, run_id: str, wait_s: float = 10.0) -> RunOut:
        run = self.get(run_id)
        if run.status not in repository.ACTIVE:
            raise Conflict(f"benchmark run {run.id} already ended: {run.status}", field="run_id")
        with write_scope(self.factory) as s:
            if run.status == "queued":
                # No worker holds it: end it here; a worker that takes it later skips it.
                # Its step said "waiting for a worker": nothing waits any more.
                repository.finish_run(s, run.id, {"status": "cancelled", "finished_at": _now(),
                                                  "error": "cancelled by request",
                                                  "step": "cancelled before a worker took it",
                                                  "cancel_requested": True})  # fmt: skip
                record_run_outcome("cancelled")
            else:
                repository.update_run(s, run.id, {"cancel_requested": True})
        # The worker polls the flag, stops its child and records the outcome.
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            current = self._get(run.id)
            if current.status not in repository.ACTIVE:
                return current
            time.sleep(0.1)
        return self._get(run.id)


def _no_worker(session: Session, label: str) -> str | None:
    if repository.worker_exists(session, label):
        return None
    return (
        f"no worker labelled '{label}' has reported: the run waits until one starts "
        f"(`gpu-advisor worker --label {label}`); GET /api/v1/workers lists those that have"
    )


# What a worker's probe (app.reports.executor.probe_backend) reports for a machine where a
# run on this device can start. An XPU machine reports "cpu" there (the probe reads no
# Intel GPU node), so an xpu run is never second-guessed.
_DEVICE_BACKENDS = {"cuda": ("cuda", "rocm"), "mps": ("mps",)}


def _device_mismatch(session: Session, label: str, device: str) -> str | None:
    """A warning when the worker of ``label`` reported a machine ``device`` is not on: a run
    asking cuda:0 of a CPU-only worker had been queued without a word and failed there."""
    allowed = _DEVICE_BACKENDS.get(device.split(":")[0])
    row = repository.get_worker(session, label)
    if allowed is None or row is None or row.backend in allowed:
        return None
    return (
        f"worker '{label}' reported a {row.backend} machine with no {device.split(':')[0]} "
        f"device: the run asks --device {device} and will likely fail there; ask device "
        "auto, or a worker with that device (GET /api/v1/workers lists their backends)"
    )


def _active(session: Session, run_id: str) -> bool:
    run = repository.get_run(session, run_id)
    return run is not None and run.status in repository.ACTIVE


def worker_page(session: Session, lapse_s: float, limit: int, offset: int) -> WorkerPage:
    """One page of worker_states (GET /api/v1/workers): few rows, one per label ever seen,
    so paged here rather than in SQL."""
    workers = worker_states(session, lapse_s)
    return WorkerPage(
        total=len(workers), limit=limit, offset=offset, items=workers[offset : offset + limit]
    )


def worker_states(session: Session, lapse_s: float, now: datetime | None = None) -> list[WorkerOut]:
    """Every worker that ever spoke, newest first, with its state now."""
    now = now or _now()
    out = []
    for row in repository.list_workers(session):
        seen = row.last_seen if row.last_seen.tzinfo else row.last_seen.replace(tzinfo=UTC)
        alive = (now - seen).total_seconds() <= lapse_s
        # busy while its run is active: the presence row is written after the run's end (and
        # every few seconds), so the device page had said "busy" beside "Done"
        on = row.run_id if row.run_id and _active(session, row.run_id) else None
        state = ("busy" if on else "online") if alive else "offline"
        out.append(
            WorkerOut(
                label=row.label,
                host=row.host,
                backend=row.backend,
                device_name=row.device_name,
                state=state,
                cpu_only=row.backend == "cpu",
                last_seen=seen,
                run_id=on if alive else None,
            )
        )
    return out

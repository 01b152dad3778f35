"""All SQL for device reports and benchmark runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session, defer
from sqlalchemy.sql import ColumnElement

from app.reports.models import BenchmarkRunRow, DeviceReportRow, WorkerRow
from app.reports.schemas import MAX_ID

ACTIVE = ("queued", "running")


def add_report(session: Session, values: dict[str, Any]) -> DeviceReportRow:
    row = DeviceReportRow(**values)
    session.add(row)
    session.flush()
    return row


def get_report(session: Session, report_id: int) -> DeviceReportRow | None:
    # asking for an id past 64 bits finds nothing rather than overflowing the driver
    if not 1 <= report_id <= MAX_ID:
        return None
    return session.get(DeviceReportRow, report_id)


def report_by_key(session: Session, key: str) -> DeviceReportRow | None:
    return session.scalar(select(DeviceReportRow).where(DeviceReportRow.idempotency_key == key))


def delete_report(session: Session, report_id: int) -> bool:
    if not 1 <= report_id <= MAX_ID:
        return False
    result = session.execute(delete(DeviceReportRow).where(DeviceReportRow.id == report_id))
    return bool(getattr(result, "rowcount", 0))


def enforce_retention(session: Session, max_count: int, max_bytes: int) -> int:
    """Delete the oldest reports past either bound; the number deleted."""
    count, total = session.execute(
        select(func.count(), func.coalesce(func.sum(DeviceReportRow.size_bytes), 0))
    ).one()
    if count <= max_count and total <= max_bytes:
        return 0
    oldest = session.execute(
        select(DeviceReportRow.id, DeviceReportRow.size_bytes)
        .order_by(DeviceReportRow.created_at, DeviceReportRow.id)
        .limit(max(count - 1, 0))  # the newest (just stored) always stays
    ).all()
    doomed: list[int] = []
    for report_id, size in oldest:
        if count <= max_count and total <= max_bytes:
            break
        doomed.append(report_id)
        count -= 1
        total -= size
    if doomed:
        session.execute(delete(DeviceReportRow).where(DeviceReportRow.id.in_(doomed)))
    return len(doomed)


def list_reports(
    session: Session, *, gpu_slug: str | None, limit: int, offset: int
) -> tuple[int, list[DeviceReportRow]]:
    conds = [DeviceReportRow.gpu_slug == gpu_slug] if gpu_slug else []
    total = session.scalar(select(func.count()).select_from(DeviceReportRow).where(*conds)) or 0
    # Listings show summaries: leave each report's JSON (tens of kB) in the database.
    rows = session.scalars(
        select(DeviceReportRow)
        .options(defer(DeviceReportRow.report))
        .where(*conds)
        .order_by(DeviceReportRow.created_at.desc(), DeviceReportRow.id.desc())
        .limit(limit)
        .offset(offset)
    ).all()
    return total, list(rows)


def stamp_columns() -> list[Any]:
    """Changes whenever a report is stored or deleted (reports never change): the count,
    the newest id and the newest time (a deleted newest id reused by SQLite comes back with
    a later time)."""
    return [
        select(func.count()).select_from(DeviceReportRow).scalar_subquery(),
        *(
            select(func.max(c)).scalar_subquery()
            for c in (DeviceReportRow.id, DeviceReportRow.created_at)
        ),
    ]


_STAMP = select(*stamp_columns())  # built once: building it costs more than running it


def reports_stamp(session: Session) -> tuple[Any, ...]:
    return tuple(session.execute(_STAMP).one())


@dataclass(frozen=True, slots=True)
class Headline:
    """What pooling reads of one stored report matched to a catalog GPU."""

    slug: str
    backend: str
    headline: dict[str, float]
    host_id: str | None  # the machine's opaque identity, where the report carries one
    content_sha256: str | None
    noisy: frozenset[str]  # headline keys whose figure was noisy


def matched_headlines(session: Session, limit: int = 5000) -> list[Headline]:
    """The newest reports matched to a catalog GPU, as pooling needs them: headline figures,
    the machine and which headline figures were noisy, read from the report's small parts
    (the matmul summaries, the best bandwidth, the host id) rather than its whole JSON."""
    report = DeviceReportRow.report
    rows = session.execute(
        select(
            DeviceReportRow.gpu_slug,
            DeviceReportRow.backend,
            DeviceReportRow.headline,
            DeviceReportRow.content_sha256,
            report["environment"]["host_id"],
            report["matmul"]["by_precision"],
            report["memory"]["best"],
        )
        .where(DeviceReportRow.gpu_slug.is_not(None))
        .order_by(DeviceReportRow.id.desc())
        .limit(limit)
    ).all()
    out = []
    for slug, backend, head, sha, host, by_precision, best in rows:
        noisy = {
            str(p)
            for p, summary in (by_precision if isinstance(by_precision, dict) else {}).items()
            if isinstance(summary, dict) and _noisy(summary.get("best"))
        }
        if _noisy(best):
            noisy.add("bandwidth_gbs")
        out.append(
            Headline(
                slug=str(slug),
                backend=str(backend),
                headline=dict(head or {}),
                host_id=str(host) if isinstance(host, str) and host else None,
                content_sha256=sha,
                noisy=frozenset(noisy),
            )
        )
    return out


def _noisy(figure: Any) -> bool:
    return isinstance(figure, dict) and figure.get("noisy") is True


# The advisory-lock namespace of report content (the two-key form's first key: "rept"),
# apart from the migrations' lock (app.system.migrate._ADVISORY_KEY) and any other user of
# the database's advisory locks, which a key taken from a hash could otherwise land on.
CONTENT_LOCK_NAMESPACE = 0x72657074


def hold_content(session: Session, sha256: str) -> None:
    """Serialise the stores of one report content until this transaction ends, so the second
    finds the first's copy. PostgreSQL: a transaction advisory lock keyed on the hash (its
    writers run side by side otherwise); SQLite's writers take turns already (app.db's write
    lock within a process, the database file's lock between processes)."""
    if session.get_bind().dialect.name == "postgresql":
        # the two-key form takes two int4: the hash's first 32 bits, read as signed
        key = int.from_bytes(bytes.fromhex(sha256[:8]), "big", signed=True)
        session.execute(select(func.pg_advisory_xact_lock(CONTENT_LOCK_NAMESPACE, key)))


def report_by_content(session: Session, sha256: str) -> DeviceReportRow | None:
    """The oldest stored report with this content hash (service.content_hash)."""
    return session.scalar(
        select(DeviceReportRow)
        .where(DeviceReportRow.content_sha256 == sha256)
        .order_by(DeviceReportRow.id)
        .limit(1)
    )


def matched_kernel_reports(
    session: Session, limit: int = 1000
) -> list[tuple[str, str, int, dict[str, Any]]]:
    """(catalog slug, backend, schema version, report JSON) of the newest reports matched to
    a catalog GPU that carry kernel points (schema version 2 on)."""
    rows = session.execute(
        select(
            DeviceReportRow.gpu_slug,
            DeviceReportRow.backend,
            DeviceReportRow.schema_version,
            DeviceReportRow.report,
        )
        .where(DeviceReportRow.gpu_slug.is_not(None), DeviceReportRow.schema_version >= 2)
        .order_by(DeviceReportRow.id.desc())
        .limit(limit)
    ).all()
    return [(str(s), str(b), int(v), dict(r or {})) for s, b, v, r in rows]


def active_run(session: Session, label: str | None = None) -> BenchmarkRunRow | None:
    conds: list[ColumnElement[bool]] = [BenchmarkRunRow.status.in_(ACTIVE)]
    if label is not None:
        conds.append(BenchmarkRunRow.label == label)
    return session.scalar(select(BenchmarkRunRow).where(*conds).limit(1))


def add_run(session: Session, values: dict[str, Any]) -> BenchmarkRunRow:
    row = BenchmarkRunRow(**values)
    session.add(row)
    session.flush()
    return row


def get_run(session: Session, run_id: str) -> BenchmarkRunRow | None:
    return session.get(BenchmarkRunRow, run_id)


def list_runs(
    session: Session, limit: int = 20, offset: int = 0
) -> tuple[int, list[BenchmarkRunRow]]:
    """(how many runs there are, the newest ``limit`` after ``offset``)."""
    total = session.scalar(select(func.count()).select_from(BenchmarkRunRow)) or 0
    stmt = (
        select(BenchmarkRunRow)
        .order_by(BenchmarkRunRow.created_at.desc(), BenchmarkRunRow.id)
        .limit(limit)
        .offset(offset)
    )
    return total, list(session.scalars(stmt).all())


def update_run(session: Session, run_id: str, values: dict[str, Any]) -> None:
    session.execute(update(BenchmarkRunRow).where(BenchmarkRunRow.id == run_id).values(**values))


def finish_run(session: Session, run_id: str, values: dict[str, Any]) -> bool:
    """Record a final state, unless another actor already ended the run."""
    result = session.execute(
        update(BenchmarkRunRow)
        .where(BenchmarkRunRow.id == run_id, BenchmarkRunRow.status.in_(ACTIVE))
        .values(**values)
    )
    return bool(getattr(result, "rowcount", 0))


def claim_run(session: Session, run_id: str, worker: str, now: datetime) -> bool:
    """queued -> running for this worker; False when the run was taken, ended or cancelled
    (a second delivery of the same task does nothing)."""
    result = session.execute(
        update(BenchmarkRunRow)
        .where(
            BenchmarkRunRow.id == run_id,
            BenchmarkRunRow.status == "queued",
            BenchmarkRunRow.cancel_requested.is_(False),
        )
        .values(
            status="running",
            worker=worker,
            started_at=now,
            heartbeat_at=now,
            attempts=BenchmarkRunRow.attempts + 1,
        )
    )
    return bool(getattr(result, "rowcount", 0))


def cancel_requested(session: Session, run_id: str) -> bool:
    return bool(
        session.scalar(select(BenchmarkRunRow.cancel_requested).where(BenchmarkRunRow.id == run_id))
    )


def has_lapsed_runs(session: Session, before: datetime) -> bool:
    return (
        session.scalar(
            select(BenchmarkRunRow.id)
            .where(BenchmarkRunRow.status == "running", BenchmarkRunRow.heartbeat_at < before)
            .limit(1)
        )
        is not None
    )


def fail_lapsed_runs(session: Session, before: datetime, reason: str, now: datetime) -> int:
    """Runs whose worker stopped sending heartbeats before ``before`` are failed."""
    result = session.execute(
        update(BenchmarkRunRow)
        .where(BenchmarkRunRow.status == "running", BenchmarkRunRow.heartbeat_at < before)
        .values(status="failed", error=reason, finished_at=now)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def fail_worker_runs(session: Session, worker: str, reason: str, now: datetime) -> int:
    """A worker starting up fails the runs it was running when it stopped."""
    result = session.execute(
        update(BenchmarkRunRow)
        .where(BenchmarkRunRow.status == "running", BenchmarkRunRow.worker == worker)
        .values(status="failed", error=reason, finished_at=now)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def count_runs_by_status(session: Session) -> dict[str, int]:
    """How many benchmark runs are stored in each status (for /metrics)."""
    rows = session.execute(
        select(BenchmarkRunRow.status, func.count()).group_by(BenchmarkRunRow.status)
    ).all()
    return {str(status): int(count) for status, count in rows}


def save_worker(session: Session, values: dict[str, Any]) -> None:
    """Insert or refresh a worker's row (one per label: a restarted worker takes it over)."""
    row = session.get(WorkerRow, values["label"])
    if row is None:
        session.add(WorkerRow(**values))
        return
    for key, value in values.items():
        if key != "started_at" or row.started_at is None:
            setattr(row, key, value)


def worker_exists(session: Session, label: str) -> bool:
    return session.get(WorkerRow, label) is not None


def get_worker(session: Session, label: str) -> WorkerRow | None:
    return session.get(WorkerRow, label)


def list_workers(session: Session) -> list[WorkerRow]:
    return list(session.scalars(select(WorkerRow).order_by(WorkerRow.last_seen.desc())).all())

"""All SQL for device reports and benchmark runs."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, defer

from app.reports.models import BenchmarkRunRow, DeviceReportRow
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


def matched_headlines(
    session: Session, limit: int = 5000
) -> list[tuple[str, str, dict[str, float]]]:
    """(catalog slug, backend, headline figures) of the newest reports matched to a catalog
    GPU: what pooling needs, without loading any report's JSON."""
    rows = session.execute(
        select(DeviceReportRow.gpu_slug, DeviceReportRow.backend, DeviceReportRow.headline)
        .where(DeviceReportRow.gpu_slug.is_not(None))
        .order_by(DeviceReportRow.id.desc())
        .limit(limit)
    ).all()
    return [(str(slug), str(backend), dict(head or {})) for slug, backend, head in rows]


def active_run(session: Session) -> BenchmarkRunRow | None:
    return session.scalar(
        select(BenchmarkRunRow).where(BenchmarkRunRow.status.in_(ACTIVE)).limit(1)
    )


def add_run(session: Session, values: dict[str, Any]) -> BenchmarkRunRow:
    row = BenchmarkRunRow(**values)
    session.add(row)
    session.flush()
    return row


def get_run(session: Session, run_id: str) -> BenchmarkRunRow | None:
    return session.get(BenchmarkRunRow, run_id)


def list_runs(session: Session, limit: int = 20) -> list[BenchmarkRunRow]:
    return list(
        session.scalars(
            select(BenchmarkRunRow).order_by(BenchmarkRunRow.created_at.desc()).limit(limit)
        ).all()
    )


def update_run(session: Session, run_id: str, values: dict[str, Any]) -> None:
    session.execute(update(BenchmarkRunRow).where(BenchmarkRunRow.id == run_id).values(**values))


def finish_run(session: Session, run_id: str, values: dict[str, Any]) -> None:
    """Record a final state, unless another actor already ended the run."""
    session.execute(
        update(BenchmarkRunRow)
        .where(BenchmarkRunRow.id == run_id, BenchmarkRunRow.status.in_(ACTIVE))
        .values(**values)
    )


def fail_stale_runs(session: Session, reason: str) -> int:
    result = session.execute(
        update(BenchmarkRunRow)
        .where(BenchmarkRunRow.status.in_(ACTIVE))
        .values(status="failed", error=reason)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def count_runs_by_status(session: Session) -> dict[str, int]:
    """How many benchmark runs are stored in each status (for /metrics)."""
    rows = session.execute(
        select(BenchmarkRunRow.status, func.count()).group_by(BenchmarkRunRow.status)
    ).all()
    return {str(status): int(count) for status, count in rows}

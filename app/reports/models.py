"""ORM rows for stored device reports and benchmark runs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base


def _now() -> datetime:
    return datetime.now(UTC)


class DeviceReportRow(Base):
    __tablename__ = "device_reports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now, index=True)
    device_name: Mapped[str] = mapped_column(String(200))
    backend: Mapped[str] = mapped_column(String(20))
    gpu_slug: Mapped[str | None] = mapped_column(String(80), index=True)
    profile: Mapped[str] = mapped_column(String(20))
    schema_version: Mapped[int] = mapped_column(Integer)
    origin: Mapped[str] = mapped_column(String(20))  # upload | run
    size_bytes: Mapped[int] = mapped_column(Integer)
    # Best matmul TFLOPS per precision and bandwidth, taken once when the report is stored
    # (reports never change) so listings need not re-validate every report.
    headline: Mapped[dict[str, float]] = mapped_column(JSON)
    report: Mapped[dict[str, Any]] = mapped_column(JSON)
    # The client's Idempotency-Key (or 'run:<id>' for a worker's report): a retried upload
    # finds its first copy instead of storing a second.
    idempotency_key: Mapped[str | None] = mapped_column(String(200), unique=True)
    content_sha256: Mapped[str | None] = mapped_column(String(64), index=True)


_ACTIVE = text("status IN ('queued', 'running')")


class BenchmarkRunRow(Base):
    __tablename__ = "benchmark_runs"
    # One queued-or-running run per worker label, whichever process or host asks.
    __table_args__ = (
        Index("uq_benchmark_runs_active_label", "label", unique=True,
              sqlite_where=_ACTIVE, postgresql_where=_ACTIVE),
    )  # fmt: skip

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    status: Mapped[str] = mapped_column(String(20), index=True)
    profile: Mapped[str] = mapped_column(String(20))
    device: Mapped[str] = mapped_column(String(20))
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    step: Mapped[str | None] = mapped_column(String(200))
    error: Mapped[str | None] = mapped_column(Text)
    pid: Mapped[int | None] = mapped_column(Integer)
    report_id: Mapped[int | None] = mapped_column(
        ForeignKey("device_reports.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The worker label the run was asked for (None: any worker), then the one that took it.
    label: Mapped[str | None] = mapped_column(String(100))
    worker: Mapped[str | None] = mapped_column(String(100))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    timeout_s: Mapped[float | None] = mapped_column(Float)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class WorkerRow(Base):
    """A benchmark worker's last word: who it is, what it runs on, when it last spoke."""

    __tablename__ = "workers"

    label: Mapped[str] = mapped_column(String(100), primary_key=True)
    host: Mapped[str] = mapped_column(String(200))
    backend: Mapped[str] = mapped_column(String(20))  # cuda | rocm | mps | xpu | cpu | unknown
    device_name: Mapped[str | None] = mapped_column(String(200))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    run_id: Mapped[str | None] = mapped_column(String(36))

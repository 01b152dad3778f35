"""ORM rows for the catalog."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Float, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base


def _now() -> datetime:
    return datetime.now(UTC)


class GpuRow(Base):
    __tablename__ = "gpus"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    slug: Mapped[str] = mapped_column(String(80), unique=True, index=True)
    name: Mapped[str] = mapped_column(String(200))
    vendor: Mapped[str] = mapped_column(String(20), index=True)
    architecture: Mapped[str] = mapped_column(String(80))
    segment: Mapped[str] = mapped_column(String(20), index=True)
    release_year: Mapped[int | None] = mapped_column(Integer)
    memory_gb: Mapped[float] = mapped_column(Float)
    memory_type: Mapped[str | None] = mapped_column(String(40))
    memory_bandwidth_gbs: Mapped[float] = mapped_column(Float)
    fp32_tflops: Mapped[float | None] = mapped_column(Float)
    tf32_tflops: Mapped[float | None] = mapped_column(Float)
    fp16_tflops: Mapped[float | None] = mapped_column(Float)
    bf16_tflops: Mapped[float | None] = mapped_column(Float)
    fp8_tflops: Mapped[float | None] = mapped_column(Float)
    int8_tops: Mapped[float | None] = mapped_column(Float)
    tdp_w: Mapped[float | None] = mapped_column(Float)
    pcie_gen: Mapped[int | None] = mapped_column(Integer)
    pcie_lanes: Mapped[int | None] = mapped_column(Integer)
    interconnect: Mapped[str | None] = mapped_column(String(120))
    interconnect_gbs: Mapped[float | None] = mapped_column(Float)
    form_factor: Mapped[str | None] = mapped_column(String(80))
    slot_width: Mapped[float | None] = mapped_column(Float)
    compute_capability: Mapped[str | None] = mapped_column(String(20))
    sm_count: Mapped[int | None] = mapped_column(Integer)
    cooling: Mapped[str | None] = mapped_column(String(10))
    visible_memory_mib: Mapped[int | None] = mapped_column(Integer)
    # Stored as ",cuda,rocm," so a backend filter is a portable LIKE on SQLite and PostgreSQL.
    backends: Mapped[str] = mapped_column(String(200))
    launch_price_usd: Mapped[float | None] = mapped_column(Float)
    street_price_usd: Mapped[float | None] = mapped_column(Float)
    street_price_as_of: Mapped[str | None] = mapped_column(String(10))
    street_price_source: Mapped[str | None] = mapped_column(String(120))
    cloud_price_usd_per_hour: Mapped[float | None] = mapped_column(Float)
    cloud_price_provider: Mapped[str | None] = mapped_column(String(200))
    cloud_price_as_of: Mapped[str | None] = mapped_column(String(10))
    cloud_price_source: Mapped[str | None] = mapped_column(String(120))
    # Denormalised street-or-launch price so 'max price' filters and sorts in SQL.
    purchase_usd: Mapped[float | None] = mapped_column(Float, index=True)
    sources: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    field_sources: Mapped[dict[str, str]] = mapped_column(JSON)
    notes: Mapped[str | None] = mapped_column(Text)
    origin: Mapped[str] = mapped_column(String(10), default="seed")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    # indexed: the per-request change stamp reads max(updated_at) (and the count through
    # the smallest index) without scanning the table
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=_now, onupdate=_now, index=True
    )


class CatalogTombstoneRow(Base):
    """A shipped GPU someone deleted: seeding skips it, so the deletion stays."""

    __tablename__ = "catalog_tombstones"

    slug: Mapped[str] = mapped_column(String(80), primary_key=True)
    deleted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)

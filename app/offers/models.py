"""ORM rows for offers: cloud instances and purchase prices, each dated and sourced."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, Float, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base


def _now() -> datetime:
    return datetime.now(UTC)


class CloudOfferRow(Base):
    """One rentable instance shape: the price is for the whole instance."""

    __tablename__ = "cloud_offers"
    __table_args__ = (UniqueConstraint("provider", "instance_type", name="uq_cloud_offer"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    gpu_slug: Mapped[str] = mapped_column(String(80), index=True)
    provider: Mapped[str] = mapped_column(String(80), index=True)
    instance_type: Mapped[str] = mapped_column(String(200))
    accelerator: Mapped[str | None] = mapped_column(String(80))  # the provider's own name
    gpus: Mapped[int] = mapped_column(Integer)
    vcpus: Mapped[float | None] = mapped_column(Float)
    ram_gb: Mapped[float | None] = mapped_column(Float)
    usd_per_hour: Mapped[float] = mapped_column(Float, index=True)
    spot_usd_per_hour: Mapped[float | None] = mapped_column(Float)
    tier: Mapped[str] = mapped_column(String(20))
    regions: Mapped[int | None] = mapped_column(Integer)
    as_of: Mapped[str] = mapped_column(String(10))
    source: Mapped[str] = mapped_column(String(300))
    # seed: shipped in data/offers; import: `gpu-advisor offers import` (kept across reseeds)
    origin: Mapped[str] = mapped_column(String(10), default="seed")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    # indexed: the per-request change stamp reads max(updated_at) (and the count through
    # the smallest index) without scanning the table
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=_now, onupdate=_now, index=True
    )


class PurchaseOfferRow(Base):
    """A price to buy one card: new street, used, or the launch price."""

    __tablename__ = "purchase_offers"
    __table_args__ = (
        UniqueConstraint("gpu_slug", "condition", "source", name="uq_purchase_offer"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    gpu_slug: Mapped[str] = mapped_column(String(80), index=True)
    condition: Mapped[str] = mapped_column(String(10))  # new | used | launch
    usd: Mapped[float] = mapped_column(Float)
    as_of: Mapped[str] = mapped_column(String(10))
    source: Mapped[str] = mapped_column(String(300))
    # the data's caveat on this price (purchase.yaml `note`), shown wherever it is paid
    note: Mapped[str | None] = mapped_column(String(300), nullable=True)
    origin: Mapped[str] = mapped_column(String(10), default="seed")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    # indexed: the per-request change stamp reads max(updated_at) (and the count through
    # the smallest index) without scanning the table
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=_now, onupdate=_now, index=True
    )

"""All offer SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.orm import Session

from app.catalog.models import GpuRow
from app.offers.models import CloudOfferRow, PurchaseOfferRow


@dataclass(frozen=True)
class OfferFilter:
    gpus: Sequence[str] = ()
    providers: Sequence[str] = ()
    min_gpus: int | None = None
    max_usd_per_hour: float | None = None
    fresh_since: str | None = None  # ISO date: leave out offers dated before it


def _in_catalog(slug: Any) -> ColumnElement[bool]:
    # An offer is listed only while its GPU is in the catalog: offers seeded or imported for
    # a GPU that was deleted (or never added) have nothing to be an offer of.
    return slug.in_(select(GpuRow.slug))


def _cloud_conditions(f: OfferFilter) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = [_in_catalog(CloudOfferRow.gpu_slug)]
    if f.gpus:
        conds.append(CloudOfferRow.gpu_slug.in_(list(f.gpus)))
    if f.providers:
        conds.append(func.lower(CloudOfferRow.provider).in_([p.lower() for p in f.providers]))
    if f.min_gpus is not None:
        conds.append(CloudOfferRow.gpus >= f.min_gpus)
    if f.max_usd_per_hour is not None:
        conds.append(CloudOfferRow.usd_per_hour <= f.max_usd_per_hour)
    if f.fresh_since is not None:
        conds.append(CloudOfferRow.as_of >= f.fresh_since)
    return conds


def _purchase_conditions(f: OfferFilter) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = [_in_catalog(PurchaseOfferRow.gpu_slug)]
    if f.gpus:
        conds.append(PurchaseOfferRow.gpu_slug.in_(list(f.gpus)))
    if f.fresh_since is not None:
        conds.append(PurchaseOfferRow.as_of >= f.fresh_since)
    return conds


_CLOUD_ORDER = (
    CloudOfferRow.gpu_slug,
    CloudOfferRow.usd_per_hour / CloudOfferRow.gpus,
    CloudOfferRow.provider,
    CloudOfferRow.instance_type,
)
_PURCHASE_ORDER = (PurchaseOfferRow.gpu_slug, PurchaseOfferRow.usd, PurchaseOfferRow.condition)


def list_cloud(session: Session, f: OfferFilter) -> list[CloudOfferRow]:
    stmt = select(CloudOfferRow).where(*_cloud_conditions(f)).order_by(*_CLOUD_ORDER)
    return list(session.scalars(stmt).all())


def cloud_providers(session: Session) -> list[str]:
    """The providers cloud offers of catalog GPUs come from."""
    stmt = (
        select(CloudOfferRow.provider)
        .where(_in_catalog(CloudOfferRow.gpu_slug))
        .distinct()
        .order_by(CloudOfferRow.provider)
    )
    return list(session.scalars(stmt).all())


def list_purchase(session: Session, f: OfferFilter) -> list[PurchaseOfferRow]:
    stmt = select(PurchaseOfferRow).where(*_purchase_conditions(f)).order_by(*_PURCHASE_ORDER)
    return list(session.scalars(stmt).all())


# The columns the recommender reads, in list_cloud's order (the engine breaks price ties by
# the first offer met). Plain tuples: mapping ORM entities cost more than the ranking.
CLOUD_FIELDS = (
    "provider",
    "instance_type",
    "gpus",
    "usd_per_hour",
    "spot_usd_per_hour",
    "tier",
    "as_of",
    "source",
    "regions",
    "accelerator",
    "vcpus",
    "ram_gb",  # SkyPilot's MemoryGiB as read (files.py): GiB, CloudOffer.ram_gib
)
PURCHASE_FIELDS = ("usd", "condition", "as_of", "source", "note")


def all_cloud(session: Session) -> list[tuple[Any, ...]]:
    """(gpu_slug, *CLOUD_FIELDS, origin) of every cloud offer."""
    cols = [getattr(CloudOfferRow, f) for f in CLOUD_FIELDS]
    stmt = select(CloudOfferRow.gpu_slug, *cols, CloudOfferRow.origin).order_by(*_CLOUD_ORDER)
    return [tuple(r) for r in session.execute(stmt)]


def all_purchase(session: Session) -> list[tuple[Any, ...]]:
    """(gpu_slug, *PURCHASE_FIELDS) of every purchase offer."""
    cols = [getattr(PurchaseOfferRow, f) for f in PURCHASE_FIELDS]
    stmt = select(PurchaseOfferRow.gpu_slug, *cols).order_by(*_PURCHASE_ORDER)
    return [tuple(r) for r in session.execute(stmt)]


def stamp_columns() -> list[Any]:
    """Changes whenever an offer is added, changed or deleted (see the catalog's
    stamp_columns), over both tables."""
    return [
        column
        for table in (CloudOfferRow, PurchaseOfferRow)
        for column in (
            select(func.count()).select_from(table).scalar_subquery(),
            *(select(func.max(c)).scalar_subquery() for c in (table.id, table.updated_at)),
        )
    ]


_STAMP = select(*stamp_columns())  # built once: building it costs more than running it


def offers_stamp(session: Session) -> tuple[Any, ...]:
    return tuple(session.execute(_STAMP).one())


def cloud_by_key(session: Session) -> dict[tuple[str, str], CloudOfferRow]:
    return {(r.provider, r.instance_type): r for r in session.scalars(select(CloudOfferRow))}


def purchase_by_key(session: Session) -> dict[tuple[str, str, str], PurchaseOfferRow]:
    return {
        (r.gpu_slug, r.condition, r.source): r for r in session.scalars(select(PurchaseOfferRow))
    }


def add_cloud(session: Session, values: dict[str, Any]) -> CloudOfferRow:
    row = CloudOfferRow(**values)
    session.add(row)
    return row


def add_purchase(session: Session, values: dict[str, Any]) -> PurchaseOfferRow:
    row = PurchaseOfferRow(**values)
    session.add(row)
    return row


def update(session: Session, row: CloudOfferRow | PurchaseOfferRow, values: dict[str, Any]) -> None:
    for key, value in values.items():
        setattr(row, key, value)


def changed(row: CloudOfferRow | PurchaseOfferRow, values: dict[str, Any]) -> bool:
    return any(getattr(row, k) != v for k, v in values.items())


def delete_for_gpu(session: Session, slug: str) -> None:
    for table in (CloudOfferRow, PurchaseOfferRow):
        session.execute(delete(table).where(table.gpu_slug == slug))


def remove(session: Session, row: CloudOfferRow | PurchaseOfferRow) -> None:
    session.delete(row)


def flush(session: Session) -> None:
    session.flush()


def newest_as_of(session: Session) -> str | None:
    """The newest date any stored offer (cloud or purchase) carries."""
    dates = [session.scalar(select(func.max(t.as_of))) for t in (CloudOfferRow, PurchaseOfferRow)]
    known = [d for d in dates if d]
    return max(known) if known else None


def counts(session: Session) -> tuple[int, int, int]:
    """Cloud offers, GPUs with a cloud offer, providers."""
    n = session.scalar(select(func.count()).select_from(CloudOfferRow)) or 0
    gpus = session.scalar(select(func.count(func.distinct(CloudOfferRow.gpu_slug)))) or 0
    providers = session.scalar(select(func.count(func.distinct(CloudOfferRow.provider)))) or 0
    return n, gpus, providers

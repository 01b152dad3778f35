"""All catalog SQL."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Select, func, or_, select
from sqlalchemy.orm import Session, defer

from app.catalog.models import CatalogTombstoneRow, GpuRow
from app.vocab import PEAK_FIELDS

# Every numeric column of an entry: a listing may sort on any (README says so); the API
# validates against this set.
SORTABLE: tuple[str, ...] = (
    "memory_gb",
    "memory_bandwidth_gbs",
    "fp32_tflops",
    "tf32_tflops",
    "fp16_tflops",
    "bf16_tflops",
    "fp8_tflops",
    "int8_tops",
    "tdp_w",
    "release_year",
    "launch_price_usd",
    "street_price_usd",
    "cloud_price_usd_per_hour",
    "purchase_usd",
    "interconnect_gbs",
    "pcie_gen",
    "pcie_lanes",
    "slot_width",
    "sm_count",
    "visible_memory_mib",
)

PRECISION_COLUMNS: dict[str, str] = dict(PEAK_FIELDS)


@dataclass(frozen=True)
class GpuFilter:
    vendors: Sequence[str] = ()
    segments: Sequence[str] = ()
    architectures: Sequence[str] = ()
    backend: str | None = None
    min_memory_gb: float | None = None
    max_memory_gb: float | None = None
    precisions: Sequence[str] = ()
    slugs: Sequence[str] | None = None
    q: str | None = None
    extra: Sequence[ColumnElement[bool]] = field(default_factory=tuple)


def _conditions(f: GpuFilter) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = []
    if f.vendors:
        conds.append(GpuRow.vendor.in_([v.lower() for v in f.vendors]))
    if f.segments:
        conds.append(GpuRow.segment.in_([s.lower() for s in f.segments]))
    if f.architectures:
        conds.append(func.lower(GpuRow.architecture).in_([a.lower() for a in f.architectures]))
    if f.backend:
        conds.append(GpuRow.backends.like(f"%,{f.backend.lower()},%"))
    if f.min_memory_gb is not None:
        conds.append(GpuRow.memory_gb >= f.min_memory_gb)
    if f.max_memory_gb is not None:
        conds.append(GpuRow.memory_gb <= f.max_memory_gb)
    for precision in f.precisions:
        conds.append(getattr(GpuRow, PRECISION_COLUMNS[precision]).is_not(None))
    if f.slugs is not None:
        conds.append(GpuRow.slug.in_(list(f.slugs)))
    if f.q:
        like = f"%{f.q.lower()}%"
        conds.append(
            or_(
                func.lower(GpuRow.name).like(like),
                func.lower(GpuRow.slug).like(like),
                func.lower(GpuRow.architecture).like(like),
                func.lower(GpuRow.memory_type).like(like),
            )
        )
    conds.extend(f.extra)
    return conds


def list_gpus(
    session: Session,
    f: GpuFilter,
    *,
    sort: str | None = None,
    descending: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> tuple[int, list[GpuRow]]:
    conds = _conditions(f)
    total = session.scalar(select(func.count()).select_from(GpuRow).where(*conds)) or 0
    stmt: Select[Any] = select(GpuRow).where(*conds)
    if sort:
        col = getattr(GpuRow, sort)
        # Unknown values sort last either way, then slug keeps the order deterministic.
        stmt = stmt.order_by(col.is_(None), col.desc() if descending else col.asc(), GpuRow.slug)
    else:
        stmt = stmt.order_by(GpuRow.vendor, GpuRow.segment, GpuRow.name, GpuRow.slug)
    rows: list[GpuRow] = list(session.scalars(stmt.limit(limit).offset(offset)).all())
    return total, rows


def list_gpus_by_value(
    session: Session,
    f: GpuFilter,
    values: Mapping[str, float | None],
    *,
    descending: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> tuple[int, list[GpuRow]]:
    """list_gpus sorted on a figure the catalog does not hold (``values``: per slug, e.g. an
    offer price): the matching rows are sorted here, unknown values last either way, then by
    slug, as list_gpus sorts a column. The catalog is a few hundred rows at most."""
    rows = list(session.scalars(select(GpuRow).where(*_conditions(f))).all())

    def key(row: GpuRow) -> tuple[bool, float, str]:
        v = values.get(row.slug)
        return (v is None, (-v if descending else v) if v is not None else 0.0, row.slug)

    rows.sort(key=key)
    return len(rows), rows[offset : offset + limit]


def architectures(session: Session) -> list[str]:
    return list(session.scalars(select(GpuRow.architecture).distinct()).all())


def all_gpus(session: Session) -> list[GpuRow]:
    return list(session.scalars(select(GpuRow).order_by(GpuRow.slug)).all())


# What the engine never reads: the sources and notes are JSON/text, decoded for nothing.
_NOT_FOR_SPECS = (GpuRow.sources, GpuRow.field_sources, GpuRow.notes)


def rows_for_specs(session: Session) -> list[GpuRow]:
    """Every row with only the columns a GpuSpec needs loaded."""
    stmt = select(GpuRow).options(*(defer(c) for c in _NOT_FOR_SPECS)).order_by(GpuRow.slug)
    return list(session.scalars(stmt).all())


def stamp_columns() -> list[Any]:
    """Changes whenever a row is added, changed or deleted, in cheap aggregates: an insert
    raises max(id) and max(updated_at), an update raises max(updated_at) (the ORM sets it),
    a delete lowers the count (count(*): SQLite counts a table's rows from its b-tree, where
    count(id) reads every row). Seen from every worker, because it is read from the database.
    Scalar subqueries, so a caller can read several features' stamps in one query."""
    return [
        select(func.count()).select_from(GpuRow).scalar_subquery(),
        *(select(func.max(c)).scalar_subquery() for c in (GpuRow.id, GpuRow.updated_at)),
    ]


_STAMP = select(*stamp_columns())  # built once: building it costs more than running it


def catalog_stamp(session: Session) -> tuple[Any, ...]:
    return tuple(session.execute(_STAMP).one())


def get_by_slug(session: Session, slug: str) -> GpuRow | None:
    return session.scalar(select(GpuRow).where(GpuRow.slug == slug))


def get_many(session: Session, slugs: Sequence[str]) -> dict[str, GpuRow]:
    rows = session.scalars(select(GpuRow).where(GpuRow.slug.in_(list(slugs)))).all()
    return {r.slug: r for r in rows}


def add(session: Session, values: dict[str, Any]) -> GpuRow:
    if values.get("origin") == "user":
        clear_tombstone(session, str(values["slug"]))  # re-added on purpose
    row = GpuRow(**values)
    session.add(row)
    session.flush()
    return row


def update(session: Session, row: GpuRow, values: dict[str, Any]) -> GpuRow:
    for key, value in values.items():
        setattr(row, key, value)
    session.flush()
    return row


def delete(session: Session, row: GpuRow) -> None:
    # A tombstone keeps a shipped entry gone at the next seed (harmless for a user's own).
    session.merge(CatalogTombstoneRow(slug=row.slug))
    session.delete(row)
    session.flush()


def tombstoned(session: Session) -> set[str]:
    return set(session.scalars(select(CatalogTombstoneRow.slug)).all())


def clear_tombstone(session: Session, slug: str) -> None:
    row = session.get(CatalogTombstoneRow, slug)
    if row is not None:
        session.delete(row)


def count(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(GpuRow)) or 0


def latest_price_date(session: Session) -> str | None:
    dates = [
        session.scalar(select(func.max(GpuRow.street_price_as_of))),
        session.scalar(select(func.max(GpuRow.cloud_price_as_of))),
    ]
    known = [d for d in dates if d]
    return max(known) if known else None

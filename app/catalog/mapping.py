"""The one place catalog rows, API schemas and the domain's GpuSpec are mapped."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from app.catalog.models import GpuRow
from app.catalog.schemas import CloudPrice, GpuCreate, GpuFields, GpuOut, StreetPrice
from app.domain.gpu import GpuSpec, Price

_PLAIN_FIELDS: tuple[str, ...] = tuple(
    name
    for name in GpuFields.model_fields
    if name not in {"backends", "street_price", "cloud_price", "field_sources"}
)


def values_from_create(gpu: GpuCreate, origin: str) -> dict[str, Any]:
    values: dict[str, Any] = {name: getattr(gpu, name) for name in _PLAIN_FIELDS}
    values.update(
        slug=gpu.slug,
        backends="," + ",".join(gpu.backends) + ",",
        field_sources=dict(gpu.field_sources),
        sources=[s.model_dump(exclude_none=True) for s in gpu.sources],
        origin=origin,
        street_price_usd=gpu.street_price.usd if gpu.street_price else None,
        street_price_as_of=gpu.street_price.as_of if gpu.street_price else None,
        street_price_source=gpu.street_price.source if gpu.street_price else None,
        cloud_price_usd_per_hour=gpu.cloud_price.usd_per_hour if gpu.cloud_price else None,
        cloud_price_provider=gpu.cloud_price.provider if gpu.cloud_price else None,
        cloud_price_as_of=gpu.cloud_price.as_of if gpu.cloud_price else None,
        cloud_price_source=gpu.cloud_price.source if gpu.cloud_price else None,
    )
    values["purchase_usd"] = (
        values["street_price_usd"]
        if values["street_price_usd"] is not None
        else gpu.launch_price_usd
    )
    return values


def create_from_row(row: GpuRow) -> GpuCreate:
    data: dict[str, Any] = {name: getattr(row, name) for name in _PLAIN_FIELDS}
    data.update(
        slug=row.slug,
        backends=_backends(row),
        field_sources=dict(row.field_sources or {}),
        sources=list(row.sources or []),
        street_price=(
            StreetPrice(
                usd=row.street_price_usd,
                as_of=row.street_price_as_of or "",
                source=row.street_price_source or "",
            )
            if row.street_price_usd is not None
            else None
        ),
        cloud_price=(
            CloudPrice(
                usd_per_hour=row.cloud_price_usd_per_hour,
                provider=row.cloud_price_provider,
                as_of=row.cloud_price_as_of or "",
                source=row.cloud_price_source or "",
            )
            if row.cloud_price_usd_per_hour is not None
            else None
        ),
    )
    return GpuCreate.model_validate(data)


def out_from_row(row: GpuRow) -> GpuOut:
    base = create_from_row(row)
    return GpuOut.model_validate(
        {**base.model_dump(), "origin": row.origin, "purchase_usd": row.purchase_usd}
    )


# GpuSpec's plain fields share their names with the schema fields and the row columns.
_SPEC_PLAIN: tuple[str, ...] = tuple(
    f.name
    for f in fields(GpuSpec)
    if f.init and f.name not in {"backends", "street_price", "cloud_price"}
)


def _spec(src: Any, backends: list[str], street: Price | None, cloud: Price | None) -> GpuSpec:
    return GpuSpec(
        **{name: getattr(src, name) for name in _SPEC_PLAIN},
        backends=tuple(backends),
        street_price=street,
        cloud_price=cloud,
    )


def spec_from_create(gpu: GpuCreate) -> GpuSpec:
    street, cloud = gpu.street_price, gpu.cloud_price
    return _spec(
        gpu,
        list(gpu.backends),
        Price(usd=street.usd, as_of=street.as_of, source=street.source) if street else None,
        Price(
            usd=cloud.usd_per_hour, as_of=cloud.as_of, source=cloud.source, provider=cloud.provider
        )
        if cloud
        else None,
    )


def spec_from_row(row: GpuRow) -> GpuSpec:
    """Straight from the columns: every recommendation maps the whole catalog, and the row
    was validated when it was written."""
    street = cloud = None
    if row.street_price_usd is not None:
        street = Price(
            usd=row.street_price_usd,
            as_of=row.street_price_as_of or "",
            source=row.street_price_source,
        )
    if row.cloud_price_usd_per_hour is not None:
        cloud = Price(
            usd=row.cloud_price_usd_per_hour,
            as_of=row.cloud_price_as_of or "",
            source=row.cloud_price_source,
            provider=row.cloud_price_provider,
        )
    return _spec(row, _backends(row), street, cloud)


def _backends(row: GpuRow) -> list[str]:
    return [b for b in row.backends.split(",") if b]

"""The one place catalog rows, API schemas and the domain's GpuSpec are mapped."""

from __future__ import annotations

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
        backends=[b for b in row.backends.split(",") if b],
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


def spec_from_create(gpu: GpuCreate) -> GpuSpec:
    street = gpu.street_price
    cloud = gpu.cloud_price
    return GpuSpec(
        slug=gpu.slug,
        name=gpu.name,
        vendor=gpu.vendor,
        architecture=gpu.architecture,
        segment=gpu.segment,
        memory_gb=gpu.memory_gb,
        memory_bandwidth_gbs=gpu.memory_bandwidth_gbs,
        release_year=gpu.release_year,
        memory_type=gpu.memory_type,
        fp32_tflops=gpu.fp32_tflops,
        tf32_tflops=gpu.tf32_tflops,
        fp16_tflops=gpu.fp16_tflops,
        bf16_tflops=gpu.bf16_tflops,
        fp8_tflops=gpu.fp8_tflops,
        int8_tops=gpu.int8_tops,
        tdp_w=gpu.tdp_w,
        pcie_gen=gpu.pcie_gen,
        pcie_lanes=gpu.pcie_lanes,
        interconnect=gpu.interconnect,
        interconnect_gbs=gpu.interconnect_gbs,
        form_factor=gpu.form_factor,
        slot_width=gpu.slot_width,
        compute_capability=gpu.compute_capability,
        backends=tuple(gpu.backends),
        launch_price_usd=gpu.launch_price_usd,
        street_price=Price(usd=street.usd, as_of=street.as_of, source=street.source)
        if street
        else None,
        cloud_price=Price(
            usd=cloud.usd_per_hour, as_of=cloud.as_of, source=cloud.source, provider=cloud.provider
        )
        if cloud
        else None,
    )


def spec_from_row(row: GpuRow) -> GpuSpec:
    return spec_from_create(create_from_row(row))

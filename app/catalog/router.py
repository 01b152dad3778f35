"""JSON API for the GPU catalog. One GPU with its offers (GET /api/v1/gpus/{slug}) and deleting
a GPU with its offers (DELETE /api/v1/gpus/{slug}) are served by app/offers/router.py: offers
know the catalog, the catalog knows nothing of offers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status

from app.catalog import service
from app.catalog.repository import GpuFilter
from app.catalog.schemas import (
    Backend,
    CompareOut,
    GpuCreate,
    GpuOut,
    GpuPage,
    GpuPatch,
    GpuReplace,
)
from app.deps import AdminDep, SessionDep, SettingsDep
from app.shipped.rules import load_rules
from app.vocab import CatalogPrecision, Segment, Vendor

router = APIRouter(prefix="/api/v1/gpus", tags=["catalog"])


def split_csv(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


@router.get("", response_model=GpuPage, summary="List and filter GPUs")
# allow_inf_nan=False: ?min_memory_gb=nan is "must be a finite number", where the bound
# checks would call it "less than or equal to 10000" (NaN compares false with everything).
def list_gpus(
    session: SessionDep,
    settings: SettingsDep,
    vendor: Annotated[list[Vendor] | None, Query()] = None,
    segment: Annotated[list[Segment] | None, Query()] = None,
    architecture: Annotated[list[str] | None, Query(max_length=80)] = None,
    backend: Backend | None = None,
    min_memory_gb: Annotated[float | None, Query(ge=0, le=10_000, allow_inf_nan=False)] = None,
    max_memory_gb: Annotated[float | None, Query(ge=0, le=10_000, allow_inf_nan=False)] = None,
    max_price_usd: Annotated[float | None, Query(gt=0, le=10_000_000, allow_inf_nan=False)] = None,
    max_hourly_usd: Annotated[float | None, Query(gt=0, le=10_000, allow_inf_nan=False)] = None,
    precision: Annotated[
        list[CatalogPrecision] | None, Query(description="has a dense figure for each")
    ] = None,
    feature: Annotated[
        str | None,
        Query(max_length=40, description="hardware feature, e.g. bf16, fp8, flash_attention_2"),
    ] = None,
    q: Annotated[str | None, Query(max_length=100, description="free text")] = None,
    sort: Annotated[
        str | None, Query(max_length=40, description="numeric field; prefix '-' for descending")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=service.MAX_LIMIT)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> GpuPage:
    f = GpuFilter(
        vendors=list(vendor or []),
        segments=list(segment or []),
        architectures=split_csv(architecture),
        backend=backend,
        min_memory_gb=min_memory_gb,
        max_memory_gb=max_memory_gb,
        max_price_usd=max_price_usd,
        max_hourly_usd=max_hourly_usd,
        precisions=list(precision or []),
        q=q.strip() if q and q.strip() else None,
        slugs=(
            service.slugs_with_feature(session, feature, load_rules(settings.data_dir))
            if feature
            else None
        ),
    )
    return service.list_gpus(session, f, sort=sort, limit=limit, offset=offset)


@router.get("/compare", response_model=CompareOut, summary="Side by side, with ratios to the first")
def compare(
    session: SessionDep, slugs: Annotated[str, Query(min_length=3, max_length=1000)]
) -> CompareOut:
    return service.compare(session, slugs.split(","))


@router.post("", response_model=GpuOut, status_code=status.HTTP_201_CREATED)
def create_gpu(session: SessionDep, _admin: AdminDep, body: GpuCreate) -> GpuOut:
    return service.create_gpu(session, body)


@router.put("/{slug}", response_model=GpuOut)
def replace_gpu(session: SessionDep, _admin: AdminDep, slug: str, body: GpuReplace) -> GpuOut:
    return service.replace_gpu(session, slug, body)


@router.patch("/{slug}", response_model=GpuOut)
def patch_gpu(session: SessionDep, _admin: AdminDep, slug: str, body: GpuPatch) -> GpuOut:
    return service.patch_gpu(session, slug, body)

"""JSON API for the GPU catalog. The list with its price filters (GET /api/v1/gpus: the limits
are on the offers' prices), the side-by-side (GET /api/v1/gpus/compare: it compares on the
offers' prices), one GPU with its offers (GET /api/v1/gpus/{slug}) and deleting a
GPU with its offers (DELETE /api/v1/gpus/{slug}) are served by app/offers/router.py: offers
know the catalog, the catalog knows nothing of offers."""

from __future__ import annotations

from fastapi import APIRouter, status

from app.catalog import service
from app.catalog.schemas import (
    GpuCreate,
    GpuOut,
    GpuPatch,
    GpuReplace,
)
from app.deps import AdminDep, SessionDep

router = APIRouter(prefix="/api/v1/gpus", tags=["catalog"])


def split_csv(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


@router.post("", response_model=GpuOut, status_code=status.HTTP_201_CREATED)
def create_gpu(session: SessionDep, _admin: AdminDep, body: GpuCreate) -> GpuOut:
    return service.create_gpu(session, body)


@router.put("/{slug}", response_model=GpuOut)
def replace_gpu(session: SessionDep, _admin: AdminDep, slug: str, body: GpuReplace) -> GpuOut:
    return service.replace_gpu(session, slug, body)


@router.patch("/{slug}", response_model=GpuOut)
def patch_gpu(session: SessionDep, _admin: AdminDep, slug: str, body: GpuPatch) -> GpuOut:
    return service.patch_gpu(session, slug, body)

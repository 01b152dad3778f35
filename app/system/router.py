"""Health (readiness, checked in health.py) and meta."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from app import __version__
from app.catalog import service as catalog
from app.deps import SessionDep
from app.errors import error_body
from app.system import meta as meta_service
from app.system.health import HEALTH_TIMEOUT_S, REFRESH_S, check_now

router = APIRouter(prefix="/api/v1", tags=["system"])


class Health(BaseModel):
    status: str
    database: str
    checks: dict[str, str]


class Meta(BaseModel):
    name: str
    version: str
    catalog_size: int
    data_as_of: str | None = Field(
        description="the newest date of the prices the service answers with: the later of "
        "`catalog_as_of` and `offers_as_of`"
    )
    catalog_as_of: str | None = Field(
        description="the newest date of the catalog's own price fields (`street_price`, "
        "`cloud_price` of GET /api/v1/gpus/{slug})"
    )
    offers_as_of: str | None = Field(
        description="the newest `as_of` of GET /api/v1/offers (what `rent_from` and "
        "`buy_at` are read from)"
    )
    database_backend: str


@router.get("/health", response_model=Health)
@router.get("/ready", response_model=Health, include_in_schema=False)
async def health(request: Request) -> JSONResponse:
    """Ready when the database answers, its schema is at the code's head, it (and the disk
    under it) can take writes. The verdict is at most REFRESH_S (+ one check) old."""
    cached = getattr(request.app.state, "readiness", None)
    if cached is not None and time.monotonic() - cached[0] <= 2 * REFRESH_S + HEALTH_TIMEOUT_S:
        checks = cached[1]
    else:
        checks = await check_now(request)
    failed = {k: v for k, v in checks.items() if v != "ok"}
    body: dict[str, Any] = Health(
        status="degraded" if failed else "ok",
        database=checks.get("database", "failed"),
        checks=checks,
    ).model_dump()
    if not failed:
        return JSONResponse(body)
    first = next(iter(failed))
    body |= error_body("unavailable", f"not ready: {first} {failed[first]}", {"field": first})
    return JSONResponse(body, status_code=503, headers={"retry-after": "5"})


@router.get("/meta", response_model=Meta)
def meta(session: SessionDep) -> Meta:
    newest, catalog_as_of, offers_as_of = meta_service.dates(session)
    return Meta(
        name="GPU Advisor",
        version=__version__,
        catalog_size=catalog.catalog_size(session),
        data_as_of=newest,
        catalog_as_of=catalog_as_of,
        offers_as_of=offers_as_of,
        database_backend=session.get_bind().dialect.name,
    )

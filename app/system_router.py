"""Health and meta."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text

from app import __version__
from app.catalog import service as catalog
from app.deps import SessionDep

router = APIRouter(prefix="/api/v1", tags=["system"])


class Health(BaseModel):
    status: str
    database: str


class Meta(BaseModel):
    name: str
    version: str
    catalog_size: int
    data_as_of: str | None
    database_backend: str


@router.get("/health", response_model=Health)
def health(session: SessionDep) -> JSONResponse:
    try:
        session.execute(text("SELECT 1"))
    except Exception as exc:  # the point of a health check is to report, not raise
        body = Health(status="degraded", database=f"unreachable: {type(exc).__name__}")
        return JSONResponse(body.model_dump(), status_code=503)
    return JSONResponse(Health(status="ok", database="ok").model_dump())


@router.get("/meta", response_model=Meta)
def meta(session: SessionDep) -> Meta:
    return Meta(
        name="GPU Advisor",
        version=__version__,
        catalog_size=catalog.catalog_size(session),
        data_as_of=catalog.data_as_of(session),
        database_backend=session.get_bind().dialect.name,
    )

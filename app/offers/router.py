"""JSON API for offers: what each GPU costs to rent or buy, dated and sourced."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from app.catalog.router import split_csv
from app.deps import SessionDep, SettingsDep
from app.offers import service
from app.offers.repository import OfferFilter
from app.offers.schemas import OfferPage

router = APIRouter(prefix="/api/v1/offers", tags=["offers"])


@router.get("", response_model=OfferPage, summary="Cloud and purchase offers, filtered")
def list_offers(
    session: SessionDep,
    settings: SettingsDep,
    gpu: Annotated[list[str] | None, Query(max_length=80, description="catalog slug(s)")] = None,
    provider: Annotated[list[str] | None, Query(max_length=80)] = None,
    kind: Literal["cloud", "purchase"] | None = None,
    min_gpus: Annotated[int | None, Query(ge=1, le=1024, description="GPUs per instance")] = None,
    max_usd_per_hour: Annotated[
        float | None, Query(gt=0, le=100_000, description="whole-instance on-demand price")
    ] = None,
    include_stale: Annotated[
        bool, Query(description="include offers older than the server's stale age")
    ] = True,
    limit: Annotated[int, Query(ge=1, le=service.MAX_LIMIT)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> OfferPage:
    f = OfferFilter(
        gpus=split_csv(gpu),
        providers=split_csv(provider),
        min_gpus=min_gpus,
        max_usd_per_hour=max_usd_per_hour,
    )
    return service.list_offers(
        session, settings, f, kind=kind, include_stale=include_stale, limit=limit, offset=offset
    )

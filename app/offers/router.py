"""JSON API for offers: what each GPU costs to rent or buy, dated and sourced, and one catalog
GPU with its offers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from app.catalog import service as catalog
from app.catalog.router import split_csv
from app.catalog.schemas import BackendIn, PrecisionIn, SegmentIn, VendorIn
from app.deps import LIMIT, OFFSET, AdminDep, SessionDep, SettingsDep
from app.offers import service
from app.offers.gpu_list import GpuQuery, gpu_list
from app.offers.repository import OfferFilter
from app.offers.schemas import GpuCompareOut, GpuListPage, GpuWithOffers, OfferPage
from app.vocab import MOST_GPUS, OfferKind

router = APIRouter(prefix="/api/v1/offers", tags=["offers"])
# Under the catalog's prefix and tag; included after the catalog's router, so its fixed paths
# (/compare) match first.
gpu_router = APIRouter(prefix="/api/v1/gpus", tags=["catalog"])


@gpu_router.get("", response_model=GpuListPage, summary="List and filter GPUs")
# Here, not in the catalog's router: the two price limits are on the offers' prices (the
# catalog may not know offers), as the catalog page's are. allow_inf_nan=False:
# ?min_memory_gb=nan is "must be a finite number", where the bound checks would call it "less
# than or equal to 10000" (NaN compares false with everything).
def list_gpus(
    session: SessionDep,
    settings: SettingsDep,
    vendor: Annotated[
        list[VendorIn] | None, Query(description="nvidia, amd, intel or apple, in any case")
    ] = None,
    segment: Annotated[list[SegmentIn] | None, Query(description="in any case")] = None,
    architecture: Annotated[list[str] | None, Query(max_length=80)] = None,
    backend: Annotated[BackendIn | None, Query(description="in any case")] = None,
    min_memory_gb: Annotated[float | None, Query(ge=0, le=10_000, allow_inf_nan=False)] = None,
    max_memory_gb: Annotated[float | None, Query(ge=0, le=10_000, allow_inf_nan=False)] = None,
    max_price_usd: Annotated[
        float | None,
        Query(
            gt=0,
            le=10_000_000,
            allow_inf_nan=False,
            description="what a recommendation pays to buy one card (`buy_at.usd`, shown on "
            "each item; purchase basis auto) at most this; a GPU without such a price (none, "
            "or only a launch price more than three years old) is left out",
        ),
    ] = None,
    max_hourly_usd: Annotated[
        float | None,
        Query(
            gt=0,
            le=10_000,
            allow_inf_nan=False,
            description="the GPU's 'from' price (`rent_from.usd_per_gpu_hour`, shown on each "
            "item: the lowest launchable on-demand $/GPU-h) at most this; a GPU without one is "
            "left out",
        ),
    ] = None,
    precision: Annotated[
        list[PrecisionIn] | None, Query(description="has a dense figure for each (any case)")
    ] = None,
    feature: Annotated[
        str | None,
        Query(max_length=40, description="hardware feature, e.g. bf16, fp8, flash_attention_2"),
    ] = None,
    q: Annotated[str | None, Query(max_length=100, description="free text")] = None,
    sort: Annotated[
        str | None,
        Query(
            max_length=40,
            description="a numeric catalog field, or `rent_from.usd_per_gpu_hour` / "
            "`buy_at.usd` (the offer prices each item shows, which `max_hourly_usd` / "
            "`max_price_usd` read); prefix '-' for descending. `cloud_price_usd_per_hour` "
            "sorts by `rent_from.usd_per_gpu_hour` (the quoted `cloud_price` is a price seen "
            "elsewhere, never ranked)",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=catalog.MAX_LIMIT, description=LIMIT)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000, description=OFFSET)] = 0,
) -> GpuListPage:
    query = GpuQuery(
        vendors=list(vendor or []),
        segments=list(segment or []),
        architectures=split_csv(architecture),
        backend=backend,
        min_memory_gb=min_memory_gb,
        max_memory_gb=max_memory_gb,
        max_price_usd=max_price_usd,
        max_hourly_usd=max_hourly_usd,
        precisions=list(precision or []),
        feature=feature,
        q=q,
        sort=sort,
        limit=limit,
        offset=offset,
    )
    # the command line's `gpu-advisor gpus` lists through the same function
    return gpu_list(session, settings, query)


# Here, not in the catalog's router: the prices compared are the offers' (the catalog may not
# know offers), as on the compare page. Before "/{slug}", which would take "compare" as a slug.
@gpu_router.get(
    "/compare", response_model=GpuCompareOut, summary="Side by side, with ratios to the first"
)
def compare(
    session: SessionDep,
    settings: SettingsDep,
    slugs: Annotated[
        str,
        Query(min_length=3, max_length=1000, description="catalog slugs, comma-separated"),
    ],
) -> GpuCompareOut:
    return service.compare(session, settings, slugs.split(","))


@gpu_router.get(
    "/{slug}", response_model=GpuWithOffers, summary="One GPU with all fields, sources and offers"
)
def get_gpu(session: SessionDep, settings: SettingsDep, slug: str) -> GpuWithOffers:
    return service.with_offers(session, settings, catalog.get_gpu(session, slug))


@gpu_router.delete(
    "/{slug}", status_code=status.HTTP_204_NO_CONTENT, summary="Delete a GPU and its offers"
)
def delete_gpu(session: SessionDep, _admin: AdminDep, slug: str) -> Response:
    service.delete_gpu(session, slug)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("", response_model=OfferPage, summary="Cloud and purchase offers, filtered")
def list_offers(
    session: SessionDep,
    settings: SettingsDep,
    gpu: Annotated[list[str] | None, Query(max_length=80, description="catalog slug(s)")] = None,
    provider: Annotated[list[str] | None, Query(max_length=80)] = None,
    kind: OfferKind | None = None,
    min_gpus: Annotated[int | None, Query(ge=1, le=1024, description="GPUs per instance")] = None,
    max_usd_per_hour: Annotated[
        float | None,
        Query(
            gt=0,
            le=100_000,
            allow_inf_nan=False,  # nan is "not finite", never "not <= 100000"
            description="whole-instance on-demand price",
        ),
    ] = None,
    include_stale: Annotated[
        bool, Query(description="include offers older than the server's stale age")
    ] = True,
    limit: Annotated[int, Query(ge=1, le=service.MAX_LIMIT, description=LIMIT)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000, description=OFFSET)] = 0,
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


@router.get(
    "/launch-spec",
    summary="A SkyPilot task that rents an offer's instance and benchmarks it (nothing launched)",
    response_class=Response,
    responses={200: {"content": {"application/x-yaml": {}}}},
)
def launch_spec(
    session: SessionDep,
    settings: SettingsDep,
    gpu: Annotated[str, Query(min_length=1, max_length=80, description="catalog slug")],
    upload: Annotated[
        str, Query(min_length=8, max_length=500, description="server URL the report goes to")
    ],
    gpus: Annotated[int, Query(ge=1, le=MOST_GPUS, description="GPUs the job needs")] = 1,
    provider: Annotated[str | None, Query(max_length=80)] = None,
    instance_type: Annotated[str | None, Query(max_length=200)] = None,
    allow_spot: bool = False,
) -> Response:
    text = service.launch_spec(
        session,
        settings,
        gpu=gpu,
        gpus=gpus,
        upload_url=upload,
        provider=provider,
        instance_type=instance_type,
        allow_spot=allow_spot,
    )
    return Response(
        text,
        media_type="application/x-yaml",
        headers={"Content-Disposition": f'attachment; filename="gpu-advisor-bench-{gpu}.yaml"'},
    )

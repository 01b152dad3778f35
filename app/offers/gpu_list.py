"""The GPU list with its filters (GET /api/v1/gpus and `gpu-advisor gpus`): one function, so
the command line and the API list the same GPUs for the same question."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.catalog import service as catalog
from app.catalog.repository import GpuFilter
from app.config import Settings
from app.errors import InvalidInput
from app.offers import service
from app.offers.schemas import GpuListPage
from app.shipped.rules import load_rules


@dataclass(frozen=True)
class GpuQuery:
    """The list's filters, as GET /api/v1/gpus names them (its docs say what each reads)."""

    vendors: Sequence[str] = ()
    segments: Sequence[str] = ()
    architectures: Sequence[str] = ()
    backend: str | None = None
    min_memory_gb: float | None = None
    max_memory_gb: float | None = None
    max_price_usd: float | None = None
    max_hourly_usd: float | None = None
    precisions: Sequence[str] = ()
    feature: str | None = None
    q: str | None = None
    sort: str | None = None
    limit: int = 100
    offset: int = 0


def gpu_list(session: Session, settings: Settings, query: GpuQuery) -> GpuListPage:
    """The catalog's GPUs that pass ``query``, each with the two offer prices its price
    filters and sorts read (rent_from, buy_at)."""
    lo, hi = query.min_memory_gb, query.max_memory_gb
    if lo is not None and hi is not None and hi < lo:
        # a crossed range matches nothing: say so, as a bad value is, not an empty 200
        raise InvalidInput(
            f"max_memory_gb {hi:g} is below min_memory_gb {lo:g}: "
            "no GPU can match; swap them or drop one",
            field="max_memory_gb",
        )
    architectures = list(query.architectures)
    if architectures:
        catalog.require_architectures(session, architectures, "architecture")
    slugs = (
        set(catalog.slugs_with_feature(session, query.feature, load_rules(settings.data_dir)))
        if query.feature
        else None
    )
    rent, buys = service.catalog_prices(session)  # once: the filters and the items read them
    priced = service.priced_within(session, query.max_hourly_usd, query.max_price_usd, (rent, buys))
    if priced is not None:
        slugs = priced if slugs is None else slugs & priced
    q = query.q.strip() if query.q and query.q.strip() else None
    f = GpuFilter(
        vendors=list(query.vendors),
        segments=list(query.segments),
        architectures=architectures,
        backend=query.backend,
        min_memory_gb=lo,
        max_memory_gb=hi,
        precisions=list(query.precisions),
        q=q,
        slugs=sorted(slugs) if slugs is not None else None,
    )
    sorts = service.price_sorts(rent, buys)
    page = catalog.list_gpus(
        session,
        f,
        sort=service.list_sort(query.sort),
        limit=query.limit,
        offset=query.offset,
        sort_values=sorts,
    )
    return service.listed(settings, page, rent, buys)

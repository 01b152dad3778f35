"""Offer use cases shared by the API, the pages, the CLI and the recommender."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from datetime import date, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sqlalchemy.orm import Session

from app.catalog import repository as catalog_repository
from app.catalog import service as catalog
from app.catalog.schemas import GpuOut, GpuPage
from app.config import Settings
from app.db import Snapshots
from app.domain.cost import (
    LAUNCH_PRICE_YEARS,
    BuyPrice,
    CloudOffer,
    GpuOffers,
    OfferBook,
    PurchaseOffer,
    launch_is_stale,
    seen_text,
)
from app.domain.cost import buy_price as cost_buy_price
from app.domain.rent_from import RentFrom, inconsistency, rent_from, usable
from app.errors import InvalidInput, no_offers_from
from app.offers import repository
from app.offers.files import OfferFileError, ParsedFile, parse_file
from app.offers.mapping import load_mapping
from app.offers.models import CloudOfferRow, PurchaseOfferRow
from app.offers.repository import OfferFilter
from app.offers.schemas import (
    BuyAtOut,
    GpuCompareOut,
    GpuCompareRow,
    GpuListItem,
    GpuListPage,
    GpuWithOffers,
    ImportReport,
    OfferOut,
    OfferPage,
    RentFromOut,
    SeenElsewhereOut,
    SkippedOut,
)

MAX_LIMIT = 500

__all__ = ["OfferFileError", "import_files", "list_offers", "offers_for_gpu"]


def stale_cutoff(settings: Settings, today: date | None = None) -> str:
    """Offers dated before this ISO day are stale ('2026-07' counts as 2026-07-01)."""
    return ((today or date.today()) - timedelta(days=settings.offer_stale_days)).isoformat()


def is_stale(as_of: str, cutoff: str) -> bool:
    return as_of < cutoff


def _quoted(origin: str, accelerator: str | None) -> bool:
    # Seeded without the provider's accelerator name: a per-GPU price data/gpus quotes from a
    # note or a blog, not a provider's catalog (data/offers/README.md).
    return origin == "seed" and accelerator is None


def cloud_out(row: CloudOfferRow, cutoff: str) -> OfferOut:
    why = inconsistency(row.usd_per_hour, row.spot_usd_per_hour)
    offer = CloudOffer(
        **_offer_fields(getattr(row, f) for f in repository.CLOUD_FIELDS),
        quoted=_quoted(row.origin, row.accelerator),
    )
    return OfferOut(
        id=row.id,
        gpu=row.gpu_slug,
        kind="cloud",
        provider=row.provider,
        instance_type=row.instance_type,
        gpus=row.gpus,
        vcpus=row.vcpus,
        ram_gib=row.ram_gb,
        usd_per_hour=row.usd_per_hour,
        spot_usd_per_hour=row.spot_usd_per_hour,
        usd_per_gpu_hour=round(row.usd_per_hour / row.gpus, 4),
        tier=row.tier,
        regions=row.regions,
        as_of=row.as_of,
        source=row.source,
        stale=is_stale(row.as_of, cutoff),
        origin=row.origin,
        inconsistent=why is not None,
        inconsistent_reason=why,
        launchable=usable(offer),
    )


def purchase_out(row: PurchaseOfferRow, cutoff: str) -> OfferOut:
    return OfferOut(
        id=row.id,
        gpu=row.gpu_slug,
        kind="purchase",
        usd=row.usd,
        condition=row.condition,
        as_of=row.as_of,
        source=row.source,
        stale=is_stale(row.as_of, cutoff),
        origin=row.origin,
    )


def _known_gpus(session: Session, slugs: Sequence[str], field: str) -> None:
    """A slug the catalog does not hold is a typo, said as one (it read as an empty table
    "0 offers" or as "no launchable offer of nosuch")."""
    found = catalog_repository.get_many(session, list(slugs)) if slugs else {}
    unknown = [g for g in slugs if g not in found]
    if unknown:
        raise InvalidInput(catalog.unknown_gpus(session, unknown), field=field)


def _cloud_filters_fit(session: Session, f: OfferFilter, kind: str | None) -> None:
    """A filter only cloud offers have, asked of purchases, or a provider no offer comes from,
    is refused naming it: either had answered as if it were not there (every purchase listed
    under ``kind=purchase&min_gpus=8``) or with a silent empty page (a misspelt provider)."""
    asked = {
        "provider": bool(f.providers),
        "min_gpus": f.min_gpus is not None,
        "max_usd_per_hour": f.max_usd_per_hour is not None,
    }
    if kind == "purchase":
        for field, given in asked.items():
            if given:
                raise InvalidInput(
                    f"{field} filters cloud offers; a purchase offer is one card with no "
                    "provider or hourly price: leave it out, or ask kind=cloud",
                    field=field,
                )
    if f.providers:
        known = {p.lower(): p for p in repository.cloud_providers(session)}
        unknown = sorted({p for p in f.providers if p.lower() not in known})
        if unknown:
            raise InvalidInput(
                no_offers_from(unknown, known.values()),
                field="provider",
            )


def list_offers(
    session: Session,
    settings: Settings,
    f: OfferFilter,
    *,
    kind: str | None = None,
    include_stale: bool = True,
    limit: int = 100,
    offset: int = 0,
    today: date | None = None,
    quoted: bool = True,
) -> OfferPage:
    """The offers that pass ``f``; ``quoted=False`` leaves out the catalog's quoted per-GPU
    prices (a figure seen elsewhere, never an instance to rent: ``seen_price`` shows it)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    if offset < 0:
        raise InvalidInput("offset must be 0 or more", field="offset")
    _known_gpus(session, f.gpus, "gpu")
    _cloud_filters_fit(session, f, kind)
    cutoff = stale_cutoff(settings, today)
    if not include_stale:
        f = OfferFilter(**{**f.__dict__, "fresh_since": cutoff})
    items: list[OfferOut] = []
    if kind in (None, "cloud"):
        items += [
            cloud_out(r, cutoff)
            for r in repository.list_cloud(session, f)
            if quoted or not _quoted(r.origin, r.accelerator)
        ]
    cloud_only = f.providers or f.min_gpus is not None or f.max_usd_per_hour is not None
    if kind in (None, "purchase") and not (kind is None and cloud_only):
        items += [purchase_out(r, cutoff) for r in repository.list_purchase(session, f)]
    return OfferPage(
        total=len(items),
        limit=limit,
        offset=offset,
        stale_after_days=settings.offer_stale_days,
        items=items[offset : offset + limit],
    )


def delete_gpu(session: Session, slug: str) -> None:
    """Delete a catalog GPU and its offers in one transaction: offers left behind would be
    listed against a GPU that is gone, and come back with a GPU re-created under the slug.
    Here and not in the catalog, which knows nothing of offers."""
    catalog.delete_gpu(session, slug)
    repository.delete_for_gpu(session, slug)


def offers_for_gpu(session: Session, settings: Settings, slug: str) -> list[OfferOut]:
    """One GPU's offers as its detail (API and page) lists them: what can be rented or bought.
    The catalog's quoted price is no offer (issue 23): the detail shows it beside them as
    ``seen_price``, "seen at $x (source, date)"; listed among them, the RTX 4090's Vast.ai
    quote had been the cheapest row of its offers."""
    f = OfferFilter(gpus=[slug])
    return list_offers(session, settings, f, limit=MAX_LIMIT, quoted=False).items


def with_offers(session: Session, settings: Settings, gpu: GpuOut) -> GpuWithOffers:
    rent, buys = catalog_prices(session)
    found = rent.get(gpu.slug)
    return GpuWithOffers(
        **gpu.model_dump(),
        offers=offers_for_gpu(session, settings, gpu.slug),
        rent_from=RentFromOut(**asdict(found)) if found else None,
        buy_at=buy_at(buys.get(gpu.slug), stale_cutoff(settings)),
        seen_price=seen_price(gpu),
    )


def seen_price(gpu: GpuOut) -> SeenElsewhereOut | None:
    """The entry's quoted `cloud_price` labelled as seen elsewhere, with its source's title
    (the RTX 4090's $0.136 Vast.ai quote had read as its cloud price beside a $0.23 'from')."""
    quote = gpu.cloud_price
    if quote is None:
        return None
    ref = next((r for r in gpu.sources if r.id == quote.source), None)
    title = ref.title if ref is not None else quote.source
    return SeenElsewhereOut(
        provider=quote.provider,
        usd_per_gpu_hour=quote.usd_per_hour,
        as_of=quote.as_of,
        source=title,
        text=seen_text(quote.usd_per_hour, quote.provider, title, quote.as_of),
    )


def buy_at(b: BuyPrice | None, cutoff: str) -> BuyAtOut | None:
    """The buy price as GET /api/v1/gpus/{slug} gives it: dated, flagged stale as an offer is
    (older than ``cutoff``), with the data's caveat on it where there is one."""
    if b is None:
        return None
    if b.offer is not None:
        o = b.offer
        return BuyAtOut(
            usd=o.usd,
            condition=o.condition,
            as_of=o.as_of,
            source=o.source,
            stale=is_stale(o.as_of, cutoff),
            note=o.note,
        )
    old = b.stale_launch
    note = (
        f"no current price: the launch price (${old.usd:,.0f}, {old.as_of}) is more than "
        f"{LAUNCH_PRICE_YEARS} years old"
        if old is not None
        else "no current price"
    )
    return BuyAtOut(usd=None, condition=None, note=note)


# ---------------------------------------------------------------- the recommender's view


def cloud_offers_by_gpu(session: Session) -> dict[str, list[CloudOffer]]:
    """Every GPU's cloud offers a recommendation may rent, rank, launch or quote a "from"
    price on: all but those whose prices contradict each other (rent_from.inconsistency),
    which GET /api/v1/offers still lists, flagged."""
    out: dict[str, list[CloudOffer]] = {}
    for slug, offers in _all_cloud_offers(session).items():
        kept = [o for o in offers if inconsistency(o.usd_per_hour, o.spot_usd_per_hour) is None]
        if kept:
            out[slug] = kept
    return out


def _all_cloud_offers(session: Session) -> dict[str, list[CloudOffer]]:
    out: dict[str, list[CloudOffer]] = {}
    for slug, *values, origin in repository.all_cloud(session):
        fields = _offer_fields(values)
        quoted = _quoted(origin, fields["accelerator"])
        out.setdefault(slug, []).append(CloudOffer(**fields, quoted=quoted))
    return out


def _offer_fields(values: Iterable[Any]) -> dict[str, Any]:
    """A cloud offer's columns (repository.CLOUD_FIELDS) as CloudOffer's fields: the column
    ``ram_gb`` holds the catalogs' MemoryGiB as read, which the domain names in its unit."""
    fields = dict(zip(repository.CLOUD_FIELDS, values, strict=True))
    fields["ram_gib"] = fields.pop("ram_gb")
    return fields


def purchase_offers_by_gpu(session: Session) -> dict[str, list[PurchaseOffer]]:
    out: dict[str, list[PurchaseOffer]] = {}
    today = date.today()  # a launch price's age (cost.launch_is_stale)
    for slug, *values in repository.all_purchase(session):
        fields = dict(zip(repository.PURCHASE_FIELDS, values, strict=True))
        stale = fields["condition"] == "launch" and launch_is_stale(fields["as_of"], today)
        out.setdefault(slug, []).append(PurchaseOffer(**fields, stale=stale))
    return out


# ---------------------------------------------------------------- import


def import_files(
    session: Session,
    settings: Settings,
    paths: Sequence[Path],
    *,
    provider: str | None = None,
    as_of: str | None = None,
    source: str | None = None,
) -> ImportReport:
    """Parse every file first (a broken one raises OfferFileError and nothing is written),
    then upsert; the caller's session commits once, so the import is one transaction."""
    mapping = load_mapping(settings.data_dir)
    day = as_of or date.today().isoformat()
    parsed: list[ParsedFile] = [
        parse_file(p, mapping, provider=provider, as_of=day, source=source) for p in paths
    ]
    known = {r.slug for r in catalog_repository.all_gpus(session)}
    report = ImportReport(files=[str(p) for p in paths])
    existing = repository.cloud_by_key(session)
    seen: set[tuple[str, str]] = set()
    for pf in parsed:
        report.skipped += [
            SkippedOut(
                file=pf.path.name,
                instance_type=s.instance_type,
                accelerator=s.accelerator,
                reason=s.reason,
            )
            for s in pf.skipped
        ]
        for offer in pf.offers:
            key = (offer.provider, offer.instance_type)
            refused = None
            if offer.gpu_slug not in known:
                refused = f"gpu '{offer.gpu_slug}' is not in the catalog"
            elif key in seen:
                refused = f"{offer.provider} {offer.instance_type} appears twice; first kept"
            if refused is not None:
                report.skipped.append(
                    SkippedOut(
                        file=pf.path.name,
                        instance_type=offer.instance_type,
                        accelerator=offer.accelerator,
                        reason=refused,
                    )
                )
                continue
            seen.add(key)
            values = {**offer.values(), "origin": "import"}
            row = existing.get(key)
            if row is None:
                existing[key] = repository.add_cloud(session, values)
                report.added += 1
            elif repository.changed(row, values):
                repository.update(session, row, values)
                report.updated += 1
            else:
                report.unchanged += 1
    repository.flush(session)
    return report


def unmapped(
    settings: Settings, paths: Sequence[Path] = (), provider: str | None = None
) -> list[tuple[str, str, int, str]]:
    """(cloud, accelerator, instances, why) for every accelerator no rule maps, in the
    shipped snapshot and in the given files."""
    mapping = load_mapping(settings.data_dir)
    files = list(paths) or [settings.data_dir / "offers" / "skypilot-snapshot.csv"]
    counts: dict[tuple[str, str], tuple[int, str]] = {}
    for path in files:
        pf = parse_file(path, mapping, provider=provider, as_of=date.today().isoformat())
        for s in pf.skipped:
            if s.accelerator is None or s.reason.startswith("no on-demand"):
                continue
            n, _ = counts.get((s.cloud, s.accelerator), (0, s.reason))
            counts[(s.cloud, s.accelerator)] = (n + 1, s.reason)
    return sorted((c, a, n, why) for (c, a), (n, why) in counts.items())


def launch_spec(
    session: Session,
    settings: Settings,
    *,
    gpu: str,
    gpus: int,
    upload_url: str,
    provider: str | None = None,
    instance_type: str | None = None,
    allow_spot: bool = False,
) -> str:
    """The SkyPilot task for the named offer, or the cheapest launchable one for the GPU: one
    instance, or several of one offer as SkyPilot nodes where no one instance holds ``gpus``."""
    from app.domain import topology
    from app.domain.cost import (
        RentalPolicy,
        biggest_accepted,
        choose_offer,
        instance_too_small,
    )
    from app.offers.launch import NotLaunchable, task_yaml, upload_url_problem

    problem = upload_url_problem(upload_url)
    if problem:
        raise InvalidInput(problem, field="upload")
    _known_gpus(session, [gpu], "gpu")
    every = [o for o in _all_cloud_offers(session).get(gpu, []) if o.accelerator]
    # a provider in any case, as `offers list --provider` and the offers API read it
    # (repository.OfferFilter): "Lambda" had been "no launchable offer … (there are: lambda)"
    provider = provider.strip().lower() if provider else provider
    named = [
        o
        for o in every
        if provider in (None, o.provider.lower()) and instance_type in (None, o.instance_type)
    ]
    whys = [inconsistency(o.usd_per_hour, o.spot_usd_per_hour) for o in named]
    if (provider or instance_type) and named and all(whys):
        # what was named exists, but only with prices that contradict each other: said so,
        # not "no such provider / instance type"
        field = "instance_type" if instance_type else "provider"
        raise InvalidInput(
            f"{named[0].provider} {named[0].instance_type}: {whys[0]}"
            + (f" (and {len(named) - 1} more like it)" if len(named) > 1 else ""),
            field=field,
        )
    launchable = [o for o in every if inconsistency(o.usd_per_hour, o.spot_usd_per_hour) is None]
    if not launchable:
        raise InvalidInput(
            f"no launchable offer of {gpu} (see `gpu-advisor offers list --gpu {gpu}`)",
            field="gpu",
        )
    # Each filter that leaves nothing is named, with what there is to choose from: "no offer
    # of h100-sxm" for a mistyped provider sent the user to fix the wrong option.
    offers = _narrowed(launchable, gpu, "provider", provider)
    offers = _narrowed(offers, gpu, "instance_type", instance_type)
    # more GPUs than one instance holds are whole servers side by side (16 H100s: two 8-GPU
    # nodes), from a provider's own instances, as a recommendation rents them (choose_offer)
    node = topology.node_size(catalog.get_spec(session, gpu, "gpu"))
    policy = RentalPolicy(allow_spot=allow_spot, multi_node=True)
    choice = choose_offer(offers, gpus, policy, node_gpus=min(gpus, node))
    if choice is None:
        # why, in the words a recommendation's row uses: several servers can be booked now,
        # so "with 16 GPU(s) or more" no longer said what was missing
        where = f" from {provider}" if provider else ""
        biggest = biggest_accepted(offers, policy)
        why = (
            "its offers are spot prices only (--allow-spot, or allow_spot=true, takes one)"
            if biggest is None
            else instance_too_small(gpus, biggest, node if gpus > node else None)
        )
        raise InvalidInput(
            f"no launchable offer of {gpu}{where} for {gpus} GPU(s): {why} "
            f"(see `gpu-advisor offers list --gpu {gpu}`)",
            field="gpus",
        )
    try:
        return task_yaml(choice.offer, gpu, upload_url, nodes=choice.instances)
    except NotLaunchable as exc:
        raise InvalidInput(str(exc), field="instance_type") from exc


def _narrowed(
    offers: list[CloudOffer], gpu: str, field: str, wanted: str | None
) -> list[CloudOffer]:
    """The offers whose ``field`` is ``wanted`` (all when None); none is a 422 naming the field
    and the values there are."""
    if wanted is None:
        return offers
    # a provider is matched in any case (``launch_spec``); an instance type exactly
    fold = str.lower if field == "provider" else str
    kept = [o for o in offers if fold(str(getattr(o, field))) == wanted]
    if not kept:
        have = sorted({str(getattr(o, field)) for o in offers})
        shown = ", ".join(have[:10]) + (f" and {len(have) - 10} more" if len(have) > 10 else "")
        raise InvalidInput(
            f"no launchable offer of {gpu} has {field} '{wanted}' (there are: {shown})",
            field=field,
        )
    return kept


def _load_gpu_offers(session: Session) -> OfferBook:
    cloud, purchase = cloud_offers_by_gpu(session), purchase_offers_by_gpu(session)
    return OfferBook(
        {
            slug: GpuOffers(tuple(cloud.get(slug, ())), tuple(purchase.get(slug, ())))
            for slug in sorted(set(cloud) | set(purchase))
        }
    )


# Every GPU's offers per database, rebuilt only when an offer changes (see app.db.Snapshots):
# loading ~750 offers per recommendation cost as much as ranking them.
# The snapshot owns the prices worked out from it (cost.OfferBook), so they go with it.
_gpu_offers: Snapshots[OfferBook] = Snapshots()


def gpu_offers(session: Session, stamp: tuple[Any, ...] | None = None) -> OfferBook:
    """Every GPU's cloud and purchase offers (read-only; shared between requests) and their
    prices per rental policy; ``stamp``: the offers' stamp when the caller read it with
    others in one query."""
    return _gpu_offers.get(
        session,
        repository.offers_stamp(session) if stamp is None else stamp,
        lambda: _load_gpu_offers(session),
    )


# Every GPU's "from" price, derived from the snapshot above in one pass and kept as long
# as it: the catalog page prices every row on each request.
_rent_from: Snapshots[Mapping[str, RentFrom]] = Snapshots()


def rent_from_by_gpu(
    session: Session, stamp: tuple[Any, ...] | None = None
) -> Mapping[str, RentFrom]:
    """Per GPU slug: the lowest launchable on-demand price per GPU-hour, how many launchable
    offers and the newest date among them (app/domain/rent_from.py); GPUs without a
    launchable offer are absent. Read-only; shared between requests."""
    stamp = repository.offers_stamp(session) if stamp is None else stamp

    def load() -> Mapping[str, RentFrom]:
        found = {slug: rent_from(o.cloud) for slug, o in gpu_offers(session, stamp).items()}
        return MappingProxyType({slug: r for slug, r in found.items() if r is not None})

    return _rent_from.get(session, stamp, load)


def buy_price(session: Session, slug: str) -> BuyPrice | None:
    """What ``slug`` costs to buy as a recommendation prices it (purchase basis "auto": never a
    launch price more than three years old), for the GPU page; None without a purchase offer."""
    offers = gpu_offers(session).get(slug)
    return cost_buy_price(offers.purchase) if offers is not None else None


# Every GPU's buy price as a recommendation pays it, kept with the offers' snapshot as the
# "from" prices are: the catalog page shows one on every row.
_buy_prices: Snapshots[Mapping[str, BuyPrice]] = Snapshots()


def buy_prices_by_gpu(
    session: Session, stamp: tuple[Any, ...] | None = None
) -> Mapping[str, BuyPrice]:
    """``buy_price`` of every GPU with a purchase offer, for the catalog page's price column
    (the figure a recommendation would pay, not the catalog's street-else-launch field).
    Read-only; shared between requests."""
    stamp = repository.offers_stamp(session) if stamp is None else stamp

    def load() -> Mapping[str, BuyPrice]:
        found = {slug: cost_buy_price(o.purchase) for slug, o in gpu_offers(session, stamp).items()}
        return MappingProxyType({slug: b for slug, b in found.items() if b is not None})

    return _buy_prices.get(session, stamp, load)


def catalog_prices(session: Session) -> tuple[Mapping[str, RentFrom], Mapping[str, BuyPrice]]:
    """The catalog page's two price columns, per GPU slug: the "from" rent price
    (``rent_from_by_gpu``) and the buy price (``buy_prices_by_gpu``), on one read of the
    offers' stamp."""
    stamp = repository.offers_stamp(session)
    return rent_from_by_gpu(session, stamp), buy_prices_by_gpu(session, stamp)


def price_sorts(
    rent: Mapping[str, RentFrom], buys: Mapping[str, BuyPrice]
) -> dict[str, dict[str, float | None]]:
    """The GPU list's sorts on the prices its items show (the figures ``priced_within`` reads)."""
    return {
        "rent_from.usd_per_gpu_hour": {s: r.usd_per_gpu_hour for s, r in rent.items()},
        "buy_at.usd": {s: (b.offer.usd if b.offer is not None else None) for s, b in buys.items()},
    }


def listed(
    settings: Settings,
    page: GpuPage,
    rent: Mapping[str, RentFrom],
    buys: Mapping[str, BuyPrice],
) -> GpuListPage:
    """A page of the GPU list, each item with the two offer prices its filters read."""
    cutoff = stale_cutoff(settings)
    # the catalog's items are validated GpuOut already: extended without a second validation
    # of every field (model_dump + GpuListItem(**...) had been ~40 % of the list's time)
    items = [
        GpuListItem.model_construct(
            g.model_fields_set | {"rent_from", "buy_at", "seen_price"},
            **g.__dict__,
            rent_from=RentFromOut(**asdict(r)) if (r := rent.get(g.slug)) else None,
            buy_at=buy_at(buys.get(g.slug), cutoff),
            seen_price=seen_price(g),
        )
        for g in page.items
    ]
    return GpuListPage(total=page.total, limit=page.limit, offset=page.offset, items=items)


# The catalog's own price fields a side-by-side compares on the offers' prices instead, named
# as the GPU list sorts on them: the quoted `cloud_price` is a price seen elsewhere, shown
# (each item's `cloud_price`) but never compared on (issue 23), and a recommendation buys at
# `buy_at`, never at a launch price years old.
COMPARE_PRICES = {
    "cloud_price_usd_per_hour": "rent_from.usd_per_gpu_hour",
    "purchase_usd": "buy_at.usd",
}


def list_sort(sort: str | None) -> str | None:
    """The GPU list's ``sort`` on the prices it shows: the quoted `cloud_price_usd_per_hour`,
    a price seen elsewhere that is never ranked (issue 23), sorts by the bookable "from" price
    (`rent_from.usd_per_gpu_hour`) in its place, as the catalog page's older links do; a
    client's sort by it keeps working. The catalog's `purchase_usd` stays its own field."""
    if sort is None or catalog.sort_field(sort)[0] != _QUOTED_SORT:
        return sort
    return sort.replace(_QUOTED_SORT, COMPARE_PRICES[_QUOTED_SORT])


_QUOTED_SORT = "cloud_price_usd_per_hour"


def compare(session: Session, settings: Settings, slugs: Sequence[str]) -> GpuCompareOut:
    """GPUs side by side with ratios to the first (GET /api/v1/gpus/compare and the compare
    page): the catalog's figures, and the two prices every list and page rents and buys at."""
    specs = catalog.compare(session, slugs)
    rent, buys = catalog_prices(session)
    page = GpuPage(total=len(specs.gpus), limit=len(specs.gpus), offset=0,
                   items=[r.gpu for r in specs.gpus])  # fmt: skip
    items = listed(settings, page, rent, buys).items
    prices = price_sorts(rent, buys)
    base = specs.baseline
    fields = [COMPARE_PRICES.get(f, f) for f in specs.fields]
    rows = []
    for spec, item in zip(specs.gpus, items, strict=True):
        ratios = {COMPARE_PRICES.get(f, f): spec.ratios.get(f) for f in specs.fields}
        for name in COMPARE_PRICES.values():
            mine, theirs = prices[name].get(item.slug), prices[name].get(base)
            if name in ratios:
                ratios[name] = round(mine / theirs, 4) if mine is not None and theirs else None
        for alias, name in COMPARE_PRICES.items():
            # the keys clients read before 2026-12-06, kept as aliases of the offers' ratios
            if name in ratios:
                ratios[alias] = ratios[name]
        rows.append(GpuCompareRow(gpu=item, ratios=ratios))
    return GpuCompareOut(baseline=base, fields=fields, gpus=rows)


def priced_within(
    session: Session,
    max_hourly_usd: float | None,
    max_price_usd: float | None,
    prices: tuple[Mapping[str, RentFrom], Mapping[str, BuyPrice]] | None = None,
) -> set[str] | None:
    """The GPUs whose "from" price (``rent_from_by_gpu``) is at most ``max_hourly_usd`` and
    whose buy price (``buy_prices_by_gpu``: what a recommendation pays) is at most
    ``max_price_usd``; None when neither limit is given. A GPU without the price a limit reads
    is outside it: no launchable on-demand offer, or no current purchase price."""
    if max_hourly_usd is None and max_price_usd is None:
        return None
    # ``prices``: catalog_prices as the caller read them (the GPU list shows them too)
    rent, buys = prices if prices is not None else catalog_prices(session)
    slugs = set(rent) | set(buys)
    if max_hourly_usd is not None:
        slugs = {
            s
            for s in slugs
            if (p := rent.get(s)) is not None
            and p.usd_per_gpu_hour is not None
            # as the list shows it (RentFromOut: 4 decimals): a GPU shown at $0.3333 had been
            # left out by max_hourly_usd=0.3333
            and round(p.usd_per_gpu_hour, 4) <= max_hourly_usd
        }
    if max_price_usd is not None:
        slugs = {
            s
            for s in slugs
            if (b := buys.get(s)) is not None
            and b.offer is not None
            and b.offer.usd <= max_price_usd
        }
    return slugs


OFFER_SORTS = {
    "usd_per_gpu_hour": lambda o: (o.usd_per_gpu_hour is None, o.usd_per_gpu_hour or 0.0),
    "usd_per_hour": lambda o: (o.usd_per_hour is None, o.usd_per_hour or 0.0),
    "gpus": lambda o: (o.kind != "cloud", o.gpus),
    "provider": lambda o: (o.provider or "~", o.instance_type or ""),
    "tier": lambda o: (o.tier or "~", o.usd_per_gpu_hour or 0.0),
    "as_of": lambda o: o.as_of,
    "usd": lambda o: (o.usd is None, o.usd or 0.0),
}


def offers_table(
    session: Session, settings: Settings, slug: str, sort: str | None
) -> tuple[list[OfferOut], list[OfferOut], str]:
    """The GPU page's offers: cloud and purchase, sorted by a known key ('-' descends)."""
    key, descending = catalog.sort_field(sort or "usd_per_gpu_hour")
    if key not in OFFER_SORTS:
        raise InvalidInput(
            f"cannot sort offers by '{key}'; one of: {', '.join(OFFER_SORTS)}", field="sort_offers"
        )
    items = offers_for_gpu(session, settings, slug)
    ordered = sorted(items, key=OFFER_SORTS[key], reverse=descending)
    cloud = [o for o in ordered if o.kind == "cloud"]
    purchase = [o for o in ordered if o.kind == "purchase"]
    return cloud, purchase, sort or "usd_per_gpu_hour"

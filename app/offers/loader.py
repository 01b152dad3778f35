"""data/offers (the SkyPilot snapshot) and the prices in data/gpus/*.yaml -> offer rows.

Idempotent; rows a user imported (origin 'import') are kept as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy.orm import Session

from app.catalog.loader import read_catalog
from app.catalog.schemas import GpuCreate
from app.offers import repository
from app.offers.files import CloudOfferData, OfferFileError, parse_file
from app.offers.mapping import Mapping, load_mapping
from app.vocab import CONDITIONS

# The provider names data/gpus/*.yaml uses, as the provider keys offers use.
_YAML_PROVIDERS = {
    "lambda": ("lambda", None),
    "runpod": ("runpod", None),
    "runpod (community cloud)": ("runpod", "community"),
    "vast.ai": ("vast", None),
    "paperspace": ("paperspace", None),
    "modal": ("modal", None),
    "crusoe": ("crusoe", None),
    "hyperstack": ("hyperstack", None),
    "verda (formerly datacrunch)": ("verda", None),
}


@dataclass
class OfferSeedResult:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    kept_user: int = 0
    removed: int = 0  # seeded purchase prices the data no longer holds
    skipped: list[str] = field(default_factory=list)


# A purchase price's caveat (purchase.yaml `note`): shown with the price, so kept to a line.
NOTE_MAX = 300


@dataclass(frozen=True)
class PurchaseOfferData:
    gpu_slug: str
    condition: str
    usd: float
    as_of: str
    source: str
    # what a reader must know of this price ("one listing, not a market average"); read and
    note: str | None = None

    def values(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _source_text(entry: GpuCreate, source_id: str | None) -> str | None:
    ref = next((s for s in entry.sources if s.id == source_id), None)
    if ref is None:
        return None
    text = f"{ref.title} ({ref.url})" if ref.url else ref.title
    return text if len(text) <= 300 else (ref.url or ref.title)[:300]


def purchase_offers_from_catalog(entries: list[GpuCreate]) -> list[PurchaseOfferData]:
    out: list[PurchaseOfferData] = []
    for e in entries:
        if e.street_price is not None:
            source = _source_text(e, e.street_price.source)
            if source is not None:
                # The shipped street prices are GPU Poet 'best deals': the cheapest eBay and
                # Amazon listings, new or used. Neither a new price nor a used one: "market"
                out.append(
                    PurchaseOfferData(
                        e.slug, "market", e.street_price.usd, e.street_price.as_of, source
                    )
                )
        launch_id = e.field_sources.get("launch_price_usd")
        launch_source = _source_text(e, launch_id)
        if e.launch_price_usd is not None and e.release_year and launch_source:
            out.append(
                PurchaseOfferData(
                    e.slug, "launch", e.launch_price_usd, _launch_date(e, launch_id), launch_source
                )
            )
    return out


def _launch_date(entry: GpuCreate, source_id: str | None) -> str:
    """When a catalog launch price was set: its source's date where that falls in or before the
    release year (the announcement that stated the price: an RTX 4060 priced in May 2023 is
    more than three years old in June 2026, not only in 2027), else the bare release year. A
    source written after the release year (a later article quoting the old price) says nothing
    of the launch month, so it never makes the price look newer."""
    year = str(entry.release_year)
    ref = next((s for s in entry.sources if s.id == source_id), None)
    if ref is not None and ref.date and ref.date[:4] <= year:
        return ref.date
    return year


def read_seed_purchase_offers(data_dir: Path) -> list[PurchaseOfferData]:
    """data/offers/purchase.yaml: new and used prices of one card, each dated and sourced, and
    launch prices of a configuration the catalog's launch field cannot name (an Apple machine at
    the catalog entry's memory): aged like any launch price (cost.launch_is_stale)."""
    path = data_dir / "offers" / "purchase.yaml"
    if not path.exists():
        return []
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise OfferFileError(f"{path}: cannot read: {exc}") from exc
    sources = doc.get("sources") or {}
    out: list[PurchaseOfferData] = []
    for item in doc.get("prices") or []:
        ref = sources.get(item.get("source"))
        if ref is None or item.get("condition") not in CONDITIONS:
            raise OfferFileError(
                f"{path}: {item}: needs a listed source and a {'/'.join(CONDITIONS)} condition"
            )
        text = f"{ref['title']} ({ref['url']})"
        out.append(
            PurchaseOfferData(
                str(item["gpu"]),
                str(item["condition"]),
                float(item["usd"]),
                str(item["as_of"]),
                text if len(text) <= 300 else str(ref["url"])[:300],
                _note(path, item),
            )
        )
    return out


def _note(path: Path, item: dict[str, Any]) -> str | None:
    """A price's optional caveat: one line of text, else the file is rejected naming the
    entry (a number or a mapping there is a typo, not a note)."""
    note = item.get("note")
    if note is None:
        return None
    if not isinstance(note, str) or not note.strip() or len(note) > NOTE_MAX or "\n" in note:
        raise OfferFileError(
            f"{path}: {item.get('gpu')} {item.get('condition')} {item.get('as_of')}: 'note' "
            f"must be one line of text, at most {NOTE_MAX} characters"
        )
    return note.strip()


def cloud_offers_from_catalog(entries: list[GpuCreate], mapping: Mapping) -> list[CloudOfferData]:
    """The catalog's per-GPU rental prices, as one-GPU offers of their provider."""
    out: list[CloudOfferData] = []
    for e in entries:
        price = e.cloud_price
        if price is None:
            continue
        key, tier = _YAML_PROVIDERS.get((price.provider or "").lower(), (None, None))
        source = _source_text(e, price.source)
        if key is None or source is None:
            continue
        out.append(
            CloudOfferData(
                gpu_slug=e.slug,
                provider=key,
                instance_type=f"1x {e.name} (per-GPU price)",
                accelerator=None,
                gpus=1,
                vcpus=None,
                ram_gb=None,
                usd_per_hour=price.usd_per_hour,
                spot_usd_per_hour=None,
                tier=tier or mapping.tier_for(key),
                regions=None,
                as_of=price.as_of,
                source=source,
            )
        )
    return out


def read_seed_cloud_offers(data_dir: Path, mapping: Mapping) -> list[CloudOfferData]:
    path = data_dir / "offers" / "seed.yaml"
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise OfferFileError(f"{path}: cannot read: {exc}") from exc
    by_key: dict[tuple[str, str], CloudOfferData] = {}
    for item in doc.get("cloud_files") or []:
        parsed = parse_file(
            data_dir / "offers" / str(item["file"]),
            mapping,
            provider=item.get("provider"),
            as_of=str(item["as_of"]),
            source=item.get("source"),
        )
        for offer in parsed.offers:  # a later file replaces an earlier one's row
            by_key[(offer.provider, offer.instance_type)] = offer
    return list(by_key.values())


def seed(session: Session, data_dir: Path) -> OfferSeedResult:
    mapping = load_mapping(data_dir)
    entries = read_catalog(data_dir)
    known = {e.slug for e in entries}
    result = OfferSeedResult()
    cloud = read_seed_cloud_offers(data_dir, mapping) + cloud_offers_from_catalog(entries, mapping)
    existing = repository.cloud_by_key(session)
    for offer in cloud:
        if offer.gpu_slug not in known:
            result.skipped.append(
                f"{offer.provider} {offer.instance_type}: {offer.gpu_slug} not in catalog"
            )
            continue
        _upsert(
            session,
            existing,
            (offer.provider, offer.instance_type),
            offer.values(),
            result,
            cloud=True,
        )
    purchases = repository.purchase_by_key(session)
    seeded: set[tuple[str, str, str]] = set()
    for p in purchase_offers_from_catalog(entries) + read_seed_purchase_offers(data_dir):
        if p.gpu_slug not in known:
            result.skipped.append(f"purchase price of {p.gpu_slug}: not in catalog")
            continue
        key = (p.gpu_slug, p.condition, p.source)
        seeded.add(key)
        _upsert(session, purchases, key, p.values(), result, cloud=False)
    # a seeded price the data relabelled (a 'used' best deal now 'market') or dropped: its old
    # row would stand beside the new one, the same price twice under two conditions
    for key, row in purchases.items():
        if row.origin == "seed" and key not in seeded:
            repository.remove(session, row)
            result.removed += 1
    repository.flush(session)
    return result


def _upsert(
    session: Session,
    existing: dict[Any, Any],
    key: tuple[str, ...],
    values: dict[str, Any],
    result: OfferSeedResult,
    *,
    cloud: bool,
) -> None:
    row = existing.get(key)
    if row is None:
        add = repository.add_cloud if cloud else repository.add_purchase
        existing[key] = add(session, {**values, "origin": "seed"})
        result.inserted += 1
    elif row.origin != "seed":
        result.kept_user += 1
    elif repository.changed(row, values):
        repository.update(session, row, values)
        result.updated += 1
    else:
        result.unchanged += 1

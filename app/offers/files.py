"""Reading offer files: SkyPilot catalog vms.csv (as SkyPilot publishes it), our SkyPilot
snapshot (data/offers/skypilot-snapshot.csv) and a plain CSV of our own columns.

A file is parsed whole before anything is written: a truncated line or text where a number
belongs rejects the file with a message naming the line and the column. Rows that are fine
but cannot be used (CPU-only instances, unmapped accelerators, no price) are skipped, each
with its reason.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from app.offers.mapping import TIERS, Mapping

# SkyPilot writes 99999999 where a cloud has no spot market for an instance.
SPOT_PLACEHOLDER = 99_999_999.0
DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")

SKYPILOT_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price")
SNAPSHOT_COLUMNS = ("cloud", "instance_type", "accelerator", "accelerator_count")
PLAIN_COLUMNS = ("gpu", "provider", "instance_type", "gpus", "usd_per_hour", "as_of", "source")


def is_control(ch: str) -> bool:
    """A character that ends or hides a line where text is written into a file: the C0/C1
    controls (newline, carriage return, tab, escape), format characters (bidi overrides) and
    the Unicode line and paragraph separators."""
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def control_problem(column: str, text: str) -> str | None:
    """Why ``text`` cannot be written as one line (an offer's source, provider or instance
    type goes into a launch task's comment header: a newline there starts a YAML key), or
    None."""
    for i, ch in enumerate(text):
        if is_control(ch):
            return f"column '{column}' contains a control character ({ch!r} at {i})"
    return None


class OfferFileError(ValueError):
    """The file cannot be read as an offer file; nothing from it is written."""


@dataclass(frozen=True)
class CloudOfferData:
    gpu_slug: str
    provider: str
    instance_type: str
    accelerator: str | None
    gpus: int
    vcpus: float | None
    ram_gb: float | None
    usd_per_hour: float
    spot_usd_per_hour: float | None
    tier: str
    regions: int | None
    as_of: str
    source: str

    def values(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Skip:
    cloud: str
    instance_type: str
    accelerator: str | None
    reason: str


@dataclass
class ParsedFile:
    path: Path
    format: str
    provider: str | None
    offers: list[CloudOfferData] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


def _rows(path: Path, text: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise OfferFileError(f"{path.name}: the file is empty")
        header = [h.strip() for h in header]
        rows: list[tuple[int, dict[str, str]]] = []
        for values in reader:
            line = reader.line_num
            if not values or all(not v.strip() for v in values):
                continue
            if len(values) != len(header):
                raise OfferFileError(
                    f"{path.name}: line {line}: {len(values)} fields where the header has "
                    f"{len(header)} (a truncated or malformed line)"
                )
            rows.append((line, {h: v.strip() for h, v in zip(header, values, strict=True)}))
    except csv.Error as exc:
        raise OfferFileError(f"{path.name}: line {reader.line_num}: {exc}") from exc
    return header, rows


def _number(path: Path, line: int, column: str, raw: str | None) -> float | None:
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise OfferFileError(
            f"{path.name}: line {line}: column '{column}': '{raw}' is not a number"
        ) from None
    if value != value or value < 0 or value in (float("inf"), float("-inf")):
        raise OfferFileError(
            f"{path.name}: line {line}: column '{column}': '{raw}' is not a price or count"
        )
    return value


def _count(path: Path, line: int, column: str, raw: str | None) -> int | None:
    value = _number(path, line, column, raw)
    if value is None:
        return None
    if value != int(value):
        raise OfferFileError(
            f"{path.name}: line {line}: column '{column}': '{raw}' is not a whole number"
        )
    return int(value)


def _price(value: float | None) -> float | None:
    """Zero and the placeholder mean 'no price' in the SkyPilot catalog."""
    if value is None or value <= 0 or value >= SPOT_PLACEHOLDER:
        return None
    return value


def _date(path: Path, line: int, raw: str) -> str:
    if not DATE.match(raw):
        raise OfferFileError(
            f"{path.name}: line {line}: column 'as_of': '{raw}' is not a date (YYYY-MM-DD)"
        )
    return raw


def parse_file(
    path: Path,
    mapping: Mapping,
    *,
    provider: str | None = None,
    as_of: str,
    source: str | None = None,
) -> ParsedFile:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise OfferFileError(f"{path}: cannot read: {exc}") from exc
    header, rows = _rows(path, text)
    if all(c in header for c in SKYPILOT_COLUMNS):
        cloud = provider or _cloud_from_path(path, mapping)
        if cloud is None:
            raise OfferFileError(
                f"{path.name}: a SkyPilot vms.csv does not name its cloud; pass --provider "
                "(e.g. --provider lambda)"
            )
        parsed = ParsedFile(path, "skypilot", cloud)
        _skypilot(parsed, rows, mapping, cloud, as_of, source or f"SkyPilot catalog {path}")
    elif all(c in header for c in SNAPSHOT_COLUMNS):
        parsed = ParsedFile(path, "skypilot-snapshot", provider)
        _snapshot(parsed, rows, mapping, provider, as_of)
    elif all(c in header for c in PLAIN_COLUMNS):
        parsed = ParsedFile(path, "plain", provider)
        _plain(parsed, rows, mapping, provider)
    else:
        raise OfferFileError(
            f"{path.name}: unknown columns; expected a SkyPilot vms.csv "
            f"({', '.join(SKYPILOT_COLUMNS)}, ...) or our CSV ({', '.join(PLAIN_COLUMNS)}, ...)"
        )
    return parsed


def _cloud_from_path(path: Path, mapping: Mapping) -> str | None:
    # SkyPilot keeps catalogs/<version>/<cloud>/vms.csv
    parent = path.resolve().parent.name.lower()
    return parent if parent in mapping.providers else None


def _skypilot(
    parsed: ParsedFile,
    rows: Iterable[tuple[int, dict[str, str]]],
    mapping: Mapping,
    cloud: str,
    as_of: str,
    source: str,
) -> None:
    """One row per (instance type, region[, zone]) -> one offer per instance type."""
    path = parsed.path
    groups: dict[str, _Group] = {}
    for line, row in rows:
        instance = row["InstanceType"]
        if not instance:
            raise OfferFileError(f"{path.name}: line {line}: column 'InstanceType' is empty")
        g = groups.setdefault(
            instance,
            _Group(
                accelerator=row["AcceleratorName"],
                count=_number(path, line, "AcceleratorCount", row.get("AcceleratorCount")),
                vcpus=_number(path, line, "vCPUs", row.get("vCPUs")),
                ram=_number(path, line, "MemoryGiB", row.get("MemoryGiB")),
            ),
        )
        price = _price(_number(path, line, "Price", row.get("Price")))
        spot = _price(_number(path, line, "SpotPrice", row.get("SpotPrice")))
        if price is not None:
            g.prices.append(price)
        if spot is not None:
            g.spots.append(spot)
        if row.get("Region"):
            g.regions.add(row["Region"])
    for instance, g in groups.items():
        _add(
            parsed,
            mapping,
            cloud=cloud,
            instance=instance,
            accelerator=g.accelerator,
            count=g.count,
            vcpus=g.vcpus,
            ram=g.ram,
            price=min(g.prices) if g.prices else None,
            spot=min(g.spots) if g.spots else None,
            regions=len(g.regions),
            as_of=as_of,
            source=source,
        )


@dataclass
class _Group:
    """The rows of one instance type (one per region) in a SkyPilot vms.csv."""

    accelerator: str
    count: float | None
    vcpus: float | None
    ram: float | None
    prices: list[float] = field(default_factory=list)
    spots: list[float] = field(default_factory=list)
    regions: set[str] = field(default_factory=set)


def _snapshot(
    parsed: ParsedFile,
    rows: Iterable[tuple[int, dict[str, str]]],
    mapping: Mapping,
    provider: str | None,
    as_of: str,
) -> None:
    path = parsed.path
    for line, row in rows:
        cloud = row["cloud"]
        if provider is not None and cloud != provider:
            continue
        _add(
            parsed,
            mapping,
            cloud=cloud,
            instance=row["instance_type"],
            accelerator=row["accelerator"],
            count=_number(path, line, "accelerator_count", row["accelerator_count"]),
            vcpus=_number(path, line, "vcpus", row.get("vcpus")),
            ram=_number(path, line, "memory_gib", row.get("memory_gib")),
            price=_price(
                _number(path, line, "price_usd_per_hour_min", row.get("price_usd_per_hour_min"))
            ),
            spot=_price(
                _number(path, line, "spot_usd_per_hour_min", row.get("spot_usd_per_hour_min"))
            ),
            regions=_count(path, line, "regions", row.get("regions")),
            as_of=as_of,
            source=row.get("source") or f"SkyPilot catalog snapshot {path.name}",
        )


def _add(
    parsed: ParsedFile,
    mapping: Mapping,
    *,
    cloud: str,
    instance: str,
    accelerator: str,
    count: float | None,
    vcpus: float | None,
    ram: float | None,
    price: float | None,
    spot: float | None,
    regions: int | None,
    as_of: str,
    source: str,
) -> None:
    if problem := _text_problem(
        cloud=cloud, instance_type=instance, accelerator=accelerator, as_of=as_of, source=source
    ):
        parsed.skipped.append(Skip(cloud, instance, accelerator or None, problem))
        return
    if not accelerator or not count:
        parsed.skipped.append(Skip(cloud, instance, None, "CPU-only instance (no accelerator)"))
        return
    if count != int(count):
        parsed.skipped.append(
            Skip(
                cloud,
                instance,
                accelerator,
                f"a fraction of a GPU ({count:g}) is not an instance shape",
            )
        )
        return
    slug = mapping.slug_for(cloud, accelerator, instance)
    if slug is None:
        parsed.skipped.append(Skip(cloud, instance, accelerator, mapping.why_unmapped(accelerator)))
        return
    tier = mapping.tier_for(cloud)
    if price is None:
        if spot is None:
            parsed.skipped.append(Skip(cloud, instance, accelerator, "no on-demand or spot price"))
            return
        price, tier = spot, "spot"
    parsed.offers.append(
        CloudOfferData(
            gpu_slug=slug,
            provider=cloud,
            instance_type=instance,
            accelerator=accelerator,
            gpus=int(count),
            vcpus=vcpus,
            ram_gb=ram,
            usd_per_hour=price,
            spot_usd_per_hour=spot,
            tier=tier,
            regions=regions,
            as_of=as_of,
            source=source,
        )
    )


def _text_problem(**columns: str | None) -> str | None:
    """The first text column with a control character, as a skip reason, or None."""
    for column, text in columns.items():
        if text and (problem := control_problem(column, text)):
            return problem
    return None


def _plain(
    parsed: ParsedFile,
    rows: Iterable[tuple[int, dict[str, str]]],
    mapping: Mapping,
    provider: str | None,
) -> None:
    path = parsed.path
    for line, row in rows:
        for column in PLAIN_COLUMNS:
            if not row.get(column):
                raise OfferFileError(f"{path.name}: line {line}: column '{column}' is empty")
        cloud = provider or row["provider"]
        if problem := _text_problem(
            gpu=row["gpu"],
            provider=cloud,
            instance_type=row["instance_type"],
            accelerator=row.get("accelerator"),
            source=row["source"],
        ):
            parsed.skipped.append(
                Skip(cloud, row["instance_type"], row.get("accelerator") or None, problem)
            )
            continue
        tier = row.get("tier") or mapping.tier_for(cloud)
        if tier not in TIERS:
            raise OfferFileError(
                f"{path.name}: line {line}: column 'tier': '{tier}' is not one of "
                + ", ".join(TIERS)
            )
        gpus = _count(path, line, "gpus", row["gpus"])
        price = _number(path, line, "usd_per_hour", row["usd_per_hour"])
        if not gpus or not price:
            raise OfferFileError(
                f"{path.name}: line {line}: columns 'gpus' and 'usd_per_hour' must be above 0"
            )
        parsed.offers.append(
            CloudOfferData(
                gpu_slug=row["gpu"],
                provider=cloud,
                instance_type=row["instance_type"],
                accelerator=row.get("accelerator") or None,
                gpus=gpus,
                vcpus=_number(path, line, "vcpus", row.get("vcpus")),
                ram_gb=_number(path, line, "ram_gb", row.get("ram_gb")),
                usd_per_hour=price,
                spot_usd_per_hour=_price(
                    _number(path, line, "spot_usd_per_hour", row.get("spot_usd_per_hour"))
                ),
                tier=tier,
                regions=_count(path, line, "regions", row.get("regions")),
                as_of=_date(path, line, row["as_of"]),
                source=row["source"],
            )
        )

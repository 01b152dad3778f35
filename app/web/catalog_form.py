"""The catalog filter form (/gpus): parse and validate the query into a GpuFilter's inputs.

The catalog's filters are a page concern (the API takes the same names as query
parameters); numbers accept the same human forms as the question form (15k, $800).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.catalog.service import sort_field
from app.numbers import NUMBER_HELP
from app.vocab import CATALOG_PRECISIONS
from app.web.forms import MultiItems, fmt_limit, grouped, parse_int, parse_number
from app.web.labels import CHOICES

VENDORS: tuple[tuple[str, str], ...] = tuple(CHOICES["vendors"].items())
SEGMENTS: tuple[tuple[str, str], ...] = tuple(CHOICES["segments"].items())
# Past this the database's integer types overflow; no catalog is that long anyway.
MAX_OFFSET = 1_000_000

CATALOG_SORTS: tuple[tuple[str, str], ...] = (
    ("", "Vendor and name"),
    ("-memory_gb", "Memory, most first"),
    ("memory_gb", "Memory, least first"),
    ("-memory_bandwidth_gbs", "Bandwidth, most first"),
    ("-bf16_tflops", "BF16 TFLOPS, most first"),
    ("-fp16_tflops", "FP16 TFLOPS, most first"),
    ("-fp32_tflops", "FP32 TFLOPS, most first"),
    ("-fp8_tflops", "FP8 TFLOPS, most first"),
    ("purchase_usd", "Price, cheapest first"),
    ("-purchase_usd", "Price, dearest first"),
    ("cloud_from", "Cloud price, cheapest first"),  # the offers' (app/web/catalog_pages.py)
    ("-cloud_from", "Cloud price, dearest first"),
    ("-release_year", "Newest first"),
    ("tdp_w", "Power, lowest first"),
)
PAGE_SIZE = 50


@dataclass
class CatalogForm:
    values: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    vendors: list[str] = field(default_factory=list)
    segments: list[str] = field(default_factory=list)
    precisions: list[str] = field(default_factory=list)
    min_memory_gb: float | None = None
    max_memory_gb: float | None = None
    max_price_usd: float | None = None
    max_hourly_usd: float | None = None
    q: str | None = None
    sort: str | None = None
    offset: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors


_CATALOG_NUMBERS: dict[str, tuple[float, float]] = {
    "min_memory_gb": (0, 4096),
    "max_memory_gb": (0, 4096),
    "max_price_usd": (0, 1e9),
    "max_hourly_usd": (0, 1e6),
}
# Each filter's own examples, as the question form gives its fields': a memory box had said
# "must be a number, like 15k, 8.03B, 1,281,167 or $800"
_EXAMPLES = {
    "min_memory_gb": "like 24 or 80",
    "max_memory_gb": "like 24 or 80",
    "max_price_usd": "like $800 or 2k",
    "max_hourly_usd": "like 0.5 or $2",
}


def parse_catalog(items: MultiItems, sortable: Iterable[str]) -> CatalogForm:
    raw = grouped(items)
    form = CatalogForm()
    for name, valid in (
        ("vendor", [v for v, _ in VENDORS]),
        ("segment", [v for v, _ in SEGMENTS]),
        ("precision", list(CATALOG_PRECISIONS)),
    ):
        # in any case, as the API's filters read them (catalog.schemas.VendorIn): a link's
        # ?vendor=NVIDIA had been "unknown value"
        texts = [t.strip().lower() for t in raw.get(name, []) if t.strip()]
        form.values[name] = texts
        bad = [t for t in texts if t not in valid]
        if bad:
            form.errors[name] = f"unknown value: {', '.join(bad)}"
    form.vendors = [v for v in form.values["vendor"] if v not in form.errors.get("vendor", "")]
    form.segments = list(form.values["segment"]) if "segment" not in form.errors else []
    form.precisions = list(form.values["precision"]) if "precision" not in form.errors else []
    if "vendor" in form.errors:
        form.vendors = []
    for name, (lo, hi) in _CATALOG_NUMBERS.items():
        text = (raw.get(name) or [""])[-1].strip()
        form.values[name] = text
        if not text:
            continue
        try:
            value = parse_number(text)
            if not lo <= value <= hi:
                raise ValueError(f"must be between {fmt_limit(lo)} and {fmt_limit(hi)}")
        except ValueError as exc:
            form.errors[name] = str(exc).removesuffix(NUMBER_HELP) + (
                _EXAMPLES[name] if str(exc).endswith(NUMBER_HELP) else ""
            )
            continue
        setattr(form, name, value)
    q = (raw.get("q") or [""])[-1].strip()
    form.values["q"] = q
    if len(q) > 100:
        form.errors["q"] = "at most 100 characters"
    else:
        form.q = q or None
    sort = (raw.get("sort") or [""])[-1].strip()
    form.values["sort"] = sort
    if sort:
        if sort_field(sort)[0] not in set(sortable):
            # the value said back: a select cannot show it, and the page's links no longer
            # carry it (they page the list shown, without what was refused)
            form.errors["sort"] = f"cannot sort by {sort[:60]!r}: choose a figure from the list"
        else:
            form.sort = sort
    offset = (raw.get("offset") or [""])[-1].strip()
    if offset:
        try:
            form.offset = max(0, parse_int(offset))
        except ValueError:
            form.errors["offset"] = "must be a whole number"
        else:
            if form.offset > MAX_OFFSET:
                form.offset = 0
                form.errors["offset"] = f"must be at most {MAX_OFFSET:,}"
    return form


def parse_slugs(values: Iterable[str]) -> list[str]:
    """``?slugs=a,b&slugs=c`` -> [a, b, c] (dupes and blanks dropped, order kept)."""
    out: list[str] = []
    for value in values:
        out.extend(s.strip() for s in value.split(","))
    return [s for s in dict.fromkeys(out) if s]

"""The catalog's contract: what a GPU entry is, validated the same way for the seed
files, the admin API and the responses."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from app.vocab import Backend, CatalogPrecision, Cooling, Segment, Vendor

__all__ = [
    "Backend", "BackendIn", "Cooling", "PrecisionIn", "Segment", "SegmentIn", "Vendor", "VendorIn",
]  # fmt: skip


def _fold_case(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


# A vendor, kind of card, backend or precision asked for in a filter or a constraint (GET
# /api/v1/gpus's vendor, segment, backend and precision; constraints.vendors and .segments; the
# CLI's --vendor and --segment), in any case: "NVIDIA", as the vendor writes its name, had
# been a 422 where the database's match was already case-blind (repository._conditions). The
# catalog stores and answers the lower-case name; an entry's own fields stay exact.
VendorIn = Annotated[Vendor, BeforeValidator(_fold_case)]
SegmentIn = Annotated[Segment, BeforeValidator(_fold_case)]
BackendIn = Annotated[Backend, BeforeValidator(_fold_case)]
PrecisionIn = Annotated[CatalogPrecision, BeforeValidator(_fold_case)]

SLUG_RE = r"^[a-z0-9][a-z0-9-]{0,79}$"
_DATE_RE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
_CC_RE = re.compile(r"^\d{1,2}\.\d{1,2}$")

# Plausible ranges: generous enough for any real part, tight enough to catch unit slips
# (GB vs MB, TFLOPS vs GFLOPS) and sparsity-doubled or typo'd figures.
Tflops = Annotated[float, Field(gt=0, lt=10_000)]


def _check_date(value: str | None) -> str | None:
    if value is not None and not _DATE_RE.match(value):
        raise ValueError("must be an ISO date, YYYY-MM-DD or YYYY-MM")
    return value


# What each numeric spec field counts, in what unit: an integrator reads the unit here, not in
# the field's name ("_gb" is the vendor's GB, which is 2^30 bytes; everything is per card).
_SPEC = {
    "release_year": "year the card was released (calendar year, e.g. 2022)",
    "memory_gb": "the card's device memory as the vendor states it, in GiB (2^30 bytes: the "
    "vendor's 'GB'; an '80 GB' H100 is 80 here); per card. A recommendation's "
    "memory.available_gb gives what a process gets of it in 10^9 bytes",
    "memory_bandwidth_gbs": "peak device-memory bandwidth in GB/s (10^9 bytes per second), "
    "per card",
    "fp32_tflops": "dense FP32 peak in TFLOPS (10^12 floating-point operations per second), "
    "per card, without sparsity",
    "tf32_tflops": "dense TF32 tensor peak in TFLOPS (10^12 operations per second), per card, "
    "without sparsity",
    "fp16_tflops": "dense FP16 tensor peak in TFLOPS (10^12 operations per second), per card, "
    "without sparsity",
    "bf16_tflops": "dense BF16 tensor peak in TFLOPS (10^12 operations per second), per card, "
    "without sparsity",
    "fp8_tflops": "dense FP8 tensor peak in TFLOPS (10^12 operations per second), per card, "
    "without sparsity",
    "int8_tops": "dense INT8 tensor peak in TOPS (10^12 integer operations per second), per "
    "card, without sparsity",
    "tdp_w": "board power (TDP/TBP) in watts, per card",
    "pcie_gen": "PCIe generation (a count, e.g. 4 or 5)",
    "pcie_lanes": "PCIe lanes (a count, e.g. 16)",
    "interconnect_gbs": "GPU-to-GPU link bandwidth (NVLink, Infinity Fabric) in GB/s "
    "(10^9 bytes per second), per card, both directions together as vendors state it (a "
    "link carries half of it each way)",
    "slot_width": "slots the card occupies (a count; 2 = dual-slot)",
    "sm_count": "streaming multiprocessors (AMD: compute units), a count per card",
    "launch_price_usd": "the vendor's launch price (MSRP) of one card in US dollars, of any age",
}


class SourceRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=120)
    title: str = Field(min_length=1, max_length=400)
    url: str | None = Field(default=None, max_length=1000)
    repo: str | None = Field(default=None, max_length=200)
    path: str | None = Field(default=None, max_length=500)
    publisher: str | None = Field(default=None, max_length=200)
    date: str | None = None
    accessed: str | None = None

    _v_date = field_validator("date", "accessed")(_check_date)

    @field_validator("url")
    @classmethod
    def _web_link(cls, value: str | None) -> str | None:
        # Shown as a link on pages: a javascript: or data: URL would run in the reader's browser.
        if value is not None and not value.lower().startswith(("https://", "http://")):
            raise ValueError("must be an http(s) URL")
        return value

    @model_validator(mode="after")
    def _locatable(self) -> SourceRef:
        if not self.url and not self.repo:
            raise ValueError("a source needs a url or a repo")
        return self


class StreetPrice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    usd: float = Field(
        gt=0, lt=1_000_000, description="a dated street price of one card in US dollars"
    )
    as_of: str
    source: str = Field(min_length=1)
    _v_date = field_validator("as_of")(_check_date)


class CloudPrice(BaseModel):
    """The catalog's own dated cloud quote: one price per GPU-hour, which may not be bookable,
    never ranked, sorted on nor compared (`sort=cloud_price_usd_per_hour` sorts by
    `rent_from.usd_per_gpu_hour`). What the GPU rents from is `rent_from`, from the
    launchable offers, which `max_hourly_usd` filters on."""

    model_config = ConfigDict(extra="forbid")
    usd_per_hour: float = Field(
        gt=0,
        lt=1_000,
        description="US dollars per GPU-hour (one GPU, not a whole instance): the quote as "
        "its source gives it; shown as `seen_price.usd_per_gpu_hour`",
    )
    provider: str | None = Field(default=None, max_length=200)
    as_of: str
    source: str = Field(min_length=1)
    _v_date = field_validator("as_of")(_check_date)


class GpuFields(BaseModel):
    """Every spec field; ``None`` means 'not sourced', never zero."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    vendor: Vendor
    architecture: str = Field(min_length=1, max_length=80)
    segment: Segment
    release_year: int | None = Field(
        default=None, ge=2010, le=2030, description=_SPEC["release_year"]
    )
    memory_gb: float = Field(gt=1, le=1024, description=_SPEC["memory_gb"])
    memory_type: str | None = Field(default=None, max_length=40)
    memory_bandwidth_gbs: float = Field(ge=10, le=20_000, description=_SPEC["memory_bandwidth_gbs"])
    fp32_tflops: Tflops | None = Field(default=None, description=_SPEC["fp32_tflops"])
    tf32_tflops: Tflops | None = Field(default=None, description=_SPEC["tf32_tflops"])
    fp16_tflops: Tflops | None = Field(default=None, description=_SPEC["fp16_tflops"])
    bf16_tflops: Tflops | None = Field(default=None, description=_SPEC["bf16_tflops"])
    fp8_tflops: Tflops | None = Field(default=None, description=_SPEC["fp8_tflops"])
    int8_tops: Tflops | None = Field(default=None, description=_SPEC["int8_tops"])
    tdp_w: float | None = Field(default=None, ge=5, le=3000, description=_SPEC["tdp_w"])
    pcie_gen: int | None = Field(default=None, ge=1, le=7, description=_SPEC["pcie_gen"])
    pcie_lanes: int | None = Field(default=None, ge=1, le=32, description=_SPEC["pcie_lanes"])
    interconnect: str | None = Field(default=None, max_length=120)
    interconnect_gbs: float | None = Field(
        default=None, gt=0, le=20_000, description=_SPEC["interconnect_gbs"]
    )
    form_factor: str | None = Field(default=None, max_length=80)
    slot_width: float | None = Field(default=None, ge=1, le=5, description=_SPEC["slot_width"])
    compute_capability: str | None = Field(default=None, max_length=20)
    sm_count: int | None = Field(default=None, ge=1, le=1024, description=_SPEC["sm_count"])
    cooling: Cooling | None = Field(
        default=None,
        description="How the card is cooled as sold: passive (no fans; needs a server "
        "chassis's forced airflow), active (its own fans) or liquid; null when unsourced",
    )
    visible_memory_mib: int | None = Field(
        default=None,
        ge=256,
        le=1_048_576,
        description="Device memory the CUDA driver reports as the total a process can use "
        "(torch.cuda.mem_get_info's total, PyTorch's 'total capacity'), in MiB, in the card's "
        "default mode (ECC on for datacenter GDDR parts); below the vendor's GiB by what ECC "
        "and the driver keep back; null when unsourced (the engine then keeps the vendor GiB)",
    )
    backends: list[Backend] = Field(min_length=1)
    launch_price_usd: float | None = Field(
        default=None, gt=0, lt=1_000_000, description=_SPEC["launch_price_usd"]
    )
    street_price: StreetPrice | None = None
    cloud_price: CloudPrice | None = Field(
        default=None,
        description="a dated rental price a source quotes (seen elsewhere; may not be "
        "bookable): GET /api/v1/gpus labels it as `seen_price` and never ranks on it; what the "
        "GPU rents from is `rent_from`, from the launchable offers",
    )
    field_sources: dict[str, str] = Field(default_factory=dict)
    notes: str | None = Field(default=None, max_length=2000)

    @field_validator("compute_capability")
    @classmethod
    def _cuda_version(cls, value: str | None, info: ValidationInfo) -> str | None:
        # The engine compares an NVIDIA card's capability with each framework's minimum as
        # major.minor numbers (app/domain/compat.py); "abc" would read as unknown and pass
        # every check. AMD parts name their gfx target here instead, so only NVIDIA's is held
        # to the number form.
        nvidia = info.data.get("vendor") == "nvidia"
        if value is not None and nvidia and not _CC_RE.match(value):
            raise ValueError("an NVIDIA compute capability is major.minor, e.g. 8.9")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> GpuFields:
        # Tensor paths are never slower than plain FP32 on parts that have them; a lower
        # figure means a unit slip or a per-SM number.
        for name in ("fp16_tflops", "bf16_tflops"):
            value = getattr(self, name)
            if (
                value is not None
                and self.fp32_tflops is not None
                and value < 0.45 * self.fp32_tflops
            ):
                raise ValueError(f"{name} ({value}) is implausibly below fp32_tflops")
        # CUDA reports what is left of the DRAM after ECC and the driver's reserve: never more
        # than the card's GiB (a figure above it is a unit slip or another card's)
        if self.visible_memory_mib is not None and self.visible_memory_mib > self.memory_gb * 1024:
            raise ValueError(
                f"visible_memory_mib ({self.visible_memory_mib}) exceeds memory_gb "
                f"({self.memory_gb} GiB = {self.memory_gb * 1024:.0f} MiB)"
            )
        if self.backends and len(set(self.backends)) != len(self.backends):
            raise ValueError("backends: duplicates")
        unknown = set(self.field_sources) - set(GpuFields.model_fields)
        if unknown:
            raise ValueError(f"field_sources names unknown fields: {sorted(unknown)}")
        return self


class GpuCreate(GpuFields):
    slug: str = Field(pattern=SLUG_RE)
    sources: list[SourceRef] = Field(min_length=1)

    @model_validator(mode="after")
    def _sources_resolve(self) -> GpuCreate:
        ids = {s.id for s in self.sources}
        if len(ids) != len(self.sources):
            raise ValueError("sources: duplicate ids")
        used = set(self.field_sources.values())
        for price in (self.street_price, self.cloud_price):
            if price is not None:
                used.add(price.source)
        missing = used - ids
        if missing:
            raise ValueError(f"cites sources that are not listed: {sorted(missing)}")
        return self


class GpuReplace(GpuFields):
    """PUT body: the whole entry, the slug comes from the path."""

    sources: list[SourceRef] = Field(min_length=1)


def _no_default_shown(schema: dict[str, Any]) -> None:
    # "default": null on a field whose type has no null would tell a client null is a value
    schema.pop("default", None)


def _keep(**bounds: Any) -> Any:
    """A PATCH field that may be left out (unchanged) but never set to null: the whole entry
    requires it. ``bounds``: the same as GpuFields' (tests/catalog/test_patch_fields.py)."""
    return Field(default=None, json_schema_extra=_no_default_shown, **bounds)


class GpuPatch(BaseModel):
    """PATCH body: any subset of fields, each with the bounds of a whole entry; null clears a
    field that may be unsourced, and is refused for one an entry cannot lack."""

    model_config = ConfigDict(extra="forbid")
    name: str = _keep(min_length=1, max_length=200)
    vendor: Vendor = _keep()
    architecture: str = _keep(min_length=1, max_length=80)
    segment: Segment = _keep()
    release_year: int | None = Field(
        default=None, ge=2010, le=2030, description=_SPEC["release_year"]
    )
    memory_gb: float = _keep(gt=1, le=1024, description=_SPEC["memory_gb"])
    memory_type: str | None = Field(default=None, max_length=40)
    memory_bandwidth_gbs: float = _keep(ge=10, le=20_000, description=_SPEC["memory_bandwidth_gbs"])
    fp32_tflops: Tflops | None = Field(default=None, description=_SPEC["fp32_tflops"])
    tf32_tflops: Tflops | None = Field(default=None, description=_SPEC["tf32_tflops"])
    fp16_tflops: Tflops | None = Field(default=None, description=_SPEC["fp16_tflops"])
    bf16_tflops: Tflops | None = Field(default=None, description=_SPEC["bf16_tflops"])
    fp8_tflops: Tflops | None = Field(default=None, description=_SPEC["fp8_tflops"])
    int8_tops: Tflops | None = Field(default=None, description=_SPEC["int8_tops"])
    tdp_w: float | None = Field(default=None, ge=5, le=3000, description=_SPEC["tdp_w"])
    pcie_gen: int | None = Field(default=None, ge=1, le=7, description=_SPEC["pcie_gen"])
    pcie_lanes: int | None = Field(default=None, ge=1, le=32, description=_SPEC["pcie_lanes"])
    interconnect: str | None = Field(default=None, max_length=120)
    interconnect_gbs: float | None = Field(
        default=None, gt=0, le=20_000, description=_SPEC["interconnect_gbs"]
    )
    form_factor: str | None = Field(default=None, max_length=80)
    slot_width: float | None = Field(default=None, ge=1, le=5, description=_SPEC["slot_width"])
    compute_capability: str | None = Field(default=None, max_length=20)
    sm_count: int | None = Field(default=None, ge=1, le=1024, description=_SPEC["sm_count"])
    cooling: Cooling | None = Field(
        default=None, description=GpuFields.model_fields["cooling"].description
    )
    visible_memory_mib: int | None = Field(
        default=None,
        ge=256,
        le=1_048_576,
        description=GpuFields.model_fields["visible_memory_mib"].description,
    )
    backends: list[Backend] = _keep(min_length=1)
    launch_price_usd: float | None = Field(
        default=None, gt=0, lt=1_000_000, description=_SPEC["launch_price_usd"]
    )
    street_price: StreetPrice | None = None
    cloud_price: CloudPrice | None = None
    field_sources: dict[str, str] = _keep()
    notes: str | None = Field(default=None, max_length=2000)
    sources: list[SourceRef] = _keep(min_length=1)


class GpuOut(GpuCreate):
    model_config = ConfigDict(extra="ignore")
    origin: Literal["seed", "user"]
    purchase_usd: float | None = Field(
        description="One card in US dollars: street price if known, else launch price (of "
        "any age): the catalog's "
        "own field, what `sort=purchase_usd` uses. What a recommendation pays to buy one is "
        "`buy_at` (never a launch price more than three years old), which `max_price_usd` "
        "filters on and `sort=buy_at.usd` sorts on."
    )


class GpuPage(BaseModel):
    total: int = Field(description="items matching the filters, before limit and offset")
    limit: int = Field(description="the most items this page holds, as asked")
    offset: int = Field(description="items skipped before this page, as asked")
    items: list[GpuOut]


class CompareRow(BaseModel):
    gpu: GpuOut
    ratios: dict[str, float | None] = Field(
        description="Each numeric field divided by the first GPU's value; "
        "null when either is unknown."
    )


class CompareOut(BaseModel):
    baseline: str
    fields: list[str]
    gpus: list[CompareRow]

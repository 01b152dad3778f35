"""What the engine knows about one GPU.

Services build these from catalog rows in one place; the domain never sees an ORM row.
Every optional figure is ``None`` when the catalog could not source it, and the engine
must treat ``None`` as *unknown*, never as zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from app.domain.derived import store_of
from app.vocab import PEAK_FIELDS, Precision, Segment, Vendor

_DIES = re.compile(r"\((\d+)\s*dies\)", re.IGNORECASE)
# "4-APU node", "8-GPU node": the GPUs one server holds, where the catalog names it
_NODE = re.compile(r"\b(\d+)-(?:apu|gpu|gcd)\s+node\b", re.IGNORECASE)
# "8-pin CPU (EPS12V) power": a board whose power input is the CPU's 8-pin connector, not PCIe's
_EPS_POWER = re.compile(r"\b8-pin\s+CPU\b|\bEPS-?12V\b", re.IGNORECASE)

__all__ = ["GpuSpec", "Precision", "Price", "Segment", "Vendor"]


@dataclass(frozen=True, slots=True)
class Price:
    usd: float
    as_of: str  # ISO date
    source: str | None = None
    provider: str | None = None  # cloud prices only


@dataclass(frozen=True, slots=True)
class GpuSpec:
    slug: str
    name: str
    vendor: str
    architecture: str
    segment: str
    memory_gb: float
    memory_bandwidth_gbs: float
    release_year: int | None = None
    memory_type: str | None = None
    fp32_tflops: float | None = None
    tf32_tflops: float | None = None
    fp16_tflops: float | None = None
    bf16_tflops: float | None = None
    fp8_tflops: float | None = None
    int8_tops: float | None = None
    tdp_w: float | None = None
    pcie_gen: int | None = None
    pcie_lanes: int | None = None
    interconnect: str | None = None
    interconnect_gbs: float | None = None
    form_factor: str | None = None
    slot_width: float | None = None
    compute_capability: str | None = None
    backends: tuple[str, ...] = field(default_factory=tuple)
    launch_price_usd: float | None = None
    street_price: Price | None = None
    cloud_price: Price | None = None
    # Streaming multiprocessors (NVIDIA), compute units (AMD), Xe-cores (Intel): the units a
    # kernel's thread blocks spread over, one wave at a time (kernels.wave_fill)
    sm_count: int | None = None
    # How the card is cooled as sold (app.vocab.Cooling): "passive" cards need a server
    # chassis's forced airflow; None when the catalog has no source
    cooling: str | None = None
    # Device memory CUDA reports as the total a process can use, MiB (the catalog's
    # visible_memory_mib): less than memory_gb GiB where ECC and the driver keep some back;
    # None when the catalog has no source (efficiency.usable_gb then keeps the vendor GiB)
    visible_memory_mib: int | None = None
    # The engine's memos key on the spec itself (an edited entry is another key), several
    # times per GPU per request: its hash is computed once, from the fields that compare.
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)
    # What the efficiency table's rows match a GPU on (``profile_keys``), worked out once
    _profile_keys: tuple[str, str, str, str] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    # Terms the engine derives from the spec under a runtime and format (perf's LLM card terms,
    # llm_step.CardTerms, and a single-GPU step's inputs, perf._on_gpu), each with the table
    # and calibration it came from: a catalog snapshot builds its specs once, so these are
    # per-GPU terms once per snapshot (an edited entry is a new spec, with none)
    _derived: dict[tuple[object, ...], object] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(tuple(getattr(self, f) for f in _COMPARED))
            object.__setattr__(self, "_hash", h)
        return h

    @property
    def memory_kind(self) -> str:
        """hbm | gddr | lpddr (unified SoC memory) from the catalog's memory type."""
        kind = (self.memory_type or "").lower()
        if "hbm" in kind:
            return "hbm"
        if "lpddr" in kind or "unified" in kind or self.vendor == "apple" or self.segment == "soc":
            return "lpddr"
        return "gddr"

    @property
    def dies(self) -> int:
        """GPU dies that work as this one device, from the catalog's interconnect text ("... (2
        dies)": Apple's Ultra parts, two Max dies joined by UltraFusion); 1 where it names none."""
        m = _DIES.search(self.interconnect or "")
        return int(m.group(1)) if m else 1

    @property
    def node_gpus(self) -> int | None:
        """GPUs one server of this part holds, where the catalog's interconnect text names it
        ("... (4-APU node: ...)": the MI300A, whose node in AMD's CDNA 3 white paper is four APUs
        fully connected by Infinity Fabric); None where it names none (topology.NODE_GPUS)."""
        m = _NODE.search(self.interconnect or "")
        return int(m.group(1)) if m else None

    @property
    def cpu_power_input(self) -> bool:
        """Whether the board takes its power through an 8-pin CPU (EPS12V) connector rather than
        a PCIe one, where the catalog's form factor says so ("...; 8-pin CPU (EPS12V) power":
        the Tesla P40 and A100 40GB PCIe product briefs, the A40's spec table). A desktop power
        supply's PCIe cable does not fit it: it needs NVIDIA's adapter or a spare EPS cable."""
        return bool(_EPS_POWER.search(self.form_factor or ""))

    @property
    def profile_keys(self) -> tuple[str, str, str, str]:
        """(vendor, architecture, memory kind, compute capability), lower case: the GPU's part
        of an efficiency-table lookup (app.domain.efficiency.ProfileTable), once per spec."""
        keys = self._profile_keys
        if keys is None:
            keys = (
                self.vendor.lower(),
                self.architecture.lower(),
                self.memory_kind,
                (self.compute_capability or "").lower(),
            )
            object.__setattr__(self, "_profile_keys", keys)
        return keys

    @property
    def derived(self) -> dict[tuple[object, ...], object]:
        """The spec's own store of derived terms (see ``_derived``)."""
        return store_of(self)

    @property
    def purchase_usd(self) -> float | None:
        """The price to buy one today: street price if known, else launch price."""
        if self.street_price is not None:
            return self.street_price.usd
        return self.launch_price_usd

    @property
    def hourly_usd(self) -> float | None:
        return self.cloud_price.usd if self.cloud_price is not None else None

    def peak_tflops(self, precision: str) -> float | None:
        """Dense datasheet peak for a precision, ``None`` if the part has no such path."""
        name = PEAK_FIELDS.get(precision)
        return getattr(self, name) if name is not None else None


_COMPARED = tuple(f.name for f in fields(GpuSpec) if f.compare)

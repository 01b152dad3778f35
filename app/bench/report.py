"""The versioned device-report schema: what `gpu-advisor bench` writes and the server stores.

Conventions (stated once, used everywhere):

* decimal units: 1 TFLOPS = 1e12 FLOP/s, 1 GB/s = 1e9 bytes/s;
* GEMM FLOPs = 2·M·N·K; convolution forward = 2·N·K·(C/g)·R·S·P·Q, forward+backward = 3×;
  model FLOPs counted with ``torch.utils.flop_counter.FlopCounterMode``;
* bandwidth counts bytes read + bytes written (STREAM convention: copy = 2 × the array);
* each figure is the median over timed blocks after warm-up, with p10/p90 of the same
  quantity and ``noisy`` = IQR/median > 0.10;
* a figure above 1.15 × a known peak is *rejected*: ``value`` is None, ``status`` is
  ``"rejected"``, the raw number is kept in ``rejected_value`` with the reason;
* attention FLOPs = 4·B·H·Sq·Skv·D (QKᵀ and PV), halved when causal;
* a kernel point (``kernels.points``) keeps the raw measurement: kernel class, named shape,
  dtype → median seconds per call, with the FLOPs and bytes it did and the rates they give.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from app.vocab import MEASURED_PRECISIONS, DeviceBackend, MeasuredPrecision

#: Version 2 added the kernel-class points (``kernels``); version 1 reports still read.
SCHEMA_VERSION: Literal[2] = 2
SCHEMA_VERSIONS: tuple[int, ...] = (1, 2)

#: Ratio above a known peak at which a measurement is rejected as an error (and an upload
#: claiming it refused). The margin is measurement noise plus boost: cards run above the
#: clock their datasheet peak assumes (mixbench measured an RTX 2070 at ~113 % of the peak
#: at its reported clock) and a noisy figure spreads up to 10 % (IQR/median); methodology §7.
PEAK_TOLERANCE = 1.15

MAX_TFLOPS = 100_000.0
MAX_GBS = 100_000.0
MAX_SAMPLES_PER_S = 1e12
MAX_SECONDS = 1e6
MAX_BYTES = 1e15

#: Keys of the ``peaks`` dictionary understood by :func:`apply_peaks` and the runner.
PRECISIONS: tuple[str, ...] = MEASURED_PRECISIONS
PEAK_BANDWIDTH_KEY = "bandwidth_gbs"
PEAK_LINK_KEY = "host_link_gbs"
_PEAK_ALIASES = {
    "bandwidth": PEAK_BANDWIDTH_KEY,
    "memory_bandwidth_gbs": PEAK_BANDWIDTH_KEY,
    "pcie_gbs": PEAK_LINK_KEY,
    "link_gbs": PEAK_LINK_KEY,
}

Unit = Literal["TFLOPS", "GB/s", "samples/s", "s", "bytes", "x"]
Status = Literal["ok", "rejected", "not_applicable", "failed", "skipped"]
Precision = MeasuredPrecision
Backend = DeviceBackend

_UNIT_LIMITS: dict[str, float] = {
    "TFLOPS": MAX_TFLOPS,
    "GB/s": MAX_GBS,
    "samples/s": MAX_SAMPLES_PER_S,
    "s": MAX_SECONDS,
    "bytes": MAX_BYTES,
    "x": 1e6,
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


def _check_number(name: str, value: float | None, unit: str, bounded: bool = True) -> None:
    if value is None:
        return
    if math.isnan(value):
        raise ValueError(f"{name} is NaN ({unit}): not a measurement")
    if math.isinf(value):
        raise ValueError(f"{name} is infinite ({unit}): not a measurement")
    if value < 0:
        raise ValueError(
            f"{name} is negative ({value} {unit}): a measured rate or size cannot be below zero"
        )
    limit = _UNIT_LIMITS.get(unit)
    if bounded and limit is not None and value > limit:
        raise ValueError(
            f"{name} = {value:g} {unit} is implausible (limit {limit:g} {unit}): "
            "probably a timing error (missing synchronisation?)"
        )


class Figure(_Model):
    """One measured number with its spread, status and (optionally) its efficiency."""

    value: float | None = None
    unit: Unit
    p10: float | None = None
    p90: float | None = None
    noisy: bool = False
    n_blocks: int = Field(default=0, ge=0)
    iters_per_block: int = Field(default=0, ge=0)
    median_time_s: float | None = None
    status: Status = "ok"
    reason: str | None = None
    rejected_value: float | None = None
    peak: float | None = None
    efficiency: float | None = None

    @model_validator(mode="after")
    def _validate(self) -> Figure:
        _check_number("value", self.value, self.unit)
        _check_number("p10", self.p10, self.unit)
        _check_number("p90", self.p90, self.unit)
        _check_number("peak", self.peak, self.unit)
        _check_number("median_time_s", self.median_time_s, "s")
        if self.median_time_s == 0:
            raise ValueError("median_time_s is zero: no kernel runs in no time (timing error)")
        _check_number("rejected_value", self.rejected_value, self.unit, bounded=False)
        if self.efficiency is not None:
            _check_number("efficiency", self.efficiency, "x")
            if self.efficiency > 10:
                raise ValueError(f"efficiency {self.efficiency:g} is implausible (> 10× peak)")
        if self.status == "ok" and self.value is None:
            raise ValueError("a figure with status 'ok' needs a value")
        if self.status != "ok" and self.value is not None:
            raise ValueError(f"a figure with status {self.status!r} must not carry a value")
        if self.status in ("rejected", "not_applicable", "failed", "skipped") and not self.reason:
            raise ValueError(f"a figure with status {self.status!r} needs a reason")
        return self

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.value is not None

    @classmethod
    def missing(cls, unit: Unit, status: Status, reason: str) -> Figure:
        return cls(unit=unit, status=status, reason=reason)


class SuiteBase(_Model):
    status: Status = "ok"
    reason: str | None = None
    duration_s: float = Field(default=0.0, ge=0)


# ---------------------------------------------------------------------------------------
# environment
# ---------------------------------------------------------------------------------------


# Caps on what a machine says of itself: far above anything `gpu-advisor bench` writes (a
# device or CPU name is under 100 characters, torch's build configuration a few KB), so only
# a broken or hostile upload meets them, refused naming the field as every other POST's are.
Name = Annotated[str, StringConstraints(max_length=200)]
Version = Annotated[str, StringConstraints(max_length=80)]


class Environment(_Model):
    backend: Backend
    device: str = Field(max_length=40)
    device_name: Name
    device_memory_bytes: int | None = Field(default=None, ge=0)
    device_count: int = Field(default=1, ge=0)
    compute_capability: Version | None = None
    arch: Version | None = None
    multiprocessors: int | None = None
    driver_version: Version | None = None
    cuda_version: Version | None = None
    rocm_version: Version | None = None
    macos_version: Version | None = None
    os: Name
    python_version: Version
    torch_version: Version
    numpy_version: Version | None = None
    blas_backend: Version | None = None
    torch_config: str | None = Field(default=None, max_length=50_000)
    cpu_model: Name | None = None
    cpu_physical_cores: int | None = None
    cpu_logical_cores: int | None = None
    cpu_usable_cores: int | None = None
    torch_threads: int | None = None
    cpu_flags: list[str] = Field(default_factory=list)
    llc_bytes: int | None = None
    host_memory_bytes: int | None = None
    precision_flags: dict[str, Any] = Field(default_factory=dict)
    env_vars: dict[str, str] = Field(default_factory=dict)
    clocks: dict[str, Any] | None = None
    notes: list[str] = Field(default_factory=list)
    host_id: str | None = Field(
        default=None,
        max_length=64,
        pattern=r"^[0-9a-f]+$",
        description="an opaque identity of the machine (a salted hash of its machine id and "
        "device, never the id itself): pooling counts reports of one machine once",
    )


# ---------------------------------------------------------------------------------------
# suites
# ---------------------------------------------------------------------------------------


class MatmulRow(_Model):
    precision: Precision
    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    flops: int = Field(gt=0)
    role: Literal["reference", "search"]
    threads: int | None = None
    #: "torch" (torch.mm) or, on CPUs, "numpy" (np.matmul through numpy's BLAS): the
    #: methodology takes the max of the two as "CPU achievable".
    library: Literal["torch", "numpy"] = "torch"
    figure: Figure


class MatmulSummary(_Model):
    precision: Precision
    native: bool
    note: str | None = None
    reference: Figure
    best: Figure
    best_shape: tuple[int, int, int] | None = None
    best_library: Literal["torch", "numpy"] = "torch"


class MatmulSuite(SuiteBase):
    reference_shape: tuple[int, int, int] | None = None
    rows: list[MatmulRow] = Field(default_factory=list)
    by_precision: dict[str, MatmulSummary] = Field(default_factory=dict)


class ConvRow(_Model):
    layer: str
    precision: Precision
    mode: Literal["forward", "forward_backward"]
    layout: Literal["nchw", "channels_last"]
    flops: int = Field(gt=0)
    figure: Figure


class ConvAggregate(_Model):
    precision: Precision
    mode: Literal["forward", "forward_backward"]
    #: Σ FLOPs / Σ time over the layers, each layer in its faster layout.
    tflops: Figure
    #: Same aggregate per single layout (None when a layout failed).
    tflops_nchw: float | None = None
    tflops_channels_last: float | None = None
    faster_layout: Literal["nchw", "channels_last"] | None = None
    layout_per_layer: dict[str, str] = Field(default_factory=dict)


class ConvLayerSpec(_Model):
    name: str
    n: int
    c: int
    h: int
    w: int
    k: int
    kernel: int
    stride: int
    padding: int


class ConvSuite(SuiteBase):
    layers: list[ConvLayerSpec] = Field(default_factory=list)
    rows: list[ConvRow] = Field(default_factory=list)
    aggregates: list[ConvAggregate] = Field(default_factory=list)


class BandwidthRow(_Model):
    kernel: Literal["copy", "scale", "add", "triad", "read"]
    bytes_per_call: int = Field(gt=0)
    figure: Figure


class MemorySuite(SuiteBase):
    dtype: str = "float32"
    array_bytes: int = Field(default=0, ge=0)
    llc_bytes: int | None = None
    rows: list[BandwidthRow] = Field(default_factory=list)
    best: Figure | None = None
    best_kernel: str | None = None
    triad: Figure | None = None


class TransferRow(_Model):
    direction: Literal["h2d", "d2h"]
    memory: Literal["pinned", "pageable", "unified"]
    size_bytes: int = Field(gt=0)
    figure: Figure


class TransferFit(_Model):
    direction: Literal["h2d", "d2h"]
    memory: Literal["pinned", "pageable", "unified"]
    latency_s: float = Field(ge=0)
    bandwidth_gbs: float = Field(gt=0)
    bandwidth_is_lower_bound: bool = Field(
        default=False,
        description="the sizes were latency-bound: bandwidth_gbs is the best rate achieved, "
        "the link is at least this fast",
    )
    headline: Figure
    headline_size_bytes: int = Field(gt=0)

    @field_validator("bandwidth_gbs")
    @classmethod
    def _bw(cls, v: float) -> float:
        _check_number("bandwidth_gbs", v, "GB/s")
        return v


class TransferSuite(SuiteBase):
    kind: Literal["pcie", "unified"] | None = None
    rows: list[TransferRow] = Field(default_factory=list)
    fits: list[TransferFit] = Field(default_factory=list)
    pinned_over_pageable_h2d: float | None = None
    pinned_over_pageable_d2h: float | None = None
    pin_cost_s_per_gb: float | None = Field(default=None, ge=0)


class BatchPoint(_Model):
    batch: int = Field(gt=0)
    flops: int = Field(ge=0)
    step_time: Figure
    samples_per_s: Figure
    tflops: Figure


class BatchCurve(_Model):
    workload: Literal["cnn_block", "transformer_block"]
    mode: Literal["forward", "train"]
    precision: Precision
    description: str
    points: list[BatchPoint] = Field(default_factory=list)
    b90: int | None = None
    max_samples_per_s: float | None = Field(default=None, ge=0)
    best_tflops: float | None = Field(default=None, ge=0)
    fit_t0_s: float | None = None
    fit_per_sample_s: float | None = None
    #: Why the fit t(B) = t₀ + B·c is not physical (a negative t₀ or c: noisy or falling step
    #: times); None when it is.
    fit_note: str | None = Field(default=None, max_length=300)
    stopped: str | None = None


class BatchScalingSuite(SuiteBase):
    curves: list[BatchCurve] = Field(default_factory=list)


class Speedup(_Model):
    source: str
    precision: Precision
    baseline: Precision = "fp32"
    ratio: float

    @field_validator("ratio")
    @classmethod
    def _ratio(cls, v: float) -> float:
        _check_number("ratio", v, "x")
        return v


class PeakMemoryPoint(_Model):
    batch: int = Field(gt=0)
    peak_bytes: int = Field(ge=0)
    reserved_bytes: int | None = Field(default=None, ge=0)


class PeakMemorySuite(SuiteBase):
    method: str = ""
    workload: str = ""
    precision: Precision = "fp32"
    points: list[PeakMemoryPoint] = Field(default_factory=list)
    fixed_bytes: float | None = None
    per_sample_bytes: float | None = None


# ---------------------------------------------------------------------------------------
# kernel classes (schema version 2): the raw points the engine's efficiency curves rest on
# ---------------------------------------------------------------------------------------

KernelClass = Literal[
    "gemm",
    "attention_prefill",
    "attention_decode",
    "elementwise",
    "normalization",
    "embedding",
    "launch_eager",
    "launch_graph",
    "all_reduce",
    "all_gather",
]
#: Classes limited by arithmetic (their rate is FLOP/s); the others by memory (bytes/s).
COMPUTE_CLASSES: frozenset[str] = frozenset({"gemm", "attention_prefill"})
_RATE_TOLERANCE = 0.02  # a stated rate may differ from work ÷ seconds by rounding only


def gemm_flops(shape: Mapping[str, int]) -> int:
    """2·B·M·N·K for a (batched) GEMM shape {m, n, k[, batch]}."""
    return 2 * shape.get("batch", 1) * shape["m"] * shape["n"] * shape["k"]


def attention_flops(shape: Mapping[str, int]) -> int:
    """4·B·H·Sq·Skv·D (QKᵀ and PV), halved when causal (flag ``causal`` = 1)."""
    full = (
        4 * shape["batch"] * shape["heads"] * shape["q_len"] * shape["kv_len"] * shape["head_dim"]
    )
    return full // 2 if shape.get("causal") else full


#: Classes whose FLOPs the schema recomputes from the shape (and refuses when they differ),
#: with the dimensions their shape must name.
_SHAPE_KEYS: dict[str, tuple[str, ...]] = {
    "gemm": ("m", "n", "k"),
    "attention_prefill": ("batch", "heads", "q_len", "kv_len", "head_dim"),
    "attention_decode": ("batch", "heads", "q_len", "kv_len", "head_dim"),
}


def expected_flops(kernel_class: str, shape: Mapping[str, int]) -> int | None:
    if kernel_class == "gemm":
        return gemm_flops(shape)
    if kernel_class.startswith("attention_"):
        return attention_flops(shape)
    return None


class KernelPoint(_Model):
    """One (kernel class, op, shape, dtype) measurement: median seconds per call and the
    rates it gives (TFLOPS for compute classes, GB/s for memory classes; either may be
    None where it means nothing, e.g. a launch-overhead point)."""

    kernel_class: KernelClass
    op: str = Field(min_length=1, max_length=40)
    shape: dict[str, int]
    dtype: str = Field(min_length=1, max_length=16)
    seconds: float = Field(gt=0, le=MAX_SECONDS)
    p10_s: float | None = Field(default=None, gt=0)
    p90_s: float | None = Field(default=None, gt=0)
    noisy: bool = False
    flops: int | None = Field(default=None, ge=0)
    bytes_moved: int | None = Field(default=None, ge=0)
    tflops: float | None = Field(default=None, ge=0, le=MAX_TFLOPS)
    gbs: float | None = Field(default=None, ge=0, le=MAX_GBS)
    peak: float | None = Field(default=None, gt=0)
    efficiency: float | None = Field(default=None, ge=0)
    status: Literal["ok", "rejected"] = "ok"
    reason: str | None = None

    @field_validator("shape")
    @classmethod
    def _shape(cls, v: dict[str, int]) -> dict[str, int]:
        bad = [k for k, x in v.items() if x < 0 or (x == 0 and k != "causal")]
        if bad:
            raise ValueError(f"shape dimension(s) {', '.join(bad)} must be positive")
        return v

    @field_validator("flops")
    @classmethod
    def _flops(cls, v: int | None, info: ValidationInfo) -> int | None:
        kc, shape = info.data.get("kernel_class"), info.data.get("shape")
        if kc is None or shape is None or kc not in _SHAPE_KEYS:
            return v
        missing = [k for k in _SHAPE_KEYS[kc] if k not in shape]
        if missing:
            raise ValueError(f"a {kc} shape needs {', '.join(missing)}")
        want = expected_flops(kc, shape)
        if v is None or v != want:
            rule = "2·M·N·K" if kc == "gemm" else "4·B·H·Sq·Skv·D (÷2 causal)"
            raise ValueError(f"flops {v} do not match the shape: {rule} = {want}")
        return v

    @field_validator("tflops")
    @classmethod
    def _tflops(cls, v: float | None, info: ValidationInfo) -> float | None:
        return _check_rate(v, info.data.get("flops"), info.data.get("seconds"), 1e12, "flops")

    @field_validator("gbs")
    @classmethod
    def _gbs(cls, v: float | None, info: ValidationInfo) -> float | None:
        work = info.data.get("bytes_moved")
        return _check_rate(v, work, info.data.get("seconds"), 1e9, "bytes_moved")

    @property
    def rate(self) -> float | None:
        """The figure the peak applies to: TFLOPS for compute classes, else GB/s."""
        return self.tflops if self.kernel_class in COMPUTE_CLASSES else self.gbs

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _check_rate(
    v: float | None, work: int | None, seconds: float | None, scale: float, what: str
) -> float | None:
    if v is None:
        return v
    if work is None or seconds is None:
        raise ValueError(f"a rate needs {what} and seconds")
    want = work / seconds / scale
    if abs(v - want) > _RATE_TOLERANCE * max(want, 1e-12):
        raise ValueError(f"{v:g} is not {what} ÷ seconds ({want:.4g})")
    return v


class KernelSuite(SuiteBase):
    points: list[KernelPoint] = Field(default_factory=list)
    #: kernel class -> why it was not measured (no second GPU, no CUDA graphs, ...)
    skipped: dict[str, str] = Field(default_factory=dict)


class CatalogMatch(_Model):
    slug: str = Field(max_length=80)
    name: Name
    matched_by: Literal["name", "manual"]


class BenchReport(_Model):
    # Strict at the top, as every other POST body is: a field no version of the schema ever
    # had (the top level is the same in versions 1 and 2) is a mistake, named in the 422.
    # The suites below keep ignoring extras, so a newer runner's added detail still loads.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_version: Literal[1, 2] = SCHEMA_VERSION
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    profile: str = Field(max_length=40)
    duration_s: float = Field(default=0.0, ge=0)
    environment: Environment
    matmul: MatmulSuite | None = None
    conv: ConvSuite | None = None
    memory: MemorySuite | None = None
    transfer: TransferSuite | None = None
    batch_scaling: BatchScalingSuite | None = None
    precision_speedups: list[Speedup] = Field(default_factory=list)
    peak_memory: PeakMemorySuite | None = None
    kernels: KernelSuite | None = None
    tips: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    peaks_used: dict[str, float] = Field(default_factory=dict)
    catalog_match: CatalogMatch | None = None

    # -- calibration helpers --------------------------------------------------------------

    def best_matmul(self, precision: str, native_only: bool = True) -> Figure | None:
        if self.matmul is None:
            return None
        summary = self.matmul.by_precision.get(precision)
        if summary is None or (native_only and not summary.native) or not summary.best.ok:
            return None
        return summary.best

    def summary_measured(self) -> dict[str, float]:
        """Measured achievable figures: best matmul TFLOPS per native precision
        (``"fp32"``, ``"bf16"``, ...) and ``"bandwidth_gbs"`` (max over kernels)."""
        out: dict[str, float] = {}
        for precision in PRECISIONS:
            fig = self.best_matmul(precision)
            if fig is not None and fig.value is not None:
                out[precision] = fig.value
        if self.memory is not None and self.memory.best is not None and self.memory.best.ok:
            assert self.memory.best.value is not None
            out[PEAK_BANDWIDTH_KEY] = self.memory.best.value
        return out

    def summary_efficiencies(self) -> dict[str, float]:
        """Measured efficiency (achieved ÷ catalog peak) per precision and
        ``"bandwidth_gbs"``, for calibrating the roofline. Only figures that are ok, from
        native precisions, with a known peak; empty before :func:`apply_peaks`."""
        out: dict[str, float] = {}
        for precision in PRECISIONS:
            fig = self.best_matmul(precision)
            if fig is not None and fig.efficiency is not None:
                out[precision] = fig.efficiency
        if (
            self.memory is not None
            and self.memory.best is not None
            and self.memory.best.ok
            and self.memory.best.efficiency is not None
        ):
            out[PEAK_BANDWIDTH_KEY] = self.memory.best.efficiency
        return out

    def figures(self) -> list[tuple[str, Figure]]:
        """Every figure with a dotted label (for displays and bulk checks)."""
        return [(slot.label, slot.figure) for slot in figure_slots(self)]

    def measurements(self) -> list[Figure]:
        """One figure per timed measurement. `figures` also lists what is derived from them
        (summaries, aggregates, headlines, and a batch point's three views of one timing), so
        counting its noisy figures would count one noisy timing up to three times."""
        out: list[Figure] = []
        if self.matmul:
            out.extend(r.figure for r in self.matmul.rows)
        if self.conv:
            out.extend(c.figure for c in self.conv.rows)
        if self.memory:
            out.extend(b.figure for b in self.memory.rows)
        if self.transfer:
            out.extend(t.figure for t in self.transfer.rows)
        if self.batch_scaling:
            for curve in self.batch_scaling.curves:
                out.extend(pt.step_time for pt in curve.points)
        return out


# ---------------------------------------------------------------------------------------
# peaks: rejection rule and efficiency
# ---------------------------------------------------------------------------------------


def normalize_peaks(peaks: Mapping[str, float | None] | None) -> dict[str, float]:
    """Canonical peak keys (precisions, ``bandwidth_gbs``, ``host_link_gbs``); drops
    missing, non-positive or non-finite values."""
    out: dict[str, float] = {}
    for key, value in (peaks or {}).items():
        if value is None:
            continue
        try:
            v = float(value)
        except (TypeError, ValueError):
            continue
        if not math.isfinite(v) or v <= 0:
            continue
        out[_PEAK_ALIASES.get(key, key)] = v
    return out


def check_peak(fig: Figure, peak: float | None, what: str = "result") -> Figure:
    """Apply the rejection rule and the efficiency ratio to one figure (returns a copy).

    A figure above ``PEAK_TOLERANCE`` × ``peak`` is rejected as a measurement error.
    """
    if peak is None or peak <= 0:
        return fig
    data = fig.model_dump()
    data["peak"] = peak
    if fig.ok:
        assert fig.value is not None
        if fig.value > PEAK_TOLERANCE * peak:
            data.update(
                status="rejected",
                value=None,
                p10=None,
                p90=None,
                efficiency=None,
                rejected_value=fig.value,
                reason=(
                    f"{what} {fig.value:.4g} {fig.unit} exceeds {PEAK_TOLERANCE:.2f} × the "
                    f"known peak {peak:.4g} {fig.unit}: rejected as a measurement error "
                    "(cache-resident data, missing synchronisation or a wrong peak)"
                ),
            )
        else:
            data["efficiency"] = fig.value / peak
    return Figure.model_validate(data)


@dataclass
class FigureSlot:
    """Where one figure lives in a report: its JSON path (for error messages), a display
    label, the peak key it compares to (None: no comparable peak) and how to replace it."""

    path: str
    label: str
    owner: Any
    attr: str
    peak_key: str | None
    what: str

    @property
    def figure(self) -> Figure:
        fig: Figure = getattr(self.owner, self.attr)
        return fig

    def replace(self, fig: Figure) -> None:
        setattr(self.owner, self.attr, fig)


def _matmul_slots(s: MatmulSuite) -> Iterator[FigureSlot]:
    for i, r in enumerate(s.rows):
        label = f"matmul.{r.precision}.{r.m}x{r.n}x{r.k}"
        yield FigureSlot(
            f"matmul.rows.{i}.figure", label, r, "figure", r.precision, f"matmul {r.precision}"
        )
    for p, x in s.by_precision.items():
        base = f"matmul.by_precision.{p}"
        yield FigureSlot(
            f"{base}.reference", f"matmul.{p}.reference", x, "reference", p, f"matmul {p}"
        )
        yield FigureSlot(f"{base}.best", f"matmul.{p}.best", x, "best", p, f"matmul {p}")


def _conv_slots(s: ConvSuite) -> Iterator[FigureSlot]:
    for i, c in enumerate(s.rows):
        label = f"conv.{c.layer}.{c.precision}.{c.mode}.{c.layout}"
        yield FigureSlot(
            f"conv.rows.{i}.figure", label, c, "figure", c.precision, f"conv {c.precision}"
        )
    for i, a in enumerate(s.aggregates):
        label = f"conv.{a.precision}.{a.mode}"
        yield FigureSlot(
            f"conv.aggregates.{i}.tflops", label, a, "tflops", a.precision, f"conv {a.precision}"
        )


def _memory_slots(s: MemorySuite) -> Iterator[FigureSlot]:
    bw = PEAK_BANDWIDTH_KEY
    for i, b in enumerate(s.rows):
        what = f"{b.kernel} bandwidth"
        yield FigureSlot(f"memory.rows.{i}.figure", f"memory.{b.kernel}", b, "figure", bw, what)
    if s.best is not None:
        yield FigureSlot("memory.best", "memory.best", s, "best", bw, "bandwidth")
    if s.triad is not None:
        yield FigureSlot("memory.triad", "memory.triad", s, "triad", bw, "triad bandwidth")


def _transfer_slots(s: TransferSuite) -> Iterator[FigureSlot]:
    for i, t in enumerate(s.rows):
        key = None if t.memory == "unified" else PEAK_LINK_KEY
        label = f"transfer.{t.direction}.{t.memory}.{t.size_bytes}"
        yield FigureSlot(
            f"transfer.rows.{i}.figure", label, t, "figure", key, f"{t.direction} transfer"
        )
    for i, f in enumerate(s.fits):
        key = None if f.memory == "unified" else PEAK_LINK_KEY
        label = f"transfer.{f.direction}.{f.memory}.headline"
        yield FigureSlot(
            f"transfer.fits.{i}.headline", label, f, "headline", key, f"{f.direction} transfer"
        )


def _batch_slots(s: BatchScalingSuite) -> Iterator[FigureSlot]:
    for ci, curve in enumerate(s.curves):
        what = f"{curve.workload} {curve.precision}"
        for pi, pt in enumerate(curve.points):
            path = f"batch_scaling.curves.{ci}.points.{pi}"
            base = f"batch.{curve.workload}.{curve.mode}.{curve.precision}.{pt.batch}"
            yield FigureSlot(f"{path}.step_time", base + ".step_time", pt, "step_time", None, what)
            yield FigureSlot(
                f"{path}.samples_per_s", base + ".samples_per_s", pt, "samples_per_s", None, what
            )
            yield FigureSlot(
                f"{path}.tflops", base + ".tflops", pt, "tflops", curve.precision, what
            )


def figure_slots(report: BenchReport) -> Iterator[FigureSlot]:
    """Every figure of the report, in display order."""
    if report.matmul:
        yield from _matmul_slots(report.matmul)
    if report.conv:
        yield from _conv_slots(report.conv)
    if report.memory:
        yield from _memory_slots(report.memory)
    if report.transfer:
        yield from _transfer_slots(report.transfer)
    if report.batch_scaling:
        yield from _batch_slots(report.batch_scaling)


def kernel_peak_key(point: KernelPoint) -> str | None:
    """The peak a kernel point's rate is held to: the dtype's dense TFLOPS for compute
    classes, memory bandwidth for the memory-bound ones; None for launch overheads and
    collectives (their rate is a link's, not the GPU's)."""
    if point.kernel_class in COMPUTE_CLASSES:
        return point.dtype
    if point.kernel_class in ("attention_decode", "elementwise", "normalization", "embedding"):
        return PEAK_BANDWIDTH_KEY
    return None


def check_kernel_point(point: KernelPoint, peak: float | None) -> KernelPoint:
    """The peak rule for a raw kernel point (a copy): efficiency = rate ÷ peak, and a rate
    above ``PEAK_TOLERANCE`` × peak is marked rejected (its seconds are kept)."""
    rate = point.rate
    if peak is None or rate is None or not point.ok:
        return point
    update: dict[str, Any] = {"peak": peak, "efficiency": rate / peak}
    if rate > PEAK_TOLERANCE * peak:
        update.update(
            status="rejected",
            efficiency=None,
            reason=f"{rate:.4g} exceeds {PEAK_TOLERANCE:.2f} × the known peak {peak:.4g}",
        )
    return point.model_copy(update=update)


def apply_peaks_in_place(report: BenchReport, peaks: dict[str, float]) -> None:
    """Fill ``peak``/``efficiency`` on every figure that has a comparable peak, and reject
    figures above 1.15 × peak. Mutates ``report``."""
    p = normalize_peaks(peaks)
    report.peaks_used = dict(p)
    for slot in figure_slots(report):
        if slot.peak_key is not None:
            slot.replace(check_peak(slot.figure, p.get(slot.peak_key), slot.what))
    if report.kernels:
        report.kernels.points = [
            check_kernel_point(pt, p.get(kernel_peak_key(pt) or "")) for pt in report.kernels.points
        ]


def impossible_figure(
    report: BenchReport, peaks: Mapping[str, float | None]
) -> tuple[str, str] | None:
    """The first figure of ``report`` that claims more than ``PEAK_TOLERANCE`` × its known
    peak, as (JSON path, message); None when every figure is possible.

    Figures the client already rejected carry no value and pass: they claim nothing.
    """
    p = normalize_peaks(peaks)
    for slot in figure_slots(report):
        fig, peak = slot.figure, p.get(slot.peak_key or "")
        if (
            peak is not None
            and fig.ok
            and fig.value is not None
            and fig.value > PEAK_TOLERANCE * peak
        ):
            return f"{slot.path}.value", _too_fast(slot.what, fig.value, fig.unit, peak)
    for i, pt in enumerate(report.kernels.points if report.kernels else []):
        peak, rate = p.get(kernel_peak_key(pt) or ""), pt.rate
        if peak is not None and pt.ok and rate is not None and rate > PEAK_TOLERANCE * peak:
            field = "tflops" if pt.kernel_class in COMPUTE_CLASSES else "gbs"
            unit = "TFLOPS" if field == "tflops" else "GB/s"
            return f"kernels.points.{i}.{field}", _too_fast(
                f"{pt.kernel_class} {pt.op} {pt.dtype}", rate, unit, peak
            )
    return None


def _too_fast(what: str, value: float, unit: str, peak: float) -> str:
    return (
        f"{what}: {value:.4g} {unit} is above {PEAK_TOLERANCE:.2f} × this GPU's catalog peak "
        f"({peak:.4g} {unit}), more than boost clocks and timing noise allow: not a measurement"
    )


def apply_peaks(
    report: BenchReport,
    peaks: dict[str, float],
    slug: str | None = None,
    name: str | None = None,
    matched_by: Literal["name", "manual"] = "name",
) -> BenchReport:
    """Return a copy of ``report`` with catalog peaks applied.

    ``peaks`` maps precision (``fp32``, ``tf32``, ``fp16``, ``bf16``, ``fp8``) to dense
    TFLOPS, ``bandwidth_gbs`` to memory bandwidth in GB/s and optionally ``host_link_gbs``
    to the host link (PCIe) per-direction GB/s. Every figure gets ``peak`` and
    ``efficiency`` = achieved ÷ peak; figures above 1.15 × peak are rejected. With a
    ``slug`` and ``name`` the report records ``catalog_match``.
    """
    new = report.model_copy(deep=True)
    apply_peaks_in_place(new, peaks)
    if slug and name:
        new.catalog_match = CatalogMatch(slug=slug, name=name, matched_by=matched_by)
    return BenchReport.model_validate(new.model_dump())

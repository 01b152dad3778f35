"""The versioned device-report schema: what `gpu-advisor bench` writes and the server stores.

Conventions (stated once, used everywhere):

* decimal units: 1 TFLOPS = 1e12 FLOP/s, 1 GB/s = 1e9 bytes/s;
* GEMM FLOPs = 2·M·N·K; convolution forward = 2·N·K·(C/g)·R·S·P·Q, forward+backward = 3×;
  model FLOPs counted with ``torch.utils.flop_counter.FlopCounterMode``;
* bandwidth counts bytes read + bytes written (STREAM convention: copy = 2 × the array);
* each figure is the median over timed blocks after warm-up, with p10/p90 of the same
  quantity and ``noisy`` = IQR/median > 0.10;
* a figure above 1.15 × a known peak is *rejected*: ``value`` is None, ``status`` is
  ``"rejected"``, the raw number is kept in ``rejected_value`` with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.vocab import MEASURED_PRECISIONS, DeviceBackend, MeasuredPrecision

SCHEMA_VERSION: Literal[1] = 1

#: Ratio above a known peak at which a measurement is rejected as an error.
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


class Environment(_Model):
    backend: Backend
    device: str
    device_name: str
    device_memory_bytes: int | None = Field(default=None, ge=0)
    device_count: int = Field(default=1, ge=0)
    compute_capability: str | None = None
    arch: str | None = None
    multiprocessors: int | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    rocm_version: str | None = None
    macos_version: str | None = None
    os: str
    python_version: str
    torch_version: str
    numpy_version: str | None = None
    blas_backend: str | None = None
    torch_config: str | None = None
    cpu_model: str | None = None
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


class CatalogMatch(_Model):
    slug: str
    name: str
    matched_by: Literal["name", "manual"]


class BenchReport(_Model):
    schema_version: Literal[1] = SCHEMA_VERSION
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    profile: str
    duration_s: float = Field(default=0.0, ge=0)
    environment: Environment
    matmul: MatmulSuite | None = None
    conv: ConvSuite | None = None
    memory: MemorySuite | None = None
    transfer: TransferSuite | None = None
    batch_scaling: BatchScalingSuite | None = None
    precision_speedups: list[Speedup] = Field(default_factory=list)
    peak_memory: PeakMemorySuite | None = None
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
        out: list[tuple[str, Figure]] = []
        if self.matmul:
            for r in self.matmul.rows:
                out.append((f"matmul.{r.precision}.{r.m}x{r.n}x{r.k}", r.figure))
            for p, s in self.matmul.by_precision.items():
                out.append((f"matmul.{p}.reference", s.reference))
                out.append((f"matmul.{p}.best", s.best))
        if self.conv:
            for c in self.conv.rows:
                out.append((f"conv.{c.layer}.{c.precision}.{c.mode}.{c.layout}", c.figure))
            for a in self.conv.aggregates:
                out.append((f"conv.{a.precision}.{a.mode}", a.tflops))
        if self.memory:
            for b in self.memory.rows:
                out.append((f"memory.{b.kernel}", b.figure))
            if self.memory.best:
                out.append(("memory.best", self.memory.best))
            if self.memory.triad:
                out.append(("memory.triad", self.memory.triad))
        if self.transfer:
            for t in self.transfer.rows:
                out.append((f"transfer.{t.direction}.{t.memory}.{t.size_bytes}", t.figure))
            for f in self.transfer.fits:
                out.append((f"transfer.{f.direction}.{f.memory}.headline", f.headline))
        if self.batch_scaling:
            for curve in self.batch_scaling.curves:
                for pt in curve.points:
                    base = f"batch.{curve.workload}.{curve.mode}.{curve.precision}.{pt.batch}"
                    out.append((base + ".step_time", pt.step_time))
                    out.append((base + ".samples_per_s", pt.samples_per_s))
                    out.append((base + ".tflops", pt.tflops))
        return out

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


def _peak_for(peaks: dict[str, float], precision: str) -> float | None:
    return peaks.get(precision)


def apply_peaks_in_place(report: BenchReport, peaks: dict[str, float]) -> None:
    """Fill ``peak``/``efficiency`` on every figure that has a comparable peak, and reject
    figures above 1.15 × peak. Mutates ``report``."""
    p = normalize_peaks(peaks)
    report.peaks_used = dict(p)
    if report.matmul:
        for r in report.matmul.rows:
            r.figure = check_peak(r.figure, _peak_for(p, r.precision), f"matmul {r.precision}")
        for prec, s in report.matmul.by_precision.items():
            s.reference = check_peak(s.reference, _peak_for(p, prec), f"matmul {prec}")
            s.best = check_peak(s.best, _peak_for(p, prec), f"matmul {prec}")
    if report.conv:
        for c in report.conv.rows:
            c.figure = check_peak(c.figure, _peak_for(p, c.precision), f"conv {c.precision}")
        for a in report.conv.aggregates:
            a.tflops = check_peak(a.tflops, _peak_for(p, a.precision), f"conv {a.precision}")
    if report.memory:
        bw = p.get(PEAK_BANDWIDTH_KEY)
        for b in report.memory.rows:
            b.figure = check_peak(b.figure, bw, f"{b.kernel} bandwidth")
        if report.memory.best is not None:
            report.memory.best = check_peak(report.memory.best, bw, "bandwidth")
        if report.memory.triad is not None:
            report.memory.triad = check_peak(report.memory.triad, bw, "triad bandwidth")
    if report.transfer:
        link = p.get(PEAK_LINK_KEY)
        for t in report.transfer.rows:
            if t.memory != "unified":
                t.figure = check_peak(t.figure, link, f"{t.direction} transfer")
        for f in report.transfer.fits:
            if f.memory != "unified":
                f.headline = check_peak(f.headline, link, f"{f.direction} transfer")
    if report.batch_scaling:
        for curve in report.batch_scaling.curves:
            for pt in curve.points:
                pt.tflops = check_peak(
                    pt.tflops, _peak_for(p, curve.precision), f"{curve.workload} {curve.precision}"
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

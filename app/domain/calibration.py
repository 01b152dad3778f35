"""Measured efficiencies that replace the published priors.

A device report gives achieved ÷ datasheet ratios on the machine that ran it (matmul per
precision, memory bandwidth, host transfers). They apply at full weight to that GPU model
(by slug) and at half weight to other GPUs of the same vendor and architecture family,
because efficiency is a property of the silicon generation and its software stack and does
not transfer across vendors or generations (benchmark-methodology.md §7).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.domain.gpu import GpuSpec

FAMILY_WEIGHT = 0.5
# Measured ratios outside these bounds are measurement errors (cache-resident arrays, wrong
# clocks) rather than physics; methodology §7 rejects > 1.15 × peak.
MIN_RATIO, MAX_RATIO = 0.05, 1.15


@dataclass(frozen=True, slots=True)
class Efficiencies:
    """Achieved ÷ dense datasheet peak; a missing entry means not measured."""

    compute: dict[str, float] = field(default_factory=dict)  # by precision
    memory: float | None = None
    h2d_pinned_gbs: float | None = None
    h2d_pageable_gbs: float | None = None
    count: int = 1  # machines these figures pool (robust median over device reports)


@dataclass(frozen=True, slots=True)
class Calibration:
    by_slug: dict[str, Efficiencies] = field(default_factory=dict)
    by_family: dict[str, Efficiencies] = field(default_factory=dict)
    source: str | None = None  # e.g. the device report id
    # perf.efficiencies per GPU spec: the same for every request that shares this calibration
    # (the service keeps one until a report or the catalog changes).
    memo: dict[object, Any] = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def family_key(gpu: GpuSpec) -> str:
        return f"{gpu.vendor}:{gpu.architecture.lower()}"

    @classmethod
    def from_measurement(
        cls, gpu: GpuSpec, eff: Efficiencies, source: str | None = None
    ) -> Calibration:
        return cls(by_slug={gpu.slug: eff}, by_family={cls.family_key(gpu): eff}, source=source)


def _clamp(x: float) -> float:
    return min(MAX_RATIO, max(MIN_RATIO, x))


def adjust(
    prior: float, gpu: GpuSpec, calibration: Calibration | None, kind: str, precision: str = ""
) -> tuple[float, str]:
    """Return (efficiency, provenance) where provenance is 'measured', 'family' or 'prior'."""
    if calibration is None:
        return prior, "prior"
    own = calibration.by_slug.get(gpu.slug)
    value = _pick(own, kind, precision)
    if value is not None:
        return _clamp(value), "measured"
    fam = calibration.by_family.get(Calibration.family_key(gpu))
    value = _pick(fam, kind, precision)
    if value is not None:
        return (1 - FAMILY_WEIGHT) * prior + FAMILY_WEIGHT * _clamp(value), "family"
    return prior, "prior"


def _pick(eff: Efficiencies | None, kind: str, precision: str) -> float | None:
    if eff is None:
        return None
    if kind == "memory":
        return eff.memory
    value = eff.compute.get(precision)
    if value is None and precision in ("bf16", "fp16"):
        # bf16 and fp16 share the same tensor-core datapath on every current part
        value = eff.compute.get("fp16" if precision == "bf16" else "bf16")
    return value


# ---------------------------------------------------------------- pooling device reports

# A figure further than this many scaled MADs from the median of its (GPU, precision) is an
# outlier (a throttled or misconfigured machine) and is left out of the pool.
OUTLIER_MADS = 3.0
MAD_SCALE = 1.4826  # MAD → standard deviation for normally distributed figures


@dataclass(frozen=True, slots=True)
class Measurement:
    """One stored device report's achieved ÷ peak ratios for its catalog GPU."""

    slug: str
    backend: str
    figures: dict[str, float]  # precision -> compute efficiency; "bandwidth_gbs" -> memory


def _robust(values: list[float]) -> tuple[float | None, int]:
    """Median after dropping out-of-range figures and outliers, and how many were kept."""
    vals = sorted(v for v in values if MIN_RATIO <= v <= MAX_RATIO)
    if not vals:
        return None, 0
    med = _median(vals)
    mad = _median([abs(v - med) for v in vals]) * MAD_SCALE
    if mad > 0:
        vals = [v for v in vals if abs(v - med) <= OUTLIER_MADS * mad]
    return _median(vals), len(vals)


def _median(vals: list[float]) -> float:
    s = sorted(vals)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def pool(measurements: list[Measurement], backends: dict[str, str]) -> dict[str, Efficiencies]:
    """Efficiencies per GPU model pooled over every stored report of it: per (GPU, backend,
    precision) the robust median of the reports run on the GPU's own backend (``backends``:
    slug -> backend), out-of-range figures and outliers dropped; ``count`` is the number of
    machines behind the least-covered figure."""
    by: dict[tuple[str, str], list[float]] = {}
    for m in measurements:
        if backends.get(m.slug, m.backend) != m.backend:
            continue
        for key, value in m.figures.items():
            by.setdefault((m.slug, key), []).append(value)
    out: dict[str, Efficiencies] = {}
    for slug in sorted({s for s, _ in by}):
        compute: dict[str, float] = {}
        memory: float | None = None
        counts: list[int] = []
        for (s_, key), values in by.items():
            if s_ != slug:
                continue
            robust, n = _robust(values)
            if robust is None:
                continue
            value = robust
            counts.append(n)
            if key == "bandwidth_gbs":
                memory = value
            else:
                compute[key] = value
        if compute or memory is not None:
            out[slug] = Efficiencies(compute=compute, memory=memory, count=min(counts))
    return out


def pooled_calibration(
    pooled: dict[str, Efficiencies], gpus: list[GpuSpec], source: str | None = None
) -> Calibration | None:
    """The engine's calibration from pooled figures: by GPU model at full weight, and by
    architecture family (the median of its models) at half weight."""
    if not pooled:
        return None
    fams: dict[str, list[Efficiencies]] = {}
    by_slug = {g.slug: g for g in gpus}
    for slug, eff in pooled.items():
        gpu = by_slug.get(slug)
        if gpu is not None:
            fams.setdefault(Calibration.family_key(gpu), []).append(eff)
    by_family: dict[str, Efficiencies] = {}
    for key, effs in fams.items():
        keys = {k for e in effs for k in e.compute}
        mems = [e.memory for e in effs if e.memory is not None]
        by_family[key] = Efficiencies(
            compute={k: _median([e.compute[k] for e in effs if k in e.compute]) for k in keys},
            memory=_median(mems) if mems else None,
            count=sum(e.count for e in effs),
        )
    return Calibration(by_slug=dict(pooled), by_family=by_family, source=source)


def merge(base: Calibration | None, own: Calibration | None) -> Calibration | None:
    """A named device report (``own``) wins for its GPU; pooled figures fill the rest."""
    if base is None:
        return own
    if own is None:
        return base
    return Calibration(
        by_slug={**base.by_slug, **own.by_slug},
        by_family={**base.by_family, **own.by_family},
        source=own.source or base.source,
    )

"""Measured efficiencies that replace the published priors.

A device report gives achieved ÷ datasheet ratios on the machine that ran it (matmul per
precision, memory bandwidth, host transfers). They apply at full weight to that GPU model
(by slug) and at half weight to other GPUs of the same vendor and architecture family,
because efficiency is a property of the silicon generation and its software stack and does
not transfer across vendors or generations (benchmark-methodology.md §7).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from app.domain.gpu import GpuSpec
from app.domain.kernel_profiles import (
    MEASURED_SOURCE,
    GpuProfile,
    ProfilePoint,
    ProfileStore,
    Shape,
)

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
    # figures pooling left out because their timing was noisy (IQR/median > 0.10)
    noisy_left_out: int = 0


@dataclass(frozen=True, slots=True)
class Calibration:
    by_slug: dict[str, Efficiencies] = field(default_factory=dict)
    by_family: dict[str, Efficiencies] = field(default_factory=dict)
    source: str | None = None  # e.g. the device report id
    # Kernel profiles (shipped, with pooled device reports merged in) and the catalog specs
    # of the GPUs they describe (the carry-over's donors): the engine prices GEMMs from them
    # (perf.efficiencies); built once per catalog and reports snapshot by the service.
    profiles: ProfileStore | None = field(default=None, compare=False, repr=False)
    profile_gpus: Mapping[str, GpuSpec] = field(default_factory=dict, compare=False, repr=False)
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
    #: The machine that ran it (a host identity the report carries, else the report's own
    #: content hash): reports of one machine count once. None: a machine of its own.
    machine: str | None = None
    #: Keys of ``figures`` whose timing was noisy (IQR/median > 0.10): left out of the pool.
    noisy: frozenset[str] = frozenset()


def _robust(values: list[float], weights: list[float] | None = None) -> tuple[float | None, int]:
    """(Weighted) median after dropping out-of-range figures and outliers, and how many were
    kept. Outliers are judged unweighted: an old report is no less wrong for being old."""
    pairs = [
        (v, 1.0 if weights is None else weights[i])
        for i, v in enumerate(values)
        if MIN_RATIO <= v <= MAX_RATIO
    ]
    if not pairs:
        return None, 0
    med = _median([v for v, _ in pairs])
    mad = _median([abs(v - med) for v, _ in pairs]) * MAD_SCALE
    if mad > 0:
        pairs = [(v, w) for v, w in pairs if abs(v - med) <= OUTLIER_MADS * mad]
    if weights is None:
        return _median([v for v, _ in pairs]), len(pairs)
    return _weighted_median(pairs), len(pairs)


def _weighted_median(pairs: list[tuple[float, float]]) -> float:
    """The value where the cumulative weight first reaches half the total (the lower
    median on an exact tie, averaged with the next value as the plain median is)."""
    s = sorted(pairs)
    half = sum(w for _, w in s) / 2
    acc = 0.0
    for i, (v, w) in enumerate(s):
        acc += w
        if math.isclose(acc, half) and i + 1 < len(s):
            return 0.5 * (v + s[i + 1][0])
        if acc > half:
            return v
    return s[-1][0]


def _median(vals: list[float]) -> float:
    s = sorted(vals)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def pool(measurements: list[Measurement], backends: dict[str, str]) -> dict[str, Efficiencies]:
    """Efficiencies per GPU model pooled over every stored report of it: per (GPU, backend,
    precision) the robust median of the reports run on the GPU's own backend (``backends``:
    slug -> backend), out-of-range figures and outliers dropped.

    A machine counts once however many of its reports are stored (the same report uploaded
    three times had read as "measured on 3 machines" and narrowed the band): its figures are
    first reduced to their median per machine (``Measurement.machine``). Figures flagged
    noisy are left out and counted in ``noisy_left_out``. ``count`` is the number of
    machines behind the least-covered figure."""
    by: dict[tuple[str, str], dict[str, list[float]]] = {}
    noisy: dict[str, int] = {}
    for i, m in enumerate(measurements):
        if backends.get(m.slug, m.backend) != m.backend:
            continue
        machine = m.machine if m.machine is not None else f"#{i}"
        for key, value in m.figures.items():
            if key in m.noisy:
                noisy[m.slug] = noisy.get(m.slug, 0) + 1
                continue
            by.setdefault((m.slug, key), {}).setdefault(machine, []).append(value)
    out: dict[str, Efficiencies] = {}
    for slug in sorted({s for s, _ in by}):
        compute: dict[str, float] = {}
        memory: float | None = None
        counts: list[int] = []
        for (s_, key), machines in by.items():
            if s_ != slug:
                continue
            robust, n = _robust([_median(values) for values in machines.values()])
            if robust is None:
                continue
            value = robust
            counts.append(n)
            if key == "bandwidth_gbs":
                memory = value
            else:
                compute[key] = value
        if compute or memory is not None:
            out[slug] = Efficiencies(
                compute=compute,
                memory=memory,
                count=min(counts),
                noisy_left_out=noisy.get(slug, 0),
            )
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
    """A named device report (``own``) wins for its GPU; pooled figures fill the rest; the
    kernel profiles are the pooled ones."""
    if base is None:
        return own
    if own is None:
        return base
    return Calibration(
        by_slug={**base.by_slug, **own.by_slug},
        by_family={**base.by_family, **own.by_family},
        source=own.source or base.source,
        profiles=own.profiles or base.profiles,
        profile_gpus=own.profile_gpus or base.profile_gpus,
    )


def with_profiles(
    calibration: Calibration | None, store: ProfileStore, gpus: Mapping[str, GpuSpec]
) -> Calibration | None:
    """``calibration`` with the kernel profile store attached (a bare one where there is no
    measured efficiency yet: the shipped profiles still price GEMMs); None without profiles."""
    if not store.profiles:
        return calibration
    if calibration is None:
        return Calibration(profiles=store, profile_gpus=dict(gpus))
    return replace(calibration, profiles=store, profile_gpus=dict(gpus), memo={})


# ---------------------------------------------------------------- pooling kernel profiles

#: Weight of a report one schema version behind the current one (halved again per version):
#: older bench versions timed fewer shapes with older methods, so they count, but less.
OLD_VERSION_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class KernelMeasurement:
    """One stored report's raw kernel points for its catalog GPU, as efficiencies."""

    slug: str
    backend: str
    schema_version: int
    # (kernel class, dtype, shape, achieved ÷ peak)
    points: tuple[tuple[str, str, Shape, float], ...]


def version_weight(version: int, current: int) -> float:
    return OLD_VERSION_WEIGHT ** max(0, current - version)


def pool_kernel_points(
    measurements: list[KernelMeasurement], backends: dict[str, str], current_version: int
) -> dict[str, GpuProfile]:
    """Kernel profiles per GPU model from every stored report of it: per (GPU, class, dtype,
    shape) the robust median (out-of-range figures and outliers out, older schema versions
    down-weighted) over reports run on the GPU's own backend; ``reports`` counts the
    reports behind the profile, each point's ``count`` the figures kept for it."""
    by: dict[tuple[str, str, str, Shape], list[tuple[float, float]]] = {}
    reports: dict[str, int] = {}
    for m in measurements:
        if backends.get(m.slug, m.backend) != m.backend or not m.points:
            continue
        reports[m.slug] = reports.get(m.slug, 0) + 1
        w = version_weight(m.schema_version, current_version)
        for kc, dtype, shape, eff in m.points:
            by.setdefault((m.slug, kc, dtype, shape), []).append((eff, w))
    points: dict[str, list[ProfilePoint]] = {}
    for (slug, kc, dtype, shape), pairs in sorted(by.items()):
        value, n = _robust([v for v, _ in pairs], [w for _, w in pairs])
        if value is not None:
            point = ProfilePoint(kc, dtype, shape, value, source=MEASURED_SOURCE, count=n)
            points.setdefault(slug, []).append(point)
    return {
        slug: GpuProfile(slug=slug, points=tuple(pts), reports=reports[slug])
        for slug, pts in points.items()
    }

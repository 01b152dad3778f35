"""Measured efficiencies that replace the published priors.

A device report gives achieved ÷ datasheet ratios on the machine that ran it (matmul per
precision, memory bandwidth, host transfers). They apply at full weight to that GPU model
(by slug) and at half weight to other GPUs of the same vendor and architecture family,
because efficiency is a property of the silicon generation and its software stack and does
not transfer across vendors or generations (benchmark-methodology.md §7).
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass(frozen=True, slots=True)
class Calibration:
    by_slug: dict[str, Efficiencies] = field(default_factory=dict)
    by_family: dict[str, Efficiencies] = field(default_factory=dict)
    source: str | None = None  # e.g. the device report id

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

"""A row's throughput band: the calibrated band for its regime (benchmarks/accuracy.py writes
them into data/efficiency.yaml), widened where the engine extrapolates beyond what the
calibration set measured. Every widening lives here, with the reason a row's basis states."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.domain import conformal
from app.domain.efficiency import EfficiencyTable

# Fallback bands when the regime has no calibrated band (or the row is measured). The modelled
# band reflects the accuracy check against Lambda's published training numbers (median error
# ~1.15×, worst cases ~1.5×); measured efficiencies narrow it.
BAND_MODELLED = (0.70, 1.40)
BAND_FAMILY = (0.80, 1.25)
BAND_MEASURED = (0.90, 1.10)
BAND_SPARSE_VENDOR = (0.50, 1.60)


@dataclass(frozen=True)
class Widening:
    low: float  # multiplies the band's low edge (≤ 1)
    high: float  # multiplies the band's high edge (≥ 1)
    reason: str


# Stated allowances, each naming an effect the engine does not model. The runtime and
# architecture ones are fallbacks: where data/efficiency.yaml carries `bands.extrapolation`
# (benchmarks/accuracy.py: conformal over the tuning sets' runtimes, architectures, each one
# unit), a row with an unseen runtime gets that band in place of its regime's, and one with an
# unseen architecture is widened out to that band, under the same reasons. Widenings
# combine in quadrature in log space (independent errors), not as a product.
UNMEASURED_RUNTIME = Widening(
    0.80, 1.25, "no published results for this runtime in the calibration set"
)
UNMEASURED_ARCHITECTURE = Widening(
    0.85, 1.20, "no published results on this architecture in the calibration set"
)
MOE = Widening(
    0.50,
    1.0,
    "mixture-of-experts: routing, small per-expert matmuls and expert-parallel all-to-all "
    "are not timed (the engine reads only the active experts' weights)",
)
FOUR_BIT = Widening(
    0.70,
    1.0,
    "4-bit weights: dequantisation inside the matmul slows kernels as the batch grows",
)
DERIVED_PEAK = Widening(
    0.70, 1.15, "16-bit peak derived from fp32 and the architecture's tensor ratio"
)
MULTI_GPU = Widening(0.85, 1.10, "multi-GPU scaling adds spread")

# 4-bit runs the calibration set measured: llama.cpp GGUF Q4_0 (tests/data/llm_inference.yaml)
_CALIBRATED_4BIT_RUNTIMES = {"llama.cpp"}


@dataclass(frozen=True)
class BandInputs:
    """What decides a row's band, from the row's GPU, workload and estimate."""

    regime: str  # train | infer | decode | serving
    vendor: str
    architecture: str
    runtime: str
    efficiency_source: str  # measured | family | prior
    measured_on: int = 1
    moe: bool = False
    four_bit: bool = False
    derived_peak: bool = False
    num_gpus: int = 1


def _base(x: BandInputs, table: EfficiencyTable | None) -> tuple[float, float, str, bool]:
    calibrated = table.band(x.regime, x.vendor, x.runtime) if table is not None else None
    if x.efficiency_source == "measured":
        on = f" (measured on {x.measured_on} machines)" if x.measured_on > 1 else ""
        return *BAND_MEASURED, "efficiencies measured on this GPU model" + on, False
    if x.efficiency_source == "family":
        return *BAND_FAMILY, "efficiencies measured on the same architecture family", False
    unseen = _unseen_runtime_band(x, table)
    if calibrated is not None and unseen is not None:
        # the regime's band describes the runtimes it has results for; this one it has none
        basis = (
            f"modelled; {UNMEASURED_RUNTIME.reason}: the band conformal over the runtimes "
            "the published results cover, each runtime one unit"
        )
        return *unseen, basis, True
    if calibrated is not None:
        basis = (
            f"modelled; split-conformal band from published {x.regime} results, "
            "calibrated with each GPU and each workload held out (≈80 % coverage)"
        )
        return *calibrated, basis, True
    if x.vendor != "nvidia":
        return *BAND_SPARSE_VENDOR, "modelled; few published measurements for this vendor", False
    return *BAND_MODELLED, "modelled from datasheet figures and published priors", False


def _unseen_runtime_band(
    x: BandInputs, table: EfficiencyTable | None
) -> tuple[float, float] | None:
    """The band for a runtime the tuning sets lack (conformal over their runtimes), where the
    row's runtime is not in its regime's calibration set and the table carries it; else None."""
    covered = table.covered.get(x.regime) if table is not None else None
    if table is None or covered is None or x.runtime in covered[0]:
        return None
    return table.extrapolation.get("runtime")


def estimated(
    stated: Widening, name: str, table: EfficiencyTable | None, base: tuple[float, float]
) -> Widening:
    """``stated``, or the factors that take ``base`` out to the band the tuning sets needed for
    this extrapolation (same reason, so a row's basis reads alike whichever applies)."""
    outer = table.extrapolation.get(name) if table is not None else None
    if outer is None:
        return stated
    return Widening(*conformal.widening(outer, base), stated.reason)


def widenings(
    x: BandInputs,
    table: EfficiencyTable | None,
    calibrated: bool,
    base: tuple[float, float] = (1.0, 1.0),
) -> list[Widening]:
    """The extrapolations that apply to this row, in the order its basis names them."""
    out: list[Widening] = []
    covered = table.covered.get(x.regime) if table is not None else None
    if calibrated and covered is not None:
        runtimes, architectures = covered
        if x.runtime not in runtimes and _unseen_runtime_band(x, table) is None:
            out.append(UNMEASURED_RUNTIME)  # no estimate shipped: the stated allowance
        if x.architecture not in architectures:
            out.append(estimated(UNMEASURED_ARCHITECTURE, "architecture", table, base))
    if x.moe:
        out.append(MOE)
    if x.four_bit and x.runtime not in _CALIBRATED_4BIT_RUNTIMES:
        out.append(FOUR_BIT)
    if x.derived_peak:
        out.append(DERIVED_PEAK)
    if x.num_gpus > 1:
        out.append(MULTI_GPU)
    return out


def combine(ws: list[Widening]) -> tuple[float, float]:
    """Independent extrapolation errors add in quadrature in log space."""
    lo = math.exp(-math.sqrt(sum(math.log(w.low) ** 2 for w in ws)))
    hi = math.exp(math.sqrt(sum(math.log(w.high) ** 2 for w in ws)))
    return lo, hi


def band(x: BandInputs, table: EfficiencyTable | None) -> tuple[float, float, str]:
    """(low factor, high factor, basis) on the row's expected throughput."""
    lo, hi, basis, calibrated = _base(x, table)
    ws = widenings(x, table, calibrated, (lo, hi))
    if ws:
        wl, wh = combine(ws)
        lo, hi = lo * wl, hi * wh
        basis += "; widened: " + "; ".join(w.reason for w in ws)
    return lo, hi, basis

"""Kernel profiles: e(kernel class, shape) per GPU, and the carry-over to GPUs nobody measured.

A profile point is an achieved rate for one (kernel class, dtype, shape) divided by the
catalog peak of its GPU: dense TFLOPS of the dtype for compute classes (GEMM, attention
prefill), memory bandwidth for the memory-bound ones. Points come from shipped profiles
(``data/profiles/<slug>.yaml``, published sweeps and vendor figures, each with its source)
and from stored device reports, pooled per GPU model (``app.domain.calibration``).

Carry-over (docs/methodology.md, "Kernel profiles"). Each GPU's points give it a curve,
t(shape) = t_fixed + work ÷ (c · roof(shape) · peak rate), where roof = min(1, I·B/P) is the
best fraction of peak a shape of arithmetic intensity I can reach on a GPU of peak P and
bandwidth B (1 for memory classes), c the best fraction of that roofline the GPU reached and
t_fixed the per-kernel time no shape hides (launch, prologue, a partial wave). A GPU without
points takes c and t_fixed from the profiled GPUs, weighted by architecture features:

* vendor (a different vendor's software stack is a different kernel library: × 0.1; for
  attention, whose kernels are each vendor's own hand-written library, same vendor only);
* tensor-core generation (same generation × 1, else × 0.5);
* memory technology (HBM / GDDR / LPDDR: × 0.7 when it differs);
* SM count and boost clock where both profiles state them (× e^(−|ln ratio|/2));
* L2 size where both state it (× e^(−|ln ratio|/4)).

The roofline is always the target's own, so where a shape falls (a skinny decode GEMM on
the bandwidth slope, a large square one under the compute roof) follows the target's ridge
point P/B.

Attention prefill has its own curve (``attention_factor``): e = c · f(shape), f the softmax's
vector time beside the matmuls (head dim against the GPU's tensor-to-vector balance), the Q/O
tile overhead per key loop, the causal mask's diagonal blocks and, where batch and heads
are known, the wave fill of its thread blocks; c is the best kernel's
median of e ÷ f, and donors also weigh by how alike their tensor-to-vector balance is.

The constants are round numbers, not fitted; benchmarks/kernel_carryover.py leaves each
profiled GPU out in turn and reports the median error over the shipped profiles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.domain.gpu import GpuSpec
from app.domain.kernels import BEST_HEAD_DIM, SOFTMAX_FLOPS, wave_fill

COMPUTE_CLASSES = frozenset({"gemm", "attention_prefill"})
MEMORY_CLASSES = frozenset({"attention_decode", "elementwise", "normalization", "embedding"})
KERNEL_CLASSES = COMPUTE_CLASSES | MEMORY_CLASSES

OTHER_VENDOR = 0.1
OTHER_TENSOR_GEN = 0.5
OTHER_MEMORY = 0.7
# How far a donor may be from the target before its figures stop counting at all.
MIN_WEIGHT = 1e-4
# The source of pooled device-report points (app.domain.calibration.pool_kernel_points).
MEASURED_SOURCE = "device reports"
# Kernels shorter than this show their fixed per-kernel time; longer ones hide it.
SMALL_KERNEL_S = 50e-6

Shape = tuple[tuple[str, int], ...]


def shape_key(shape: Mapping[str, int]) -> Shape:
    return tuple(sorted((str(k), int(v)) for k, v in shape.items()))


@dataclass(frozen=True, slots=True)
class ProfilePoint:
    kernel_class: str
    dtype: str
    shape: Shape
    efficiency: float  # achieved ÷ the catalog peak (compute or bandwidth)
    source: str
    op: str = ""
    count: int = 1  # device reports pooled into it (1 for a published figure)


@dataclass(frozen=True, slots=True)
class GpuFeatures:
    """What the carry-over compares between two GPUs."""

    vendor: str
    tensor_gen: str
    memory_tech: str | None
    peak_tflops: Mapping[str, float]
    bandwidth_gbs: float
    sm_count: int | None = None
    boost_mhz: float | None = None
    l2_mb: float | None = None


@dataclass(frozen=True, slots=True)
class GpuProfile:
    slug: str
    points: tuple[ProfilePoint, ...] = ()
    reports: int = 0  # stored device reports behind the points (0: published figures only)
    features: Mapping[str, float] = field(default_factory=dict)  # sm_count, boost_mhz, l2_mb
    # A profiled GPU on the same compute die, clocks and power limit (the profile file's
    # ``same_die_as``): its compute-class figures stand for this GPU's where it has none of a
    # class; "" where none is named
    die_twin: str = ""


@dataclass(frozen=True, slots=True)
class ProfileStore:
    profiles: Mapping[str, GpuProfile] = field(default_factory=dict)
    # gemm_efficiency per (GPU spec, dtype): the carry-over fits every donor's curve, so a
    # store built once per catalog snapshot answers each GPU once
    memo: dict[object, Any] = field(default_factory=dict, compare=False, repr=False)

    def without(self, slug: str) -> ProfileStore:
        return ProfileStore({s: p for s, p in self.profiles.items() if s != slug})


# ---------------------------------------------------------------------------------- features

_NVIDIA_GEN = (
    ((10, 0), "blackwell"),
    ((9, 0), "hopper"),
    ((8, 9), "ada"),
    ((8, 0), "ampere"),
    ((7, 5), "turing"),
    ((7, 0), "volta"),
)


def tensor_generation(gpu: GpuSpec) -> str:
    """The tensor-core generation: from the compute capability on NVIDIA parts (sm_120
    consumer Blackwell counts as Blackwell), else the vendor's architecture name."""
    if gpu.vendor == "nvidia" and gpu.compute_capability:
        try:
            major, minor = (int(x) for x in gpu.compute_capability.split(".")[:2])
        except ValueError:
            major, minor = 0, 0
        for cc, name in _NVIDIA_GEN:
            if (major, minor) >= cc:
                return name
        return "pre-volta"
    return f"{gpu.vendor}:{gpu.architecture.lower()}"


def memory_technology(gpu: GpuSpec) -> str | None:
    kind = (gpu.memory_type or "").upper()
    for tech in ("HBM", "GDDR", "LPDDR", "DDR"):
        if kind.startswith(tech):
            return tech.lower()
    return None


def features_of(gpu: GpuSpec, extra: Mapping[str, float] | None = None) -> GpuFeatures:
    peaks = {p: v for p in ("fp32", "tf32", "fp16", "bf16", "fp8") if (v := gpu.peak_tflops(p))}
    extra = extra or {}
    sm = extra.get("sm_count")
    return GpuFeatures(
        vendor=gpu.vendor,
        tensor_gen=tensor_generation(gpu),
        memory_tech=memory_technology(gpu),
        peak_tflops=peaks,
        bandwidth_gbs=gpu.memory_bandwidth_gbs,
        sm_count=int(sm) if sm else None,
        boost_mhz=extra.get("boost_mhz"),
        l2_mb=extra.get("l2_mb"),
    )


# ---------------------------------------------------------------------------------- rooflines


def work_of(kernel_class: str, shape: Mapping[str, int], dtype: str) -> tuple[float, float]:
    """(FLOPs, minimum bytes) of one kernel; the byte counts follow app/bench/report.py."""
    elt = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}.get(dtype, 2)
    if kernel_class == "gemm":
        b = shape.get("batch", 1)
        m, n, k = shape["m"], shape["n"], shape["k"]
        return 2.0 * b * m * n * k, float(elt * b * (m * k + k * n + m * n))
    if kernel_class.startswith("attention"):
        b, h, d = shape["batch"], shape["heads"], shape["head_dim"]
        q, kv = shape["q_len"], shape["kv_len"]
        flops = 4.0 * b * h * q * kv * d / (2 if shape.get("causal") else 1)
        return flops, float(elt * b * h * d * (2 * q + 2 * kv))
    return 0.0, 1.0


def roofline_fraction(
    kernel_class: str, shape: Mapping[str, int], dtype: str, feats: GpuFeatures
) -> float:
    """The best fraction of the class's peak this shape can reach on this GPU: min(1, I·B/P)
    for compute classes (I = FLOPs per byte), 1 for memory classes (their peak is B)."""
    if kernel_class not in COMPUTE_CLASSES:
        return 1.0
    peak = _peak(feats, dtype)
    if peak is None:
        return 1.0
    flops, nbytes = work_of(kernel_class, shape, dtype)
    intensity = flops / max(nbytes, 1.0)
    return min(1.0, intensity * feats.bandwidth_gbs * 1e9 / (peak * 1e12))


def _peak(feats: GpuFeatures, dtype: str) -> float | None:
    peak = feats.peak_tflops.get(dtype)
    if peak is None and dtype in ("bf16", "fp16"):
        peak = feats.peak_tflops.get("fp16" if dtype == "bf16" else "bf16")
    return peak


# ---------------------------------------------------------------------------------- carry-over


def _log_ratio(a: float | None, b: float | None) -> float:
    if not a or not b:
        return 0.0
    return abs(math.log(a / b))


def similarity(target: GpuFeatures, donor: GpuFeatures, kernel_class: str = "") -> float:
    """How much a donor's measured fractions of the roofline say about the target. For
    attention also how alike the two SMs' tensor-to-vector balance is (``vector_balance``):
    the softmax between the two matmuls runs on the vector units, so a GPU whose tensor
    cores outrun them by the same factor keeps the same share of its peak."""
    w = 1.0
    if kernel_class in ATTENTION_CLASSES:
        w *= math.exp(-_log_ratio(vector_balance(target), vector_balance(donor)))
    if target.vendor != donor.vendor:
        w *= OTHER_VENDOR
    if target.tensor_gen != donor.tensor_gen:
        w *= OTHER_TENSOR_GEN
    if target.memory_tech and donor.memory_tech and target.memory_tech != donor.memory_tech:
        w *= OTHER_MEMORY
    w *= math.exp(-_log_ratio(target.sm_count, donor.sm_count) / 2)
    w *= math.exp(-_log_ratio(target.boost_mhz, donor.boost_mhz) / 2)
    w *= math.exp(-_log_ratio(target.l2_mb, donor.l2_mb) / 4)
    return w


def _same_dtype(a: str, b: str) -> bool:
    return a == b or {a, b} == {"bf16", "fp16"}


def _rate_peak(feats: GpuFeatures, kernel_class: str, dtype: str) -> float | None:
    """The class's peak rate in work per second: FLOP/s or bytes/s."""
    if kernel_class in COMPUTE_CLASSES:
        peak = _peak(feats, dtype)
        return peak * 1e12 if peak else None
    return feats.bandwidth_gbs * 1e9


def _work(kernel_class: str, shape: Mapping[str, int], dtype: str) -> float:
    flops, nbytes = work_of(kernel_class, shape, dtype)
    return flops if kernel_class in COMPUTE_CLASSES else nbytes


@dataclass(frozen=True, slots=True)
class Curve:
    """One GPU's curve for a kernel class: t(shape) = fixed_s + work ÷ (ceiling · roof ·
    peak rate). ``ceiling`` is the best fraction of the roofline reached; ``fixed_s`` the
    per-kernel time no shape can hide (launch, prologue, a partial wave), seen only in
    small kernels, so None when none was measured."""

    ceiling: float
    fixed_s: float | None


def fit_curve(
    points: tuple[ProfilePoint, ...], feats: GpuFeatures, kernel_class: str, dtype: str
) -> Curve | None:
    cands = [p for p in points if p.kernel_class == kernel_class and _same_dtype(p.dtype, dtype)]
    rate = _rate_peak(feats, kernel_class, dtype)
    if not cands or rate is None:
        return None
    if kernel_class in ATTENTION_CLASSES:
        return _fit_attention(cands, feats)
    curve = _fit(cands, feats, kernel_class, dtype, rate)
    if curve.fixed_s is None:
        # the fixed per-kernel time (launch, prologue) does not depend on the dtype: borrow
        # it from the class's other dtypes measured on this GPU
        others = {p.dtype for p in points if p.kernel_class == kernel_class} - {dtype}
        fixed = [
            c.fixed_s
            for d in sorted(others)
            if (r := _rate_peak(feats, kernel_class, d)) is not None
            and (c := _fit([p for p in points if p.kernel_class == kernel_class and p.dtype == d],
                           feats, kernel_class, d, r)).fixed_s is not None
        ]  # fmt: skip
        if fixed:
            curve = Curve(curve.ceiling, _median(fixed))
    return curve


def _fit(
    cands: list[ProfilePoint], feats: GpuFeatures, kernel_class: str, dtype: str, rate: float
) -> Curve:
    roofs = [roofline_fraction(kernel_class, dict(p.shape), dtype, feats) if p.shape else 1.0
             for p in cands]  # fmt: skip
    ceiling = min(1.0, max(p.efficiency / max(r, 1e-9) for p, r in zip(cands, roofs, strict=True)))
    fixed: list[float] = []
    for p, roof in zip(cands, roofs, strict=True):
        if not p.shape:
            continue
        work = _work(kernel_class, dict(p.shape), dtype)
        measured = work / (p.efficiency * rate)
        if measured < SMALL_KERNEL_S:
            fixed.append(max(0.0, measured - work / (ceiling * roof * rate)))
    return Curve(ceiling, _median(fixed) if fixed else None)


def curve_efficiency(
    curve: Curve, feats: GpuFeatures, kernel_class: str, shape: Mapping[str, int], dtype: str
) -> float:
    """e at ``shape`` on the GPU ``feats`` describes; an empty shape asks for the ceiling."""
    if kernel_class in ATTENTION_CLASSES:
        return min(MAX_ATTENTION_CEILING, curve.ceiling * attention_factor(shape, feats))
    rate = _rate_peak(feats, kernel_class, dtype)
    if not shape or rate is None:
        return curve.ceiling
    work = _work(kernel_class, shape, dtype)
    roof = roofline_fraction(kernel_class, shape, dtype, feats)
    seconds = (curve.fixed_s or 0.0) + work / (curve.ceiling * roof * rate)
    return min(1.0, work / (rate * seconds))


# ---------------------------------------------------------------------------------- attention

ATTENTION_CLASSES = frozenset({"attention_prefill"})
# FlashAttention-2's forward tiles: 128 query rows per thread block, a loop over the keys in
# blocks of 64 for head dims up to 128 on Ampere and Ada (flash-attention,
# flash_fwd_launch_template.h). Loading the Q tile and writing the O tile move about as many
# bytes as one K/V block, so a block's loop does useful work visited ÷ (visited + KV_BLOCK).
Q_BLOCK = 128
KV_BLOCK = 64
# The online softmax's FLOPs per score and the head dim the best-of-sweep figures (no shape
# given) stand for: kernels.SOFTMAX_FLOPS, kernels.BEST_HEAD_DIM (the operator path prices the
# same share, kernels.softmax_fill).
# FlashAttention-2/3 and cuDNN's fused attention need Ampere or later (Dao-AILab/flash-attention
# README, "NVIDIA CUDA Support": "Ampere, Ada, or Hopper GPUs … please use FlashAttention 1.x
# for Turing GPUs"): a Volta or Turing
# card runs another kernel (PyTorch's memory-efficient attention), so the profiled figures are
# not carried to it.
PRE_FLASH_GENERATIONS = frozenset({"volta", "turing", "pre-volta"})
# GeForce boards run above the boost clock their catalog peak is quoted at: an attention
# ceiling may exceed 1 (RTX 4090: 1.02 of it), up to the measurement-noise bound.
MAX_ATTENTION_CEILING = 1.15


def vector_balance(feats: GpuFeatures) -> float | None:
    """Tensor-core 16-bit peak ÷ FP32 vector peak: how far the matmuls outrun the softmax
    (A100 16, H100 15, RTX 4090 2, MI300X 8)."""
    tensor, vector = _peak(feats, "bf16"), feats.peak_tflops.get("fp32")
    return tensor / vector if tensor and vector else None


def attention_factor(shape: Mapping[str, int], feats: GpuFeatures) -> float:
    """The share of the GPU's attention ceiling a FlashAttention forward of ``shape`` keeps:
    the softmax's vector time beside the matmuls' (head dim d against the GPU's
    tensor-to-vector balance), the Q/O tile overhead per key loop, and under a causal mask
    the diagonal blocks computed in full but half used. An empty shape is a large
    non-causal one at d = 128 (a best-of-sweep figure)."""
    d = shape.get("head_dim", BEST_HEAD_DIM)
    balance = vector_balance(feats) or 0.0
    factor = 1.0 / (1.0 + balance * SOFTMAX_FLOPS / (4.0 * d))
    if "q_len" not in shape or "kv_len" not in shape:
        return factor
    q, kv = shape["q_len"], shape["kv_len"]
    visited = float(kv)
    if shape.get("causal"):
        # bottom-right aligned mask: a query block visits kv − q + its own position
        visited = max(kv - q / 2.0, float(KV_BLOCK))
        n = math.ceil(q / Q_BLOCK)
        factor *= n / (n + 1.0)  # n(n+1)/2 blocks computed for n²/2 of useful work
    factor *= visited / (visited + KV_BLOCK)
    if "batch" in shape and "heads" in shape:
        # one thread block per 128 query rows per (sequence, head), a wave of them at a time
        # (the operator path's own rule, kernels.wave_fill): the bench's 1 × 8-head shapes
        # leave most of a large GPU idle at short contexts
        blocks = shape["batch"] * shape["heads"] * math.ceil(q / Q_BLOCK)
        factor *= wave_fill(blocks, feats.sm_count)
    return factor


def _fit_attention(cands: list[ProfilePoint], feats: GpuFeatures) -> Curve:
    """The GPU's attention ceiling: per kernel (op) the median of efficiency ÷ shape
    factor over its points, then the best kernel's (the engine prices the best library the
    GPU runs: FlashAttention-3 on Hopper, FlashAttention-2 on Ampere). Attention kernels
    at these shapes run for milliseconds: no fixed per-kernel time is read from them."""
    measured = [p for p in cands if p.source == MEASURED_SOURCE]
    if measured:
        # device reports time the kernel this GPU's own stack runs (PyTorch SDPA): they
        # replace the published libraries' figures rather than compete with them
        cands = measured
    by_op: dict[str, list[float]] = {}
    for p in cands:
        by_op.setdefault(p.op, []).append(p.efficiency / attention_factor(dict(p.shape), feats))
    best = max(_median(v) for v in by_op.values())
    return Curve(min(MAX_ATTENTION_CEILING, best), None)


def best_attention_op(points: tuple[ProfilePoint, ...], feats: GpuFeatures) -> str | None:
    """The op of the GPU's best attention kernel (whose ceiling ``_fit_attention`` keeps)."""
    attn = [p for p in points if p.kernel_class in ATTENTION_CLASSES]
    if any(p.source == MEASURED_SOURCE for p in attn):
        attn = [p for p in attn if p.source == MEASURED_SOURCE]
    by_op: dict[str, list[float]] = {}
    for p in attn:
        by_op.setdefault(p.op, []).append(p.efficiency / attention_factor(dict(p.shape), feats))
    if not by_op:
        return None
    return max(by_op, key=lambda op: _median(by_op[op]))


def _median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def carried_curve(
    target: GpuFeatures,
    kernel_class: str,
    dtype: str,
    donors: Mapping[str, tuple[GpuFeatures, GpuProfile]],
) -> tuple[Curve, tuple[str, ...]] | None:
    """The target's curve from the donors' curves: ceilings and fixed times averaged with
    the architecture-similarity weights; the donors in order of weight. The sums run over
    the donors in slug order, so the same donors give the same bits whatever order the
    mapping holds them in (a store built from a set differed by hash seed)."""
    acc_c = acc_w = acc_f = acc_fw = 0.0
    weights: list[tuple[float, str]] = []
    if kernel_class in ATTENTION_CLASSES and target.tensor_gen in PRE_FLASH_GENERATIONS:
        return None  # the profiled kernels do not run there: the prior prices its attention
    for slug, (feats, profile) in sorted(donors.items()):
        if kernel_class in ATTENTION_CLASSES and feats.vendor != target.vendor:
            # attention kernels are each vendor's own hand-written library (FlashAttention
            # and cuDNN on CUDA, CK and Triton ports on ROCm) and reach very different
            # shares of peak (MI300X 0.27, A100 0.6-0.73): carried across vendors, AMD
            # targets came out 2x too high. No same-vendor donor: the prior prices it.
            continue
        curve = fit_curve(profile.points, feats, kernel_class, dtype)
        w = similarity(target, feats, kernel_class)
        if curve is None or w < MIN_WEIGHT:
            continue
        acc_c, acc_w = acc_c + w * curve.ceiling, acc_w + w
        if curve.fixed_s is not None:
            acc_f, acc_fw = acc_f + w * curve.fixed_s, acc_fw + w
        weights.append((w, slug))
    if acc_w <= 0:
        return None
    weights.sort(reverse=True)
    fixed = acc_f / acc_fw if acc_fw > 0 else None
    return Curve(acc_c / acc_w, fixed), tuple(s for _, s in weights)


def profile_efficiency(
    gpu: GpuSpec,
    kernel_class: str,
    shape: Mapping[str, int],
    store: ProfileStore,
    gpus: Mapping[str, GpuSpec],
    *,
    dtype: str = "bf16",
    prior: float | None = None,
) -> tuple[float | None, str]:
    """(e, basis) for one kernel on ``gpu``: from its own profile where it has points of the
    class ("measured on this GPU (N reports)", "published figures for this GPU"), else its
    die twin's for a compute class (the profile's ``same_die_as``: "carried over from H100
    SXM5 (same die)"), else carried over from profiled GPUs ("carried over from H100 SXM5,
    B200"), else ``prior``.

    ``gpus`` maps catalog slugs to specs (the donors' peaks); e is achieved ÷ the catalog
    peak of the class (dense TFLOPS of ``dtype``, or the memory bandwidth). An own profile
    without small kernels borrows its fixed per-kernel time from the donors."""
    own = store.profiles.get(gpu.slug)
    target = features_of(gpu, own.features if own else None)
    twin = _die_twin(own, target, kernel_class, dtype, store, gpus)
    if twin is not None:
        # the same die's figures (an H200 from the H100's, not a blend with Blackwell
        # parts): fitted where they were measured, evaluated on this GPU's roofline
        twin_gpu = gpus[twin.slug]
        e = _own_efficiency(
            twin, features_of(twin_gpu, twin.features), target, kernel_class, shape, dtype,
            _carried(twin_gpu, twin, kernel_class, dtype, store, gpus),
        )  # fmt: skip
        return e, f"carried over from {twin_gpu.name} (same die)"
    carried = _carried(gpu, own, kernel_class, dtype, store, gpus)
    if own is not None and fit_curve(own.points, target, kernel_class, dtype) is not None:
        e = _own_efficiency(own, target, target, kernel_class, shape, dtype, carried)
        if own.reports:
            plural = "s" if own.reports != 1 else ""
            return e, f"measured on this GPU ({own.reports} report{plural})"
        return e, "published figures for this GPU"
    if carried is None:
        return prior, "prior"
    names = ", ".join(gpus[s].name for s in carried[1][:3])
    return curve_efficiency(
        carried[0], target, kernel_class, shape, dtype
    ), f"carried over from {names}"


def _as_bound(
    kernel_class: str, shape: Mapping[str, int], dtype: str, a: GpuFeatures, b: GpuFeatures
) -> bool:
    """Whether ``shape`` reaches no more of its peak on ``a`` than on ``b`` (roofline)."""
    return roofline_fraction(kernel_class, shape, dtype, a) <= roofline_fraction(
        kernel_class, shape, dtype, b
    )


def _carried(
    gpu: GpuSpec,
    own: GpuProfile | None,
    kernel_class: str,
    dtype: str,
    store: ProfileStore,
    gpus: Mapping[str, GpuSpec],
) -> tuple[Curve, tuple[str, ...]] | None:
    """``carried_curve`` for ``gpu`` from every other profiled GPU."""
    donors = {
        slug: (features_of(gpus[slug], prof.features), prof)
        for slug, prof in store.profiles.items()
        if slug != gpu.slug and slug in gpus
    }
    target = features_of(gpu, own.features if own else None)
    return carried_curve(target, kernel_class, dtype, donors)


def _own_efficiency(
    prof: GpuProfile,
    measured_on: GpuFeatures,
    target: GpuFeatures,
    kernel_class: str,
    shape: Mapping[str, int],
    dtype: str,
    carried: tuple[Curve, tuple[str, ...]] | None,
) -> float:
    """e at ``shape`` from ``prof``'s points, fitted on the GPU they were measured on
    (``measured_on``) and evaluated on ``target``'s roofline (the same GPU but for a die
    twin's); ``carried``: the donors' curve, whose fixed time a profile without small kernels
    borrows. The caller has checked that the points fit a curve."""
    curve = fit_curve(prof.points, measured_on, kernel_class, dtype)
    assert curve is not None
    # attention: only the best kernel's own figure at the shape (another library's figure at
    # the same shape is not what the engine prices)
    best = (
        best_attention_op(prof.points, measured_on) if kernel_class in ATTENTION_CLASSES else None
    )
    # A figure measured at the very shape asked for wins over the curve, whose ceiling is the
    # best point anywhere (a best-of-search maximum at another shape: the A100's MAMF 271
    # TFLOPS at 1024×10240×5120 against 257 measured at the 8192³ the engine reads). For GEMMs
    # fp16 and bf16 share the peak and the kernels (``_same_dtype``, as the curve fit): a
    # 16-bit GEMM figure whose source does not say which counts for both, the job's own dtype
    # first where both were measured. Attention keeps its own dtype (its ceiling is the best
    # kernel's median over shapes, ``_fit_attention``). A twin's figure stands only where the
    # shape is as compute-bound on the target (a faster memory does not slow it).
    exact = sorted(
        (
            p for p in prof.points
            if p.kernel_class == kernel_class and p.shape == shape_key(shape)
            and (p.dtype == dtype or (kernel_class == "gemm" and _same_dtype(p.dtype, dtype)))
            and (best is None or p.op == best)
        ),
        key=lambda p: p.dtype != dtype,
    )  # fmt: skip
    if exact and (
        measured_on is target
        or not shape
        or _as_bound(kernel_class, shape, dtype, target, measured_on)
    ):
        return exact[0].efficiency
    if curve.fixed_s is None and carried is not None:
        curve = Curve(curve.ceiling, carried[0].fixed_s)
    return curve_efficiency(curve, target, kernel_class, shape, dtype)


#: The shape the engine reads a GPU's GEMM efficiency at: a large square GEMM, the kind of
#: shape the vendor priors (MAMF best shapes, K ≥ 5120) stand for; app.domain.kernels applies
#: the tile, wave and K-loop losses of smaller shapes relative to it.
BEST_GEMM_SHAPE = {"m": 8192, "n": 8192, "k": 8192}


@dataclass(frozen=True, slots=True)
class KernelBasis:
    """What one GPU's GEMM efficiency at a dtype rests on."""

    efficiency: float
    basis: str  # "measured on this GPU (N reports)", "carried over from …", "published …"
    reports: int  # device reports behind it (0: published figures or carried over)


def gemm_efficiency(
    gpu: GpuSpec, store: ProfileStore, gpus: Mapping[str, GpuSpec], dtype: str
) -> KernelBasis | None:
    """``profile_efficiency`` of a best-shape GEMM, remembered on the store; None where
    neither the GPU's own profile nor any donor has a GEMM point of the dtype."""
    key = (gpu, dtype)
    if key in store.memo:
        hit: KernelBasis | None = store.memo[key]
        return hit
    e, basis = profile_efficiency(gpu, "gemm", BEST_GEMM_SHAPE, store, gpus, dtype=dtype)
    out = None
    own_gemm = any(
        p.kernel_class == "gemm" and _same_dtype(p.dtype, dtype)
        for p in (store.profiles[gpu.slug].points if gpu.slug in store.profiles else ())
    )
    if e is not None and not own_gemm and not _segment_donor(gpu, store, gpus, dtype):
        # Carried over only within a segment: GeForce and workstation boards boost and are
        # power-limited unlike datacenter parts, and carrying datacenter GEMM efficiencies to
        # them made the published consumer rows worse (Lambda BERT fp16: RTX 4090 ×0.74 →
        # ×0.71, RTX 3090 ×0.82 → ×0.76 against the prior). Without a donor of its own
        # segment a card keeps the prior.
        e = None
    if e is not None:
        own = store.profiles.get(gpu.slug)
        points = own.points if own is not None else ()
        reports = own.reports if own is not None and basis.startswith("measured") else 0
        if reports and not any(
            p.source == MEASURED_SOURCE and p.kernel_class == "gemm" and _same_dtype(p.dtype, dtype)
            for p in points
        ):
            # the reports measured other datapaths: this one rests on the published points
            basis, reports = "published figures for this GPU", 0
        out = KernelBasis(e, basis, reports)
    store.memo[key] = out
    return out


def attention_efficiency(
    gpu: GpuSpec, store: ProfileStore, gpus: Mapping[str, GpuSpec], dtype: str = "bf16"
) -> KernelBasis | None:
    """The GPU's best-shape FlashAttention forward efficiency (a large non-causal one at
    d = 128, ``attention_factor`` of an empty shape) against its 16-bit peak: from its own
    attention points, else carried over; None where no profile has attention points.
    Remembered on the store."""
    key = ("attention", gpu, dtype)
    if key in store.memo:
        hit: KernelBasis | None = store.memo[key]
        return hit
    e, basis = profile_efficiency(gpu, "attention_prefill", {}, store, gpus, dtype=dtype)
    out = None
    if e is not None:
        own = store.profiles.get(gpu.slug)
        reports = own.reports if own is not None and basis.startswith("measured") else 0
        if reports and not any(
            p.source == MEASURED_SOURCE and p.kernel_class in ATTENTION_CLASSES
            for p in own.points  # type: ignore[union-attr]
        ):
            basis, reports = "published figures for this GPU", 0
        out = KernelBasis(e, basis, reports)
    store.memo[key] = out
    return out


def _die_twin(
    own: GpuProfile | None,
    target: GpuFeatures,
    kernel_class: str,
    dtype: str,
    store: ProfileStore,
    gpus: Mapping[str, GpuSpec],
) -> GpuProfile | None:
    """The profile of ``own``'s die twin where it prices this kernel for it: a compute class
    (GEMM, attention prefill: the die's work; memory classes follow the memory, which twins
    need not share), no curve of ``own``'s own for the class and dtype, and one of the
    twin's."""
    if own is None or not own.die_twin or kernel_class not in COMPUTE_CLASSES:
        return None
    twin = store.profiles.get(own.die_twin)
    if twin is None or own.die_twin not in gpus:
        return None
    if fit_curve(own.points, target, kernel_class, dtype) is not None:
        return None
    twin_feats = features_of(gpus[own.die_twin], twin.features)
    if fit_curve(twin.points, twin_feats, kernel_class, dtype) is None:
        return None
    return twin


def _segment_donor(
    gpu: GpuSpec, store: ProfileStore, gpus: Mapping[str, GpuSpec], dtype: str
) -> bool:
    """Whether a profiled GPU of ``gpu``'s segment has a GEMM point of ``dtype``."""
    for slug, prof in store.profiles.items():
        donor = gpus.get(slug)
        if donor is None or donor.segment != gpu.segment:
            continue
        if any(p.kernel_class == "gemm" and _same_dtype(p.dtype, dtype) for p in prof.points):
            return True
    return False


# ---------------------------------------------------------------------------------- parsing


def parse_profile(data: Mapping[str, Any], gpu: GpuSpec, where: str = "profile") -> GpuProfile:
    """A shipped profile file: ``points`` of achieved ``tflops`` (compute classes) or
    ``gbs`` (memory classes), each with a ``source`` id listed under ``sources``; the
    efficiency is taken against this catalog's peak for the GPU. A point whose dtype has
    no catalog peak is left out (nothing to divide by)."""
    sources = data.get("sources") or {}
    points: list[ProfilePoint] = []
    for i, raw in enumerate(data.get("points") or []):
        at = f"{where}: points[{i}]"
        kc, dtype, source = raw.get("kernel_class"), raw.get("dtype"), raw.get("source")
        if kc not in KERNEL_CLASSES:
            raise ValueError(f"{at}: unknown kernel_class {kc!r}")
        if source not in sources:
            raise ValueError(f"{at}: source {source!r} is not listed under sources")
        shape = {str(k): int(v) for k, v in (raw.get("shape") or {}).items()}
        if kc in COMPUTE_CLASSES:
            peak, rate = gpu.peak_tflops(str(dtype)), raw.get("tflops")
        else:
            peak, rate = gpu.memory_bandwidth_gbs, raw.get("gbs")
        if rate is None or float(rate) <= 0:
            raise ValueError(
                f"{at}: needs a positive {'tflops' if kc in COMPUTE_CLASSES else 'gbs'}"
            )
        if not peak:
            continue
        points.append(
            ProfilePoint(
                kc,
                str(dtype),
                shape_key(shape),
                float(rate) / peak,
                str(source),
                op=str(raw.get("op") or ""),
            )
        )
    features = {
        k: float(v["value"] if isinstance(v, Mapping) else v)
        for k, v in (data.get("features") or {}).items()
        if k in ("sm_count", "boost_mhz", "l2_mb")
    }
    twin = data.get("same_die_as")
    if twin is not None and (not isinstance(twin, str) or twin == gpu.slug):
        raise ValueError(f"{where}: same_die_as must name another GPU's slug")
    return GpuProfile(
        slug=gpu.slug, points=tuple(points), features=features, die_twin=str(twin or "")
    )


def merge_profiles(shipped: GpuProfile | None, measured: GpuProfile | None) -> GpuProfile | None:
    """Measured points (pooled device reports) replace shipped ones of the same
    (class, dtype, shape); the rest of the shipped profile stays."""
    if shipped is None or measured is None:
        return measured or shipped
    taken = {(p.kernel_class, p.dtype, p.shape) for p in measured.points}
    kept = tuple(p for p in shipped.points if (p.kernel_class, p.dtype, p.shape) not in taken)
    return GpuProfile(
        slug=shipped.slug,
        points=measured.points + kept,
        reports=measured.reports,
        features=dict(shipped.features) | dict(measured.features),
        die_twin=shipped.die_twin,
    )

"""A row's throughput band: the calibrated band for its regime (benchmarks/accuracy.py writes
them into data/efficiency.yaml), widened where the engine extrapolates beyond what the
calibration set measured. Every widening lives here, with the reason a row's basis states."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from operator import attrgetter

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
    low: float  # ≤ 1: −ln(low) adds in quadrature to the band's lower log half-width
    high: float  # ≥ 1: ln(high) adds in quadrature to its upper log half-width
    reason: str


# Each widening names an effect the calibration set did not measure for this row. Where
# data/efficiency.yaml carries `bands.extrapolation` (benchmarks/accuracy.py: the term rows
# held out that way needed, leave-one-unit-out over the tuning sets) the runtime, architecture,
# runtime × architecture, MoE and 4-bit widenings take that term under the same reason (one
# half-width for both sides, what the held-out units needed beyond the new-source term every
# row carries); the factors below are the fallbacks without it. A row's band is its regime's,
# about the regime's centre (median measured ÷ predicted), with every widening added in
# quadrature in log space (independent errors): conformal.Spread.
UNMEASURED_RUNTIME = Widening(
    0.80, 1.25, "no published results for this runtime in the calibration set"
)
UNMEASURED_ARCHITECTURE = Widening(
    0.85, 1.20, "no published results on this architecture in the calibration set"
)
# A runtime and an architecture each measured in the regime, never together: the runtime's
# kernels were timed on other architectures and the architecture under other runtimes, so
# neither its runtime nor its architecture widening applies, yet the row's rate is the
# runtime's kernel choice on this architecture, which no calibration row timed (vLLM's serving
# kernel row rests on an A100 sweep and is carried to Hopper, whose serving rows are
# TensorRT-LLM's: docs/methodology.md §6.7t "vs", where vLLM reads 1.5-1.8x fast on an H100
# and about 1.0 on an A100 for one model, release and benchmark). Calibrated as
# `runtime_architecture` (benchmarks/accuracy.py extrapolation_units: each (regime, runtime,
# architecture) of the tuning sets whose runtime and architecture the rest of the regime
# still holds, held out); the stated fallback is the architecture widening's factors (a new
# architecture for this runtime's kernels, as there).
UNMEASURED_PAIR = Widening(
    UNMEASURED_ARCHITECTURE.low,
    UNMEASURED_ARCHITECTURE.high,
    "no published results for this runtime on this architecture in the calibration set "
    "(each measured, but not together)",
)
# A convolution regime whose calibration rows are all another vendor's GPUs (every train,
# infer-cnn and infer-diffusion row is NVIDIA on cuDNN): the row's convolutions run another
# library (MIOpen on AMD, oneDNN on Intel, MPS on Apple) whose speed does not follow cuDNN's,
# and no published result fixes how far. ROCm/MIOpen#3865 (2025: MI300X convolutions slower
# than H100's on the same shapes, after exhaustive tuning), ROCm/MIOpen#3310 (2024: a PyTorch
# model 6.4× slower on MI250X than on an A100 where MIOpen fell back to its naive kernels),
# ROCm/AMDMIGraphX#2917 (2024: MI300X ResNet-50 fp16 inference no faster than fp32). None
# gives a rate to price, so the factors are the band stated for a vendor without calibration
# (BAND_SPARSE_VENDOR), the answer saying how unsure it is rather than borrowing cuDNN's band.
UNMEASURED_VENDOR = Widening(
    BAND_SPARSE_VENDOR[0],
    BAND_SPARSE_VENDOR[1],
    "no published results from this vendor in the calibration set: its convolution results "
    "are all NVIDIA GPUs on cuDNN, and other libraries' convolutions (MIOpen's) measure far "
    "from cuDNN's on the same shapes (ROCm/MIOpen#3865, #3310)",
)
# What the vendor's row omits that the calibrated NVIDIA rows are charged, said where the
# library is known (2026-12-06): the engine charges the NCHW <-> NHWC layout transforms only
# around cuDNN's tensor-core convolutions (perf._nchw_transforms_run; a third of an eager
# ResNet-50 fp16 step's bytes on an H100), and prices other libraries' convolutions at the
# GEMM rate. MIOpen's NHWC matrix-core solvers transpose an NCHW model's input, weights and
# output around the kernel the same way (ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC
# GetSolution / GetWorkspaceSize: TransposeSolutionDefault2Nhwc, TransposeSolutionNhwc2Default
# when problem.IsLayoutDefault(), on gfx908/90a/94x/95x), though MIOpen also has NCHW-native
# matrix-core solvers and its find mode keeps whichever runs faster, so whether and how much
# is not known; Intel's stack trained its own documented CIFAR-10 example 5.75× slower than a
# T4 in FP32 on an Arc A770 with 2.4× the T4's FP32 peak, 19.7 against 8.1 TFLOPS
# (intel/intel-extension-for-pytorch#296, IPEX 1.13, 2023). No published CNN result on either
# prices a rate, so the factors stay UNMEASURED_VENDOR's; the reason says which way the
# estimate leans and why.
# The words a reason below says where it knows the estimate's direction: a vendor's
# convolution library priced at the GEMM rate, none of its own costs charged. A row whose band
# says so is ranked on its band's low end under every objective (rank.ranked_share).
LEANS_HIGH = "likely overstates"
_VENDOR_CONV_REASONS = {
    "amd": (
        "no published results from this vendor in the calibration set: its convolutions run "
        "MIOpen, not cuDNN, and measure far from cuDNN's on the same shapes (ROCm/MIOpen#3865, "
        "#3310); the estimate prices a convolution network's at the GEMM rate and charges none "
        "of the NCHW/NHWC transposes it charges cuDNN's, though MIOpen's NHWC matrix-core "
        "solvers transpose an NCHW model's tensors too, so it likely overstates that speed"
    ),
    "intel": (
        "no published results from this vendor in the calibration set: its convolutions run "
        "oneDNN, not cuDNN (an Arc A770 trained Intel's own CIFAR-10 example 5.75× slower than "
        "a T4: intel-extension-for-pytorch#296); the estimate prices a convolution network's "
        "at the GEMM rate and charges none of the layout transforms it charges cuDNN's, so it "
        "likely overstates that speed"
    ),
}
# the vendors whose rows can lean high (rank.leans_high reads a band only for these)
CONV_LEAN_VENDORS = frozenset(v for v, r in _VENDOR_CONV_REASONS.items() if LEANS_HIGH in r)


# RDNA 4 (gfx1200/gfx1201: RX 9060 XT, RX 9070, RX 9070 XT, Radeon AI PRO R9700) on top of
# the library's general lean (2026-12-06, issue 23): users timed MIOpen's convolutions there an
# order of magnitude below RDNA 3's and NVIDIA's. ROCm/rocm-libraries#2567 ("Very slow
# convolution performance on RX 9070", 2025-11): a 3x3 64->64-channel fp32 convolution at
# 1.75 TFLOP/s on an RX 9070 against 32.82 on an RX 7800 XT (PyTorch 2.9.0, ROCm 7.10 nightly,
# Windows), and a gfx1201 log under MIOpen 3.5.1 / HIP 7.2 on Linux in the same thread;
# ROCm/TheRock#2510 ("Bad Pytorch performance on RX 9070 XT", 2025-12, ROCm 7.1.1, Windows 11):
# a small CIFAR-10 CNN trained ~10x slower than on NVIDIA cards, MIOPEN_FIND_ENFORCE=3 no help.
# Neither is a rate the engine can price (one shape each, preview builds), so the factors stay
# UNMEASURED_VENDOR's: the reason says the lean is larger on this architecture.
_ARCHITECTURE_CONV_REASONS = {
    ("amd", "RDNA 4"): (
        "; on RDNA 4 users timed MIOpen's convolutions an order of magnitude slower still "
        "(ROCm/rocm-libraries#2567: an RX 9070's 3x3 fp32 convolution at 1.75 TFLOP/s "
        "against an RX 7800 XT's 32.8; ROCm/TheRock#2510: an RX 9070 XT trained a small "
        "CIFAR-10 CNN ~10x slower than NVIDIA cards)"
    ),
}


# What a convolution regime's row runs where its network has no convolutions (BERT, T5 and
# ViT training in the "train" regime; FLUX.1's DiT in "infer-diffusion": ModelSpec.conv_layers):
# GEMMs and attention, which the calibration set measured on NVIDIA's cuBLAS only, and which
# run the vendor's own BLAS elsewhere. PyTorch's ROCm build runs them on hipBLASLt where it is
# preferred by default (gfx90a, gfx942, gfx950: Instinct MI200 to MI350; gfx1200/gfx1201:
# RDNA 4) and on rocBLAS otherwise (ROCm/pytorch#2053, aten/src/ATen/Context.h); its XPU
# build calls oneDNN's matmul for mm, addmm and bmm (aten/src/ATen/native/mkldnn/xpu/Blas.cpp);
# its MPS backend maps them onto Apple's Metal Performance Shaders Graph (PyTorch's MPS backend
# notes). No published result here prices how far those run from cuBLAS on these shapes, nor
# which way: the reason says no direction, so such a row is never ranked on its band's low end
# (rank.leans_high); the factors are the same UNMEASURED_VENDOR's, a vendor without
# calibration.
_VENDOR_GEMM_LIBRARIES = {
    "amd": "hipBLASLt or rocBLAS (ROCm/pytorch#2053)",
    "intel": "oneDNN's matmul (PyTorch's XPU GEMMs)",
    "apple": "Metal Performance Shaders Graph (PyTorch's MPS backend)",
}


def _gemm_reason(vendor: str) -> str:
    library = _VENDOR_GEMM_LIBRARIES.get(vendor, "this vendor's own libraries")
    return (
        "no published results from this vendor in the calibration set: its results for this "
        "regime are all NVIDIA GPUs, and this network's time is GEMMs and attention (no "
        f"convolutions), which run on {library}, not cuBLAS; no published result says how "
        "far from cuBLAS's they run on these shapes"
    )


def vendor_widening(
    vendor: str, architecture: str | None = None, convolutions: bool = True
) -> Widening:
    """UNMEASURED_VENDOR with the reason for the vendor's own library where it is known, and
    what is known of that library on ``architecture`` (``_ARCHITECTURE_CONV_REASONS``).
    ``convolutions``: whether the row's network runs convolutions (BandInputs.convolutions);
    without, the reason names the GEMM library it runs instead (``_gemm_reason``) and says no
    lean: the convolution library's is not its."""
    if not convolutions:
        return Widening(UNMEASURED_VENDOR.low, UNMEASURED_VENDOR.high, _gemm_reason(vendor))
    reason = _VENDOR_CONV_REASONS.get(vendor)
    if reason is None:
        return UNMEASURED_VENDOR
    reason += _ARCHITECTURE_CONV_REASONS.get((vendor, architecture or ""), "")
    return Widening(UNMEASURED_VENDOR.low, UNMEASURED_VENDOR.high, reason)


# The regimes whose calibration rows are convolution networks (CNN training and inference,
# diffusion UNets): where a vendor outside them is widened by UNMEASURED_VENDOR
CONV_REGIMES = frozenset({"train", "infer-cnn", "infer-diffusion"})
# A GPU architecture's vendor from its name (data/gpus: CDNA, RDNA, GCN are AMD's; Xe and
# Gaudi Intel's; M1..M4 Apple's; every other NVIDIA's), to tell which vendors a regime's
# covered architectures hold (tests/domain/test_r28cn_vendor_band.py checks the catalog)
_ARCHITECTURE_VENDORS = (
    (re.compile(r"(CDNA|RDNA|GCN)\b"), "amd"),
    (re.compile(r"(Xe|Gaudi)"), "intel"),
    (re.compile(r"M\d+\b"), "apple"),
)


def architecture_vendor(architecture: str) -> str:
    """The vendor whose GPUs have this architecture (``_ARCHITECTURE_VENDORS``), else nvidia."""
    for pattern, vendor in _ARCHITECTURE_VENDORS:
        if pattern.match(architecture):
            return vendor
    return "nvidia"


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
# The regime's multi-GPU results spanned their GPUs otherwise (tensor parallel): a layer split
# (llama.cpp --split-mode layer, Accelerate's device_map) hands each token from GPU to GPU and
# overlaps a prompt's micro-batches, which no tuning row measured. Calibrated as `span`
# (benchmarks/accuracy.py extrapolation_units: each multi-GPU LLM inference workload held out
# against its regime's one-GPU rows); MULTI_GPU's stated factors the fallback.
MULTI_GPU_SPAN = Widening(
    MULTI_GPU.low,
    MULTI_GPU.high,
    "GPUs spanned as a layer split (whole layers per GPU, in turn): the calibration set's "
    "multi-GPU runs split every layer (tensor parallel)",
)
# Every answer is for a source the calibration set never measured (another harness, software
# version, host or measurement method than the published tables): the term the tuning sets'
# own sources needed when each was held out of its regime, and the held-out sets' sources
# (no engine constant read against them) needed beyond the bands the engine draws them
# (benchmarks/accuracy.py source_units, benchmarks/band_crossfit.py, conformal.source_term),
# from data/efficiency.yaml `bands.new_source`; no stated fallback (without the calibrated
# term the row keeps the band it had).
NEW_SOURCE_REASON = (
    "a new source: other harnesses, software versions and hosts spread further than the "
    "calibration set's own (each published source held out, held-out sets included)"
)

# A fine-tuning job's band kind (rank.row_band_inputs, benchmarks/accuracy.py): the train-llm
# regime's fine-tuning rows (one-GPU HF Trainer + PEFT: frozen base weights, LoRA adapters, a
# GPTQ base's dequantisation, DeepSpeed ZeRO for full fine-tuning) run other kernels and host
# work than its FSDP / Megatron pretraining rows, so they have a band of their own
# (docs/methodology.md, "Calibrated bands")
FINE_TUNING = "fine-tuning"

# A runtime's band cell in a regime where its step is another runtime's under the same execution
# policy: the band is fitted on both runtimes' tuning rows (benchmarks/accuracy.py
# runtime_band_rows), stored under the runtime's own key. torch.compile's default mode in batch
# inference (data/efficiency.yaml, its infer / infer-cnn rows: no CUDA graph, Inductor's Python
# wrapper launches every kernel and calls the same autotuned cuDNN convolutions and cuBLAS GEMMs
# as eager, host µs per kernel 38 against eager's 35-37 on the same host) is eager PyTorch's
# operator table under fewer, fused kernels, so it shares eager's errors (a GPU's convolution
# and GEMM rates, a host's dispatch): in the one source that times both on the same machines
# (hf-torch-compile-guide) the compiled and eager rows of a GPU sit together (V100 FP32
# 1.08-1.53 and 1.31-1.47, T4 0.87-0.96 and 0.95-1.41). Alone its nine rows are one harness
# on three GPUs, and a band that must hold each of three GPUs out from the other two measures
# that source's spread, not the runtime's. Not for decode / prefill (gpt-fast's CUDA graphs: no
# host launch, another policy) nor diffusion, whose compiled rows are from several sources and
# mostly CUDA-graph modes, and keep their own cell.
RUNTIME_BAND_FAMILY = {
    ("infer-cnn", "torch-compile"): "pytorch",
    ("infer", "torch-compile"): "pytorch",
}

# 4-bit runs the calibration set measured: llama.cpp GGUF Q4_0 (tests/data/llm_inference.yaml)
_CALIBRATED_4BIT_RUNTIMES = {"llama.cpp"}

# A runtime's band split by precision class (16-bit against 32-bit), where the tuning rows show,
# by cross-validation with each GPU held out, that a new card's rows of one class sit apart from
# the other's: TensorFlow ± XLA CNN inference (tests/data/dle_cnn_inference.yaml; DeepLearning-
# Examples' TF1 and TF2 READMEs). There the engine's 16-bit rows read above its 32-bit ones on
# every GPU and runtime the tables time (medians graph A100 1.12 against 0.69 (TF32), T4 1.26 /
# 0.85, V100 1.33 / 0.93; XLA A100 40GB 1.06 / 0.66, A100 80GB 1.09 / 0.96, V100 1.04 / 0.64),
# and held out by GPU the split band holds 95 % of a new card's rows at median ×2.38 against
# the runtime band's 88 % at ×2.72 (at equal 80 % coverage ×1.87 against ×2.24; no one of 40
# random two-way splits of the same rows reaches ×1.87): benchmarks/band_split_cv.py
# (docs/methodology.md §6.7q "tf"). Only the tuning rows decide it. Not for eager PyTorch or
# torch.compile, whose classes cross (V100 16-bit below 32-bit, T4 above), nor a class without
# enough rows of its own (accuracy._enough): the row then takes its runtime's band.
PRECISION_BANDS = frozenset({("infer-cnn", "tensorflow"), ("infer-cnn", "tensorflow-xla")})
_PRECISION_CLASS = {"fp16": "16-bit", "bf16": "16-bit", "fp32": "32-bit", "tf32": "32-bit"}


def precision_class(regime: str, runtime: str, precision: str) -> str:
    """The precision class a row's band is split by ("16-bit", "32-bit": TF32 runs fp32 data),
    where PRECISION_BANDS splits its regime's runtime; else "" (one band for every precision,
    as for int8 or fp8, which no split cell holds)."""
    if (regime, runtime) not in PRECISION_BANDS:
        return ""
    return _PRECISION_CLASS.get(precision, "")


@dataclass(frozen=True)
class BandInputs:
    """What decides a row's band, from the row's GPU, workload and estimate."""

    regime: str  # train, train-llm, infer, infer-cnn, infer-diffusion, decode, prefill, serving
    vendor: str
    architecture: str
    runtime: str
    efficiency_source: str  # measured | family | prior
    measured_on: int = 1
    moe: bool = False
    four_bit: bool = False
    derived_peak: bool = False
    num_gpus: int = 1
    # the workload kind where the tuning sets band it apart from its regime's other rows
    # (FINE_TUNING: a fine-tuning job, LoRA, QLoRA or full), else ""
    kind: str = ""
    # how one LLM inference replica spans its GPUs (the runtime's ``span``: tensor, layers);
    # "" on one GPU and for every other row (a training job's layout is its regime's own)
    span: str = ""
    # the job's precision (fp16, fp32, tf32, ...): where PRECISION_BANDS splits the runtime's
    # band, its class picks the cell (precision_class); "" where not known
    precision: str = ""
    # whether the row's network runs convolutions (ModelSpec.conv_layers: a CNN, an SD/SDXL
    # UNet), as a convolution regime's vendor reason names what it runs (vendor_widening): BERT,
    # T5 and ViT training share the "train" regime and FLUX.1's DiT "infer-diffusion", and their
    # time is GEMMs and attention. True where the caller does not say: those regimes'
    # calibration rows are convolution networks
    convolutions: bool = True

    @property
    def precision_class(self) -> str:
        return precision_class(self.regime, self.runtime, self.precision)


def _base(x: BandInputs, table: EfficiencyTable | None) -> tuple[float, float, float, str, bool]:
    """(low, high, centre, basis, calibrated): the row's band before any widening."""
    bits = x.precision_class
    calibrated = (
        table.band(x.regime, x.vendor, x.runtime, x.kind, bits) if table is not None else None
    )
    if x.efficiency_source == "measured":
        on = f" (measured on {x.measured_on} machines)" if x.measured_on > 1 else ""
        return *BAND_MEASURED, 1.0, "efficiencies measured on this GPU model" + on, False
    if x.efficiency_source == "family":
        basis = "efficiencies measured on the same architecture family"
        return *BAND_FAMILY, 1.0, basis, False
    if calibrated is not None and table is not None:
        centre = table.centre(x.regime, x.vendor, x.runtime, x.kind, bits)
        kind = f" {x.kind}" if table.band_of_kind(x.regime, x.kind) else ""
        if bits and table.band_of_precision(x.regime, x.runtime, bits):
            kind += f" {x.runtime} {bits}"
        basis = (
            f"modelled; ≈80 % band from published {x.regime}{kind} results (split-conformal, each "
            f"GPU and workload held out), centred on their median measured ÷ predicted "
            f"({centre:.2f})"
        )
        return *calibrated, centre, basis, True
    if x.vendor != "nvidia":
        basis = "modelled; few published measurements for this vendor"
        return *BAND_SPARSE_VENDOR, 1.0, basis, False
    return *BAND_MODELLED, 1.0, "modelled from datasheet figures and published priors", False


def term_family(x: BandInputs, table: EfficiencyTable | None) -> str:
    """The band family whose sources size the row's new-source term: its workload kind where
    the tuning sets band that kind apart ("train-llm/fine-tuning": its base band is fitted on
    its own rows, so its new-source term is sized on its own sources), else its regime. A
    kind's errors are not its regime's other rows' (fine-tuning's HF Trainer + PEFT against
    pretraining's FSDP / Megatron), so a term pooled over both would carry one kind's sources'
    spread to the other's rows (benchmarks/accuracy.py source_unit_rows names each unit so)."""
    if table is not None and table.band_of_kind(x.regime, x.kind):
        return f"{x.regime}/{x.kind}"
    return x.regime


def estimated(stated: Widening, name: str, table: EfficiencyTable | None) -> Widening:
    """The term the tuning sets needed for this extrapolation (benchmarks/accuracy.py), else
    ``stated``; the same reason either way, so a row's basis reads alike."""
    term = table.extrapolation.get(name) if table is not None else None
    return stated if term is None else Widening(*term, stated.reason)


def _unmeasured_pair(x: BandInputs, table: EfficiencyTable | None) -> bool:
    """Whether the row's regime records which runtimes ran on which architectures
    (EfficiencyTable.covered_pairs) and never this runtime on this architecture."""
    pairs = table.covered_pairs.get(x.regime) if table is not None else None
    return pairs is not None and (x.runtime, x.architecture) not in pairs


def widenings(x: BandInputs, table: EfficiencyTable | None, calibrated: bool) -> list[Widening]:
    """The extrapolations that apply to this row, in the order its basis names them: only
    what the row's regime's calibration set lacks."""
    out: list[Widening] = []
    covered = table.covered.get(x.regime) if table is not None else None
    if calibrated and covered is not None:
        runtimes, architectures = covered
        if x.runtime not in runtimes:
            out.append(estimated(UNMEASURED_RUNTIME, "runtime", table))
        if x.regime in CONV_REGIMES and all(
            architecture_vendor(a) != x.vendor for a in architectures
        ):
            # another vendor's library: more than an unmeasured architecture of a known one
            out.append(vendor_widening(x.vendor, x.architecture, x.convolutions))
        elif x.architecture not in architectures:
            out.append(estimated(UNMEASURED_ARCHITECTURE, "architecture", table))
        elif x.runtime in runtimes and _unmeasured_pair(x, table):
            out.append(estimated(UNMEASURED_PAIR, "runtime_architecture", table))
    four_bit = x.four_bit and x.runtime not in _CALIBRATED_4BIT_RUNTIMES
    if x.moe and four_bit:
        # one term, the larger: the tuning sets' MoE workload is itself 4-bit (serving's
        # Qwen3-30B-A3B fp4), so its term already holds the 4-bit error, and the two terms
        # are pooled from the same three workloads (benchmarks/accuracy.py MIN_TERM_UNITS)
        moe, fb = estimated(MOE, "moe", table), estimated(FOUR_BIT, "four_bit", table)
        low, high = min(moe.low, fb.low), max(moe.high, fb.high)
        out.append(Widening(low, high, f"{MOE.reason}; {FOUR_BIT.reason}"))
    elif x.moe:
        out.append(estimated(MOE, "moe", table))
    elif four_bit:
        out.append(estimated(FOUR_BIT, "four_bit", table))
    if x.derived_peak:
        out.append(DERIVED_PEAK)
    multi_measured = table is not None and calibrated and x.regime in table.multi_gpu
    if x.num_gpus > 1 and not multi_measured:
        out.append(MULTI_GPU)
    elif x.num_gpus > 1 and table is not None and x.span:
        spans = table.multi_gpu_spans.get(x.regime)
        if spans is not None and x.span not in spans:
            out.append(estimated(MULTI_GPU_SPAN, "span", table))
    source = table.source_term(term_family(x, table)) if table is not None else None
    if source is not None:
        out.append(Widening(*source, NEW_SOURCE_REASON))
    return out


# A calibrated term of ×1: the tuning sets' units of that kind needed nothing beyond the
# new-source term. The row still extrapolates, so its basis says so, without a widening.
NIL_TERM_NOTE = "extrapolates, but the tuning sets' cases needed no widening beyond a new source's"


def _nil(w: Widening) -> bool:
    return (w.low, w.high) == (1.0, 1.0)


def combine(ws: list[Widening]) -> tuple[float, float]:
    """Independent extrapolation errors add in quadrature in log space (about a band of width
    one: conformal.Spread adds them to the row's own band the same way)."""
    spread = conformal.Spread(1.0, 0.0, 0.0).widened([(w.low, w.high) for w in ws])
    return math.exp(-spread.down), math.exp(spread.up)


def spread(x: BandInputs, table: EfficiencyTable | None) -> conformal.Spread:
    """The row's band in log space about its centre, every widening in (what a held-out unit
    is scored against when calibrating a further term: benchmarks/accuracy.py)."""
    lo, hi, centre, _, calibrated = _base(x, table)
    return conformal.Spread.of(lo, hi, centre).widened(
        [(w.low, w.high) for w in widenings(x, table, calibrated)]
    )


# BandInputs' fields in their order, as a plain tuple: how a band is kept with its table
BandKey = tuple[str, str, str, str, str, int, bool, bool, bool, int, str, str, str, bool]
_KEY = attrgetter(*(f.name for f in fields(BandInputs)))


def band(x: BandInputs, table: EfficiencyTable | None) -> tuple[float, float, str]:
    """(low factor, high factor, basis) on the row's expected throughput: the base band about
    its centre, each widening added in quadrature in log space, bracketing 1. Worked out once
    per table and inputs (rows of every answer share a few hundred of them), kept with the
    table."""
    return band_of(_KEY(x), table)


def band_of(key: BandKey, table: EfficiencyTable | None) -> tuple[float, float, str]:
    """``band`` of ``BandInputs(*key)``. A row's band is found by its inputs as a tuple, and
    BandInputs built only when it is worked out: an answer's rows ask for some 20 bands, and
    a frozen dataclass's construction, hash and comparison are Python calls, a tuple's are C."""
    if table is None:
        return _band(BandInputs(*key), None)
    store = table.derived
    got: tuple[float, float, str] | None = store.get(("band", key))
    if got is None:
        if len(store) >= DERIVED_LIMIT:
            store.clear()
        got = store["band", key] = _band(BandInputs(*key), table)
    return got


# Bands kept per table before it starts afresh: far above the inputs a catalog's answers use
# (its cards' vendors, architectures, runtimes and counts), so that odd requests cannot grow it.
DERIVED_LIMIT = 8192


def _band(x: BandInputs, table: EfficiencyTable | None) -> tuple[float, float, str]:
    lo, hi, centre, basis, calibrated = _base(x, table)
    every = widenings(x, table, calibrated)
    ws = [w for w in every if not _nil(w)]
    if ws:  # without, the base band as it stands (no round trip through logs)
        s = conformal.Spread.of(lo, hi, centre)
        lo, hi = s.widened([(w.low, w.high) for w in ws]).band()
        basis += "; widened (in quadrature): " + "; ".join(w.reason for w in ws)
    nil = [w.reason for w in every if _nil(w)]
    if nil:
        basis += f"; {NIL_TERM_NOTE}: " + "; ".join(nil)
    return lo, hi, basis


def time_band(predicted: float, lo: float, hi: float) -> tuple[float, float]:
    """The band on a time from the band lo–hi on the rate it is the inverse of (a time to first
    token: prompt tokens ÷ the prefill rate). The rate band holds measured ÷ predicted rate in
    lo–hi; a measured time is predicted × predicted rate ÷ measured rate, so it lies in
    predicted ÷ hi – predicted ÷ lo (the rate's high end is the time's low end)."""
    return predicted / hi, predicted / lo

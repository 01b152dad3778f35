"""Time per step or per token: FLOPs and bytes per phase through a roofline.

A step is split into two kernel classes that run one after the other:
* matmul/convolution kernels: max(FLOPs ÷ (peak × e_compute), weight bytes ÷ (BW × e_mem));
* element-wise / normalisation kernels: activation traffic ÷ (BW × e_mem);
plus fixed overheads (kernel launches, per-token dispatch) and, overlapped with all of it,
the host→device copy of the next batch. Every constant is listed, with its source or the
reason for its value, in docs/methodology.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import compress
from operator import itemgetter
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from app import vocab
from app.domain import (
    composite_norm,
    formats,
    llm_step,
    llm_totals,
    megatron,
    parallelism,
    seq2seq,
    topology,
)
from app.domain.activations import embedding_params, unet_saved
from app.domain.calibration import Calibration, adjust
from app.domain.compat import tf32_fraction
from app.domain.diffusion_host import serial_host
from app.domain.efficiency import (
    EAGER,
    HALF_RATE_GEMM_SHARE,
    RuntimeProfile,
    basis_tflops,
    half_rate_fp16,
    tensor_share,
)
from app.domain.gpu import GpuSpec
from app.domain.kernel_profiles import KernelBasis, attention_efficiency, gemm_efficiency
from app.domain.kernels import (
    CLASS_INDEX,
    FLASH_FWD_FACTOR,
    MEGATRON_SOFTMAX,
    OpArrays,
    OpColumns,
    ShapeColumns,
    Twins,
    arrays_of,
    class_rates,
    column_efficiencies,
    fifo_finish,
    gpu_key,
    issue_order,
    op_columns,
    prepare,
    reclassed,
    shape_columns,
    shape_efficiency,
    step_time,
    twinned,
)
from app.domain.operators import (
    CONV,
    CONV_3X3,
    CONV_NCHW,
    DECODE_PHASE,
    GPTQ_TORCH_DEQUANT,
    LAYOUT_ROLES,
    MEMORY,
    NF4_DEQUANT,
    TF32_PER_16BIT,
    UPCAST_FP32,
    UPCAST_TF32,
    Op,
    backward_ops,
    block_linears,
    dequant_ops,
    derive,
    fp8_cast_ops,
    gemm,
    lora_input_grad_sums,
    lora_ops,
    megatron_shapes,
    nchw_transposes,
    optimizer_op,
    table_ops,
    total,
    transformer_ops,
    vit_ops,
    weight_cast_op,
)
from app.domain.peaks import peak_tflops
from app.domain.workload import (
    BYTES,
    NF4_BYTES,
    ModelSpec,
    WorkloadSpec,
    activation_bytes,
    adapted_share,
    fp32_decode,
    guidance_latents,
    job_lora_params,
    optimizer_state_bytes,
    pure16,
    qlora_base_bytes,
    qlora_base_width,
    qlora_in_kernel,
    training_policy,
)
from app.vocab import MEASURED_PRECISIONS

MEMORY_EFFICIENCY = 0.88  # HBM/GDDR achieved ÷ spec with a good kernel (methodology §5.2, §7)
# An Apple Ultra (two Max dies over UltraFusion, GpuSpec.dies) streams a lower share of its
# datasheet bandwidth than one Max die does of its own: the same GPU copy kernel
# (dram_bandwidth.swift, storageModePrivate → Private) reaches 600–670 GB/s of an M3 Ultra's
# 819 (0.73–0.82, midpoint 0.775) and 340–380 GB/s of an M1 Max's 400 (0.85–0.95, midpoint
# 0.90): 0.775 ÷ 0.90 = 0.86 (github.com/neobundy/CWK-Deep-Dive-Into-AI-Reboot, file
# guides/04-Introduction.md at commit 79472ee2, "Two Swift Micro-Benches, One Ceiling", 2025;
# one machine of each, a developer's notes, not a vendor figure). A hardware share: every
# runtime's streaming term takes it.
APPLE_MULTI_DIE_STREAM_SHARE = 0.86
# AMD's multi-XCD Instinct parts (CDNA 3/4: six or eight compute dies over I/O dies and HBM
# stacks) stream a lower share of their datasheet bandwidth than a one-die CDNA 2 device does:
# AMD's own HBM-bandwidth check in rocprofiler-compute (ROCm/rocm-systems,
# projects/rocprofiler-compute/tests/test_metric_validation.py at 117d870, metric 4.1.9 of
# the vcopy roofline run, ±5 %) expects 3,910.62 GB/s on an MI300X (0.738 of 5,300),
# 4,287.31 on an MI325X (0.715 of 6,000) and 5,690.42 on an MI350 (0.711 of 8,000), against
# 1,389.17 on an MI200 GCD (0.848 of 1,638): 0.870, 0.843 and 0.839 of the one-die share with
# the same test, median 0.84. The MI300X then streams at 0.88 × 0.84 = 0.739 of its
# datasheet, its own measured 0.738. Not fitted to any table: a hardware share that every
# runtime's streaming term takes (methodology §2 constants, §6.6; issue #21).
AMD_MULTI_XCD_STREAM_SHARE = 0.84
AMD_MULTI_XCD_ARCHITECTURES = frozenset({"CDNA 3", "CDNA 4"})
PCIE_PINNED_EFFICIENCY = 0.80  # per direction, NUMA-local (methodology §5.3, §7)
PCIE_GBS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}  # x16, per direction, after encoding
# Whole-model matmul/conv kernels reach this share of the best-shape GEMM efficiency: layer
# shapes are smaller and less regular than the MAMF search shapes. 0.7 × 0.80 = 0.56 of peak for
# the matmul part; with the element-wise time added, end-to-end MFU lands at 0.35–0.5, the
# range published for real training (methodology §5.4).
MODEL_UTILISATION = 0.70
# Element-wise traffic per byte of stored activations in a training step: forward writes and
# re-reads, backward reads them and writes/reads gradients of the same size, plus unstored
# temporaries (dropout masks, GELU/BN inputs). Checked against the spread of Lambda's published
# throughputs across GPUs (see docs/methodology.md); one constant for every family.
TRAINING_TRAFFIC = 13.0
FORWARD_TRAFFIC_SHARE = 1.0 / 3.0  # forward-only runs do one third of a training step's traffic
LAUNCH_S = 4e-6  # CUDA/HIP kernel launch, exposed when kernels are short
KERNELS_PER_LAYER_TRAIN = 60
KERNELS_PER_LAYER_DECODE = 10
DEFAULT_TRAIN_KERNELS = 600  # a ResNet-50 step, when the layer count is unknown
# Optimizer update traffic in bytes per trainable parameter (read + write of each state).
OPTIMIZER_TRAFFIC = {"adamw": 28.0, "adam8bit": 16.0, "sgd": 20.0}

# Language models whose training throughput is shown in tokens/s: samples/s × the tokens each
# sample carries, the unit their data budgets are counted in (Chinchilla's 20 tokens per
# parameter, "1 M tokens of fine-tuning data"), whatever the sequence length.
TOKEN_COUNTED_FAMILIES = frozenset(vocab.TOKEN_COUNTED_FAMILIES)
IMAGE_FAMILIES = frozenset(vocab.IMAGE_FAMILIES)


def shown_rate(work: WorkloadSpec, unit: str) -> tuple[float, str]:
    """The factor from an estimate's throughput to the unit an answer shows it in, and that unit:
    a language model's training in tokens/s (the sequence length the estimate models per
    sample), an image model's in images/s, everything else as estimated. Only the figure shown
    changes: ranking, bounds and time to finish read the estimate's own samples/s. A speech
    model's sample (Whisper's: an encoder-decoder whose input is seconds of audio) stays one
    audio window in training as in inference: its tokens/s counted the transcript's padded
    448 decoder tokens, a rate no speech recipe states."""
    speech = work.model.family == "encoder-decoder" and bool(work.model.input_size)
    if (
        work.training
        and unit == "samples/s"
        and work.model.family in TOKEN_COUNTED_FAMILIES
        and not speech
    ):
        return float(work.tokens_per_sample), "tokens/s"
    if unit == "samples/s" and work.model.family in IMAGE_FAMILIES:
        return 1.0, "images/s"  # a "sample" of SDXL is one generated image: said so
    return 1.0, unit


def prior_compute_efficiency(gpu: GpuSpec, precision: str) -> float:
    """Achieved ÷ dense datasheet peak for a good GEMM (methodology §5.1, §7)."""
    return _prior_compute(gpu.vendor, half_rate_fp16(gpu), precision)


def _prior_compute(vendor: str, half_rate: bool, precision: str) -> float:
    if vendor == "nvidia":
        if precision == "fp32":
            return 0.90
        if precision == "fp8":
            return 0.73
        # a GeForce board's FP32-accumulate half rate is held whole (HALF_RATE_GEMM_SHARE); a
        # full-rate figure, the TITAN RTX's among them, takes the datacenter and workstation
        # share (``half_rate_fp16``: the figure, not the segment)
        if not half_rate:
            return 0.80
        return HALF_RATE_GEMM_SHARE if precision in vocab.HALF_RATE_PRECISIONS else 0.90
    if vendor == "amd":
        return 0.70 if precision == "fp32" else 0.55
    if vendor == "apple":
        return 0.75
    return 0.60  # Intel and others: no published MAMF; the uncertainty band says so


@dataclass(frozen=True, slots=True)
class Efficiency:
    compute: dict[str, float]
    memory: float
    source: str  # prior | family | measured
    measured_on: int = 0  # machines behind measured figures (pooled device reports)
    # The GPU's best-shape GEMM efficiency per tensor datapath from its kernel profile (own,
    # or carried over from profiled GPUs), where no device report of it measured the datapath:
    # the operator path prices GEMMs with it (``operator_efficiency``).
    gemm: dict[str, KernelBasis] = field(default_factory=dict)
    basis: str = ""  # what the operator path's GEMMs rest on, in words ("" = ``source``)
    # The GPU's best-shape FlashAttention forward efficiency against its 16-bit peak from the
    # kernel profiles (own or carried over); None: the operator path keeps the paper's factor.
    attention: KernelBasis | None = None
    # ``llm_efficiency`` of these figures, worked out on first use (the same for every job)
    llm: dict[str, float] | None = field(default=None, init=False, compare=False, repr=False)


# Built for every configuration a request evaluates or bounds: a plain slotted dataclass, as
# a frozen one costs five times as much to build (object.__setattr__ per field). Nothing
# changes an estimate once built (see evaluate.Configuration).
@dataclass(slots=True)
class PerfEstimate:
    throughput: float  # samples/s, or generated tokens/s for LLM inference
    unit: str
    step_time_s: float  # one step / one batch (inference: the whole request)
    bottleneck: str
    compute_s: float
    memory_s: float
    overhead_s: float
    host_s: float
    comm_s: float
    num_gpus: int
    scaling_efficiency: float
    compute_precision: str
    efficiency_source: str
    latency_ms: float | None = None
    ttft_ms: float | None = None
    ms_per_token: float | None = None
    runtime: str = "pytorch"
    backend: str = ""
    measured_on: int = 0
    # what the GEMMs' efficiency rests on, in words, where a kernel profile priced them
    # ("measured on this GPU (2 reports)", "carried over from H100 SXM5, B200"); "" = prior
    efficiency_basis: str = ""
    # the same for the operator path's attention kernels; "" = the FlashAttention-2 prior
    attention_basis: str = ""
    # how a multi-GPU training job spans its GPUs, in words (parallelism.Layout.label); for LLM
    # inference asked as copies, the copies and what each runs (``as_copies``)
    parallelism: str = ""
    # a training layout's GPUs per copy of the model states where fewer than all
    # (parallelism.Layout.shard_group: 1 under DDP, the group under HSDP; 0: all)
    shard_group: int = 0
    # LLM inference asked as copies: copies side by side, num_gpus ÷ copies GPUs each
    copies: int = 1
    # LLM inference: what limits a decode step alone ("" elsewhere); ``bottleneck`` is the
    # whole request's, which a long prompt makes "compute" though generation reads weights
    decode_bottleneck: str = ""


def prior_memory_efficiency(gpu: GpuSpec) -> float:
    """Achieved ÷ datasheet bandwidth when streaming with a good kernel: MEMORY_EFFICIENCY, less
    on a multi-die Apple part (APPLE_MULTI_DIE_STREAM_SHARE) and on AMD's multi-XCD Instinct
    parts (AMD_MULTI_XCD_STREAM_SHARE)."""
    if gpu.vendor == "apple" and gpu.dies > 1:
        return MEMORY_EFFICIENCY * APPLE_MULTI_DIE_STREAM_SHARE
    if gpu.vendor == "amd" and gpu.architecture in AMD_MULTI_XCD_ARCHITECTURES:
        return MEMORY_EFFICIENCY * AMD_MULTI_XCD_STREAM_SHARE
    return MEMORY_EFFICIENCY


@lru_cache(maxsize=256)
def _prior_efficiencies(
    vendor: str, half_rate: bool, memory: float = MEMORY_EFFICIENCY
) -> Efficiency:
    comp: dict[str, float] = {p: _prior_compute(vendor, half_rate, p) for p in MEASURED_PRECISIONS}
    return Efficiency(comp, memory, "prior")


def efficiencies(gpu: GpuSpec, calibration: Calibration | None) -> Efficiency:
    if calibration is None:
        return _prior_efficiencies(gpu.vendor, half_rate_fp16(gpu), prior_memory_efficiency(gpu))
    hit: Efficiency | None = calibration.memo.get(gpu)
    if hit is None:
        hit = _calibrated(gpu, calibration)
        if len(calibration.memo) >= EFFICIENCY_MEMO_SIZE:
            calibration.memo.clear()  # edited specs leave stale keys behind
        calibration.memo[gpu] = hit
    return hit


EFFICIENCY_MEMO_SIZE = 20_000


def _calibrated(gpu: GpuSpec, calibration: Calibration) -> Efficiency:
    comp: dict[str, float] = {}
    sources: set[str] = set()
    gemm: dict[str, KernelBasis] = {}
    store = calibration.profiles
    for p in MEASURED_PRECISIONS:
        comp[p], src = adjust(prior_compute_efficiency(gpu, p), gpu, calibration, "compute", p)
        sources.add(src)
        if store is not None and src != "measured" and p in PROFILED_GEMM:
            # a device report's own figure for the datapath wins over the kernel profile
            kb = gemm_efficiency(gpu, store, calibration.profile_gpus, p)
            if kb is not None:
                gemm[p] = kb
    mem, src = adjust(prior_memory_efficiency(gpu), gpu, calibration, "memory")
    sources.add(src)
    source = next((s for s in ("measured", "family") if s in sources), "prior")
    own = calibration.by_slug.get(gpu.slug)
    count = own.count if own is not None and source == "measured" else 0
    attn = attention_efficiency(gpu, store, calibration.profile_gpus) if store else None
    return Efficiency(comp, mem, source, count, gemm, attention=attn)


# The tensor datapaths whose GEMMs the kernel profiles price. fp32 stays on the prior: its
# entry is also the CUDA-core rate of the non-tensor kernels (depthwise convolutions,
# element-wise FLOPs), which a GEMM profile does not measure.
PROFILED_GEMM = frozenset(vocab.PROFILED_GEMM_PRECISIONS)


def operator_efficiency(eff: Efficiency, key: str) -> Efficiency:
    """``eff`` for the operator path of a job whose GEMMs run on datapath ``key``: the kernel
    profile's GEMM efficiencies in place of the priors, and the step's provenance that of its
    GEMM datapath. GEMMs (and the attention and convolution kernels priced as fractions of the
    GEMM rate, kernels.class_rates) take most of a transformer step's time, so the GEMM's
    basis is the step's: measured (device reports of this GPU: the band narrows as for any
    measured efficiency), published figures for this GPU, carried over, or the prior."""
    if not eff.gemm:
        return eff
    comp = {**eff.compute, **{p: kb.efficiency for p, kb in eff.gemm.items()}}
    kb = eff.gemm.get(key)
    if kb is None:
        return replace(eff, compute=comp)
    if kb.reports:
        return replace(
            eff,
            compute=comp,
            source="measured",
            measured_on=max(eff.measured_on, kb.reports),
            basis=kb.basis,
        )
    return replace(eff, compute=comp, basis=kb.basis)


def _half_peak(gpu: GpuSpec, precision: str) -> tuple[float | None, str]:
    """The 16-bit peak PyTorch reaches, falling back when the datapath is missing or slow."""
    order = (precision, "fp16" if precision == "bf16" else "bf16")
    for p in order:
        peak, _ = peak_tflops(gpu, p)
        if peak:
            # Pascal GeForce runs fp16 math at 1/64 rate; cuBLAS then computes in fp32
            if gpu.fp32_tflops and peak < gpu.fp32_tflops:
                return gpu.fp32_tflops, "fp32"
            return peak, p
    return gpu.fp32_tflops, "fp32"


def compute_time(
    flops: float,
    gpu: GpuSpec,
    work: WorkloadSpec,
    framework: str,
    eff: Efficiency,
    profile: RuntimeProfile = EAGER,
) -> tuple[float, str]:
    """Seconds for ``flops`` of model math at the job's precision, and the mode that ran.

    The runtime's profile scales the eager whole-model efficiency, runs int8/fp8 on their own
    peaks where the runtime has such kernels, or names another bounding datapath outright."""
    parts, mode = compute_split(gpu, work, framework, eff, profile)
    return seconds(flops, parts), mode


# How a job's FLOPs run on a GPU: (share of the FLOPs, FLOP/s that share runs at) per
# datapath; None where a needed datapath has no peak (an infinite time).
Split = tuple[tuple[float, float], ...] | None


def seconds(flops: float, parts: Split) -> float:
    """``flops`` through a ``compute_split``: each share's FLOPs over its rate, added up."""
    if parts is None:
        return math.inf
    t = 0.0
    for share, rate in parts:
        t += flops * share / rate
    return t


def compute_split(
    gpu: GpuSpec,
    work: WorkloadSpec,
    framework: str,
    eff: Efficiency,
    profile: RuntimeProfile = EAGER,
    *,
    per_operator: bool = False,
) -> tuple[Split, str]:
    """How ``compute_time`` divides FLOPs for this GPU, job precision and runtime, and the
    mode that runs: the same for every job and batch with them. ``per_operator``: the rates a
    well-shaped GEMM reaches (peak × prior), for the operator path, whose shapes carry what
    the whole-model utilisation and the runtime's compute scale stand for."""
    p = work.precision
    u = 1.0 if per_operator else MODEL_UTILISATION * profile.compute_scale
    if profile.compute_basis and profile.compute:
        basis = profile.compute_basis
        peak = (
            basis_tflops(gpu, basis, profile)
            if basis in ("fp32", "sm")
            else peak_tflops(gpu, basis)[0]
        )
        if peak:
            return ((1.0, peak * 1e12 * profile.compute),), basis
    if p in profile.native and p in ("int8", "fp8"):
        native = gpu.int8_tops if p == "int8" else gpu.fp8_tflops
        if native:
            # int8/fp8 GEMMs reach the same share of their peak as 16-bit ones of theirs
            return ((1.0, native * 1e12 * eff.compute["fp8"] * u),), p
    if p == "fp32":
        tf32, _ = peak_tflops(gpu, "tf32")
        frac = tf32_fraction(gpu, work.model.family, framework, work.allow_tf32_matmul)
        frac = frac if tf32 else 0.0
        fp32 = gpu.fp32_tflops
        parts: list[tuple[float, float]] = []
        if frac > 0 and tf32:
            parts.append((frac, tf32 * 1e12 * eff.compute["tf32"] * u))
        if frac < 1:
            if not fp32:
                return None, "fp32"
            parts.append((1 - frac, fp32 * 1e12 * eff.compute["fp32"] * u))
        mode = "fp32" if frac == 0 else ("tf32" if frac == 1 else "fp32+tf32")
        return tuple(parts), mode
    if p == "tf32":
        tf32, _ = peak_tflops(gpu, "tf32")
        peak = tf32 or gpu.fp32_tflops
        key = "tf32" if tf32 else "fp32"
    elif p == "fp8" and gpu.fp8_tflops:
        peak, key = gpu.fp8_tflops, "fp8"
    else:
        # bf16/fp16, and weight-only int8/int4, which dequantise to 16-bit for the math
        half = "bf16" if p in ("bf16", "fp8") else "fp16"
        peak, key = _half_peak(gpu, half)
    if not peak:
        return None, key
    return ((1.0, peak * 1e12 * eff.compute[key] * u),), key


def host_bandwidth_gbs(gpu: GpuSpec, calibration: Calibration | None) -> float | None:
    """Pinned host→device GB/s; ``None`` for unified memory (nothing to copy)."""
    if gpu.segment == "soc" or gpu.vendor == "apple":
        return None
    if calibration is not None:
        own = calibration.by_slug.get(gpu.slug)
        if own is not None and own.h2d_pinned_gbs:
            return own.h2d_pinned_gbs
    gen = gpu.pcie_gen or 4
    lanes = gpu.pcie_lanes or 16
    return PCIE_GBS.get(gen, 31.5) * lanes / 16 * PCIE_PINNED_EFFICIENCY


def _trainable(work: WorkloadSpec) -> float:
    if work.peft in ("lora", "qlora"):
        return job_lora_params(work)
    return work.model.params


def split_ways(batch: int, n: int) -> float:
    """How many ways ``n`` GPUs split a batch of ``batch`` whole samples: the busiest GPU runs
    ⌈batch/n⌉ of them, so the step is the single-GPU step at ⌈batch/n⌉/batch of its samples
    (n ways when n divides the batch; one way for a single sample, whose extra GPUs idle)."""
    if n <= 1 or batch <= 0:
        return 1.0 if n <= 1 else float(n)
    return batch / math.ceil(batch / n)


def split_step_s(one: OneGpu, n: int, *, sharded: bool, batch: int = 0) -> float:
    """One GPU's part of ``one``'s step when ``n`` GPUs split it: replicas split its batch of
    ``batch`` whole samples (0: any number), each GPU's step the single-GPU step at the
    busiest replica's share of them (``split_ways``); a sharded job (FSDP, tensor or pipeline
    parallel, layers) splits the work ``n`` ways, inside samples too. The FLOPs, the activation
    traffic and the input copies split so; the kernel launches do not (every GPU runs every
    kernel, on fewer samples), nor, for replicas, the weight and optimizer traffic (each
    replica reads all its weights every pass and updates all of them; a sharded job updates
    only its shard)."""
    if n <= 1:
        return one.step_s
    k = float(n) if sharded else split_ways(batch, n)
    t_w = one.t_wmem / n if sharded else one.t_wmem
    t_c = one.t_comp / k
    step = (t_w if t_w > t_c else t_c) + one.t_act / k + one.overhead
    if one.decode_s or one.decode_dispatch:
        # the decode's launches do not split either; its FLOPs and bytes do (approximately:
        # its share of the GPU time without the launches)
        dec = one.decode_s / k
        loop_dispatch = one.dispatch - one.decode_dispatch
        step = phased_step(step - dec, loop_dispatch, dec, one.decode_dispatch)
        return max(step, one.host / k) + one.serial
    return max(step, one.host / k, one.dispatch) + one.serial


def phased_step(gpu: float, dispatch: float, decode_gpu: float, decode_dispatch: float) -> float:
    """An eager pipeline of two phases run one after the other — a diffusion sample's
    denoising loop, then its VAE decode — each bound by its own GPU time or its host
    dispatch: max(loop GPU, loop host) + max(decode GPU, decode host). ``gpu`` and
    ``dispatch`` are the loop's; the decode's come apart. The host cannot dispatch the decode
    before the loop's last call, and the loop's idle GPU (a host-bound loop) does not run the
    decode's kernels ahead: so, unlike one max over the whole pipeline, a host-bound loop still
    pays the decode's GPU time."""
    loop = gpu if gpu > dispatch else dispatch
    dec = decode_gpu if decode_gpu > decode_dispatch else decode_dispatch
    return loop + dec


def training_comm_s(
    gpu: GpuSpec,
    work: WorkloadSpec,
    n: int,
    *,
    sharded: bool,
    accumulation_steps: int = 1,
    compute_s: float = 0.0,
    shard_min: int | None = None,
) -> float:
    """Seconds of exposed GPU-to-GPU traffic per (micro-)step of a training job on ``n`` GPUs,
    in the layout ``training_layout`` picks (``compute_s``: one micro-step's compute on one GPU
    of the ``n``, which communication can run beside)."""
    return training_layout(
        gpu,
        work,
        n,
        sharded=sharded,
        accumulation_steps=accumulation_steps,
        compute_s=compute_s,
        shard_min=shard_min,
    ).exposed_s


def training_layout(
    gpu: GpuSpec,
    work: WorkloadSpec,
    n: int,
    *,
    sharded: bool,
    accumulation_steps: int = 1,
    compute_s: float = 0.0,
    shard_min: int | None = None,
) -> parallelism.Layout:
    """How a training job spans ``n`` GPUs (parallelism.py): data parallel when it fits one
    GPU; when it needs ``shard_min`` GPUs' memory (``None``: all ``n``), fully sharded, hybrid
    sharded (whole nodes) or tensor parallel in a node, whichever leaves the least exposed."""
    lora = work.peft in ("lora", "qlora")
    grad_b = reduced_gradient_bytes(work, sharded=sharded and n > 1)
    wide = work.precision in ("fp32", "tf32")
    w_b = NF4_BYTES if work.peft == "qlora" else (4.0 if wide else 2.0)
    if qlora_in_kernel(work):
        w_b = qlora_base_width(work)
    passes = (2.0 if lora else 3.0) + (1.0 if work.gradient_checkpointing else 0.0)
    m = work.model
    act = 0.0
    if m.is_transformer and m.hidden_size:
        act = work.batch_size / max(1, n) * work.seq_len * m.hidden_size * (4.0 if wide else 2.0)
    job = parallelism.Job(
        grad_bytes=_trainable(work) * grad_b,
        weight_bytes=m.params * w_b,
        layers=m.layers or 50,
        compute_s=compute_s,
        backward_share=(passes - 1.0) / passes,
        accumulation_steps=max(1, accumulation_steps),
        act_bytes_per_layer=act,
        recompute=work.gradient_checkpointing,
        batch=float(work.batch_size),
    )
    tp_ok = bool(m.is_transformer and m.has_shape)
    lay = megatron_layout(work, n, sharded=sharded, shard_min=shard_min)
    if lay is not None:
        kv = 2.0 * (m.kv_heads or 1) * (m.head_dim or 0) / m.hidden_size if m.hidden_size else 0.0
        return megatron.price(gpu, n, job, lay, kv)
    return parallelism.choose(
        gpu,
        n,
        job,
        sharded=sharded,
        shard_min=shard_min,
        tp_ok=tp_ok,
    )


def reduced_gradient_bytes(work: WorkloadSpec, *, sharded: bool) -> float:
    """Bytes per trainable parameter a multi-GPU training step reduces, in the dtype the
    engine's memory model (workload._training_memory) holds the job's gradients in.

    * fp32 / TF32 jobs, and LoRA / QLoRA adapters (PEFT keeps them in fp32): 4.
    * Mixed precision replicated (DDP) over fp32 parameters — torch.autocast, which the memory
      model assumes (its fp32 ``master_weights`` and 4-byte gradients): 4. Autocast casts
      only the ops' inputs; ``.grad`` takes the parameter's dtype (fp32), and DDP all-reduces
      the gradient buckets in that dtype unless the job registers a compression comm hook
      (PyTorch docs: torch.amp "Automatic Mixed Precision" and DistributedDataParallel /
      "DDP Communication Hooks", fp16_compress_hook) — not assumed. TensorFlow's and JAX's
      mixed precision likewise keep fp32 variables and reduce fp32 gradients.
    * A 16-bit model with no fp32 parameters (``half_weights``: model.half(), apex AMP O2 as
      Lambda's BERT harness runs it): 2, its gradients' own dtype.
    * Sharded (FSDP / ZeRO-3, HSDP, TP × FSDP): 2 — FSDP's MixedPrecision(param_dtype=bf16)
      with reduce_dtype left unset reduces in the param dtype (FSDP2's MixedPrecisionPolicy
      likewise), as workload.fsdp_block_bytes sizes the unsharded gradient; the fp32 shard it
      then accumulates into is the memory model's 4-byte gradients.
    * Megatron (megatron.price): 2, unchanged here. Megatron-LM reduces bf16 jobs' gradients
      in fp32 unless run with --grad-reduce-in-bf16 (megatron/training/arguments.py sets
      accumulate_allreduce_grads_in_fp32 for bf16), as its memory estimate here holds; its
      communication pricing was tuned at 2 bytes and is not re-derived in this change."""
    if work.peft in ("lora", "qlora") or work.precision in ("fp32", "tf32"):
        return 4.0
    if sharded or work.runtime == "megatron" or work.half_weights:
        return 2.0
    return 4.0


def megatron_layout(
    work: WorkloadSpec, n: int, *, sharded: bool, shard_min: int | None = None
) -> megatron.MegatronLayout | None:
    """The Megatron layout a training job runs on ``n`` GPUs (runtime megatron only): the
    job's own, else Megatron's default for the memory the job needs (``shard_min``: the fewest
    GPUs that hold it; ``None``: all ``n``)."""
    if work.runtime != "megatron" or n <= 1:
        return None
    m = work.model
    need = (n if shard_min is None else shard_min) if sharded else 1
    return work.megatron or megatron.default_layout(n, need, bool(m.is_transformer and m.has_shape))


def forward_flops_per_sample(work: WorkloadSpec, context: int | None = None) -> float:
    """Forward FLOPs (2 × MACs) for one sample.

    Transformers: 2·P per token plus attention 4·L·s·h per token (QKᵀ and AV; Kaplan et al.
    2020). A ViT with a shape: its operators' FLOPs at its own ``input_size`` (``vit_flops``),
    the FLOPs its step prices. Other vision / diffusion / MLP models: the preset's measured
    GFLOPs (a CNN or diffusion preset's already follow a changed image side:
    app/recommend/workloads.py rescales them with its tables).
    """
    m = work.model
    if m.family == "vit" and m.has_shape:
        return vit_flops(m)
    if m.family == "encoder-decoder" and m.has_shape and context is None and work.training:
        # each stack over its own positions: Whisper's encoder over 1,500 audio frames, not
        # the decoder's 448 target tokens (seq2seq.forward_flops)
        return seq2seq.forward_flops(work)
    if m.gflops_per_sample is not None and not (m.is_transformer and m.has_shape):
        return m.gflops_per_sample * 1e9
    s = context if context is not None else work.tokens_per_sample
    if m.has_shape:
        attn = 4.0 * (m.layers or 0) * s * (m.hidden_size or 0)
        return (2.0 * m.params_per_token + attn) * s
    if m.gflops_per_sample is not None:
        return m.gflops_per_sample * 1e9
    return 2.0 * m.params_per_token * s


@lru_cache(maxsize=256)  # a pure function of the shape; MFU asks it per card
def vit_flops(m: ModelSpec) -> float:
    """One image's forward FLOPs through a ViT, counted on the operators its step prices
    (operators.vit_ops at the model's ``input_size``): MFU then divides the FLOPs the step ran.
    The preset's figure (torchvision's 17.56 GMACs for ViT-B/16) holds at 224 only, where the
    operators give 35.13 GFLOPs against its 35.12; at 384 they give 111.0 (timm/fvcore count
    55.5 GMACs), which the 224 figure had left at 35.12, so MFU fell 3.2× with the side."""
    return total(vit_ops(m, 1.0, training=False))


def matmul_params(m: ModelSpec) -> float:
    """Parameters a token multiplies by (active ones for an MoE model): an input embedding is
    a lookup, no matmul, so its table counts only where it is also the LM head the step
    computes — a decoder with tied embeddings (GPT-2). An untied decoder's head is its own
    matrix (Llama 3 8B: 8.03 B less the 0.53 B input table); an encoder's task head is not
    the vocabulary projection (BERT's SQuAD fine-tuning: 340 M less its 31 M table).
    Encoder-decoders keep every parameter (whether their head is tied is not known here)."""
    embed, head = embedding_params(m)
    if m.family == "decoder":
        return m.params_per_token - (embed if head else 0.0)
    if m.family == "encoder":
        return m.params_per_token - embed
    return m.params_per_token


def model_flops_per_sample(work: WorkloadSpec) -> float:
    """The FLOPs per sample a training step's MFU counts (Chowdhery et al. 2022, PaLM, App. B):
    for a transformer, per token 6 × ``matmul_params`` + 12·L·h·s of attention (forward, input
    gradient, weight gradient); under LoRA / QLoRA the frozen weights get no weight gradient,
    so 4 × them (forward and input gradient) + 6 × the adapters (``lora_params``), attention
    still 3 × its forward (both its inputs need gradients). Other models: 3 × the preset's
    forward FLOPs, 2 × under LoRA (the adapters not counted: their shapes are not known
    here). Recomputation is not counted."""
    m = work.model
    lora = work.peft in ("lora", "qlora")
    passes = 2.0 if lora else 3.0
    if not (m.is_transformer and m.has_shape) or m.family == "encoder-decoder":
        return passes * forward_flops_per_sample(work)
    s = float(work.tokens_per_sample)
    attn = 4.0 * float(m.layers or 0) * s * float(m.hidden_size or 0)
    adapters = 6.0 * job_lora_params(work) if lora else 0.0
    return (passes * 2.0 * matmul_params(m) + 3.0 * attn + adapters) * s


def model_flops_utilisation(gpu: GpuSpec, work: WorkloadSpec, est: PerfEstimate) -> float | None:
    """A training estimate's MFU: ``model_flops_per_sample`` × the samples/s, ÷ (GPUs × the
    dense datasheet peak at the step's compute precision; the TF32 peak for a mixed
    fp32/TF32 step). None for inference or where the model has neither a shape nor published
    FLOPs per sample, or the precision no dense peak."""
    m = work.model
    if not work.training or est.throughput <= 0 or not (m.has_shape or m.gflops_per_sample):
        return None
    mode = "tf32" if est.compute_precision == "fp32+tf32" else est.compute_precision
    peak, _ = peak_tflops(gpu, mode)
    if not peak:
        return None
    flops = model_flops_per_sample(work)
    return flops * est.throughput / (max(1, est.num_gpus) * peak * 1e12)


def _weight_bytes(work: WorkloadSpec) -> float:
    m = work.model
    if qlora_in_kernel(work):
        return qlora_base_bytes(work)
    if work.peft == "qlora":
        return m.params * NF4_BYTES
    if not work.training:
        return m.params * work.weight_bytes_per_param
    return m.params * BYTES.get(work.precision, 2.0)


def profile_for(gpu: GpuSpec, work: WorkloadSpec, backend: str, regime: str) -> RuntimeProfile:
    """The runtime's constants for this GPU and phase; eager PyTorch without a table. A
    weight-only job (``dequantised``) reads the rows of the 16-bit job it computes as: its math
    is theirs (a power-capped board's cap, the 16-bit rows' ``tensor_tflops_per_watt``,
    included)."""
    if work.efficiency is None:
        return EAGER
    precision = WEIGHT_ONLY_MATH if dequantised(work) else work.precision
    return work.efficiency.profile(gpu, backend, work.runtime, precision, regime, work.model.family)


# The GeForce whitepapers' FP16-accumulate rows (Turing, GA102, Ada, Blackwell; the Ada one's
# RTX 4090: 330.3 against 165.2 dense TFLOPS, nv-ada-wp Appendix A), quoted in words only (the
# catalog's fp16 and bf16 are the FP32-accumulate figure; llm_step.fp16_accumulate_gain holds
# the ratio the math uses). Named for the row's generation, not Ada's for every card.
GEFORCE_FP16_ACCUMULATE = (
    "NVIDIA's GeForce architecture whitepapers (Turing, Ampere GA102, Ada, Blackwell)"
)


def fp16_accumulate_words(gpu: GpuSpec, work: WorkloadSpec, est: PerfEstimate) -> str | None:
    """What a 16-bit row on a runtime whose FP16 tactics accumulate in FP16 (TensorRT's
    ``fp16_accumulate`` row, data/efficiency.yaml) must say on a GeForce card, where that runs
    at twice the FP32-accumulate rate: an fp16 row is priced at it, a bf16 row (bf16 has no
    FP16-accumulate mode) at half, so bf16 read ~1.75× slower than fp16 with no word. None
    elsewhere: other parts run both at one rate, and other paths (an LLM's) say their own."""
    mode = est.compute_precision
    if work.task != "inference" or mode not in ("fp16", "bf16") or not has_operators(work.model):
        return None
    if work.model.family in ("decoder", "encoder-decoder"):
        return None  # generation is priced by llm_step / seq2seq, not kernels.class_rates
    if llm_step.fp16_accumulate_gain(gpu) <= 1.0 or gpu.fp16_tflops is None:
        return None
    be = est.backend or (gpu.backends[0] if gpu.backends else "cuda")
    fp16 = work if work.precision == "fp16" else work.with_precision("fp16")
    if not profile_for(gpu, fp16, be, phase_regime(work)).fp16_accumulate:
        return None
    half, full = gpu.fp16_tflops, gpu.fp16_tflops * llm_step.fp16_accumulate_gain(gpu)
    runtime = vocab.runtime_name(est.runtime)
    why = (
        f"{runtime}'s fp16 engine accumulates in FP16, which {gpu.name}'s tensor cores run at "
        f"twice the FP32-accumulate rate ({GEFORCE_FP16_ACCUMULATE})"
    )
    if mode == "fp16":
        return (
            f"Priced at {full:,.0f} TFLOPS of fp16 tensor math: {why}; bf16, which accumulates "
            f"in FP32, gets {half:,.0f}"
        )
    return (
        f"This bf16 row's tensor math runs at {half:,.0f} TFLOPS, as bf16 accumulates in FP32; "
        f"{why}, {full:,.0f} here: precision fp16 runs the same engine faster"
    )


# Model families whose inference the operator / whole-model path here prices (a decoder's is
# llm_step's, an encoder-decoder's generation seq2seq's) and the low precisions that, on a
# runtime with no kernels of their own (data/efficiency.yaml ``native``), only shrink the
# stored weights: the GEMMs run on a 16-bit copy (torchao's int8 weight-only linear, eager:
# ``torch.mm(x, w_int8.to(x.dtype))`` then the scale, affine_quantized_tensor.py
# _linear_fp_act_int8_weight_impl; its int4 one, tinygemm, dequantises inside a kernel built
# for small batches). Stock PyTorch itself has no int8/int4 GPU path for these models.
WEIGHT_ONLY_FAMILIES = frozenset(vocab.DEQUANTISED_FAMILIES)
WEIGHT_ONLY_PRECISIONS = frozenset(vocab.DEQUANTISED_PRECISIONS)
WEIGHT_ONLY_MATH = "fp16"  # compute_split's datapath for them: the 16-bit one


def dequantised(work: WorkloadSpec) -> bool:
    """Whether an inference job's int8/int4 is weight-only on its runtime: a non-LLM model
    (``WEIGHT_ONLY_FAMILIES``) on a runtime whose ``native`` list lacks the precision (eager
    PyTorch, torch.compile; TensorRT's int8 is its own and stays so). Such a job is priced as
    the 16-bit job (``math_job``) with its weights read in the stored format: never faster
    where the step is compute-bound, and the dequantisation's own work is not charged (a
    floor: torchao's eager int8 path adds a cast and a scale pass per linear)."""
    if work.training or work.precision not in WEIGHT_ONLY_PRECISIONS:
        return False
    if work.model.family not in WEIGHT_ONLY_FAMILIES:
        return False
    table = work.efficiency
    native = table.runtime_value(work.runtime, "native") if table is not None else None
    return work.precision not in (native or EAGER.native)


def math_job(work: WorkloadSpec) -> WorkloadSpec:
    """The job whose math ``work`` runs: the 16-bit job for a weight-only one (``dequantised``),
    else ``work`` itself."""
    return work.with_precision(WEIGHT_ONLY_MATH) if dequantised(work) else work


def _memory_efficiency(eff: Efficiency, prof: RuntimeProfile) -> float:
    """The runtime's share of bandwidth, relative to the eager prior: a measured bandwidth
    (a device report) is scaled by the same ratio rather than replaced."""
    return eff.memory * prof.memory / MEMORY_EFFICIENCY


def _train_kernels(work: WorkloadSpec) -> int:
    if work.model.layers:
        return work.model.layers * KERNELS_PER_LAYER_TRAIN + 10
    return DEFAULT_TRAIN_KERNELS


def _host_bytes_per_sample(work: WorkloadSpec) -> float:
    m = work.model
    if m.family in ("cnn", "vit", "diffusion"):
        side = float(m.input_size or 224)
        return 3 * side * side * 4.0  # fp32 tensors from a standard DataLoader
    if m.is_transformer:
        return work.seq_len * 8.0 * 2  # int64 ids + attention mask
    return 1024.0


@dataclass(slots=True)  # plain, not frozen: one per card and request (see PerfEstimate)
class OneGpu:
    """The part of a (non-LLM-inference) step that does not depend on the GPU count: the same
    for every count of one GPU and job, so a caller evaluating several counts computes it once
    (``single_gpu``) and passes it to ``estimate``."""

    eff: Efficiency
    backend: str
    wbytes: float
    t_comp: float
    mode: str
    t_wmem: float
    t_act: float
    overhead: float
    host: float  # the input copies host → device
    # One step on one GPU: the GPU's time, the host's copies or its dispatch, whichever is
    # longest (``single_gpu`` works it out once: every bound and count of the card reads it).
    step_s: float
    # An eager runtime's host dispatch of every op: each GPU's process launches all of its
    # kernels, so unlike the copies it does not split over GPUs
    dispatch: float = 0.0
    # A diffusion pipeline's decode phase (the VAE after the denoising loop): its GPU time
    # (inside the step's GPU time) and its host dispatch (inside ``dispatch``). The loop and
    # the decode are bound apart: step = max(loop GPU, loop host) + max(decode GPU, decode
    # host) (``phased_step``); 0 where the step is one phase
    decode_s: float = 0.0
    decode_dispatch: float = 0.0
    # host work in ``step_s`` that runs with the GPU idle and does not split over GPUs (a
    # diffusion pipeline's, diffusion_host): 0 elsewhere
    serial: float = 0.0
    # Whether the step copies its inputs in before its kernels start (the runtime's
    # serial_input_copy): the copy then adds to the step rather than overlapping it
    serial_copy: bool = False
    # An encoder-decoder's inference (``_seq2seq_step``): one decoder step, and the time to
    # its first token (the encoder's pass and one step), in seconds; 0 for any other job
    token_s: float = 0.0
    first_token_s: float = 0.0
    # Of the step's memory time (``t_wmem``, ``t_act``), the model-state updates: the optimizer
    # step and autocast's weight casts, whose bytes scale with the parameters, not the batch.
    # A sharded job's GPU updates its shard group's share of them (``estimate``: HSDP)
    t_state: float = 0.0
    # Of ``t_state``, the updates that run once per optimizer step, not once per micro-step:
    # the optimizer's (and Transformer Engine's FP8 weight casts, cached after the first
    # micro-batch), which gradient accumulation spreads over its micro-steps
    # (``_optimizer_saving``). ``opt_in_wmem``: whether they sit in ``t_wmem`` (the
    # whole-model path) rather than ``t_act`` (the operator path)
    t_opt: float = 0.0
    opt_in_wmem: bool = False


@dataclass(frozen=True, slots=True)
class _StepJob:
    """The GPU-independent part of ``single_gpu``: the same for every GPU of a request with
    the same attention kernels and activation width, so worked out once (``_step_job``)."""

    flops: float
    traffic: float  # activation bytes moved per step, before the runtime's traffic factor
    param_bytes: float
    wbytes: float
    kernels: int
    host_bytes: float  # the batch's input bytes a DataLoader copies in
    # The step as operators (forward, backward, optimizer), when the model has a shape or a
    # shipped table; None: priced whole-model as above
    ops: tuple[Op, ...] | None = None
    # ATen calls an eager host makes per step (table_host_calls); None: one per kernel
    host_calls: float | None = None
    # Eager decoder training counted in host calls rather than kernels (_train_host_calls):
    # how often each forward call of a block is issued per step (layers × (forward passes +
    # the autograd node behind each)), priced at the runtime's ops_per_layer where its row has
    # one; and the adapters' and 4-bit unpack's calls beside them. 0: one call per kernel
    layer_calls: float = 0.0
    adapter_calls: float = 0.0
    # the step's convolution ops (each one cuDNN call from the host: CONV_CALL_WEIGHT)
    conv_calls: float = 0.0
    # of those, the calls of a diffusion pipeline's decode phase (its ops carry phase
    # "decode": operators.DECODE_PHASE); 0 where the step has no such phase
    decode_calls: float = 0.0
    decode: bool = False  # whether any op carries phase "decode"
    # launches of those ops that cuDNN makes inside another op's call (its NCHW layout
    # transforms), per role of operators.LAYOUT_ROLES: kernels the framework does not dispatch
    # from the host
    library_kernels: tuple[float, ...] = (0.0, 0.0)
    # the same for the decode phase's ops alone
    decode_library_kernels: tuple[float, ...] = (0.0, 0.0)
    # a diffusion pipeline's host work that runs with the GPU idle (diffusion_host.serial_host):
    # eager ATen calls, priced at the eager per-call figure, and fixed seconds
    serial_calls: float = 0.0
    serial_s: float = 0.0
    # the model-state updates' bytes (OneGpu.t_state): the optimizer step (a whole-model
    # step), or the ops that run them (operator tables: the optimizer and weight casts)
    state_bytes: float = 0.0
    state_ops: tuple[Op, ...] = ()
    # the ops as arrays, per fusion policy (a request meets one or two runtimes), SM count and
    # whether the convolutions run on tensor cores, and the GPU's tensor-to-vector balance
    arrays: dict[tuple[tuple[str, ...], int | None, bool, float | None], OpArrays] = field(
        default_factory=dict, compare=False
    )
    # the decode phase's ops alone, keyed alike
    decode_arrays: dict[tuple[tuple[str, ...], int | None, bool, float | None], OpArrays] = field(
        default_factory=dict, compare=False
    )
    # the ops as GPU-independent columns per fusion policy, which ``arrays`` are priced from
    # for each SM count (kernels.arrays_of)
    columns: dict[tuple[str, ...], OpColumns] = field(default_factory=dict, compare=False)
    # per fusion policy, those columns' shapes and their twins in class CONV_NCHW, which the
    # autotuned steps' columns are taken from (``_moved_job``)
    twins: dict[tuple[str, ...], Twins] = field(default_factory=dict, compare=False)
    # its convolutions in class CONV_NCHW, by their index into ``ops`` (``_moved_job``)
    on_cores: dict[int, Op] = field(default_factory=dict, compare=False)
    # the step as cuDNN's autotuner runs it on a GPU, per set of convolutions it moves to the
    # CUDA cores (``_autotuned_nchw``)
    autotuned: dict[frozenset[str], _StepJob] = field(default_factory=dict, compare=False)
    # its convolutions with NCHW transforms, for ``_autotuned_nchw``
    nchw_pairs: _NchwPairs | None = field(default=None, compare=False)


def _step_job(work: WorkloadSpec, flash_attention: bool, act_b: float) -> _StepJob:
    """Kept on the job's spec (``WorkloadSpec.derived``): every GPU of the request reads it."""
    key = ("step", flash_attention, act_b)
    hit = work.derived.get(key)
    if isinstance(hit, _StepJob):
        return hit
    job = _build_step_job(work, flash_attention, act_b)
    work.derived[key] = job
    return job


def _build_step_job(work: WorkloadSpec, flash_attention: bool, act_b: float) -> _StepJob:
    job = _whole_model_job(work, flash_attention, act_b)
    ops = step_ops(work, flash_attention, act_b)
    if ops is None:
        return job
    inside = _inside_kernels(ops)
    dec = [o for o in ops if o.phase == DECODE_PHASE]
    dec_inside = _inside_kernels(dec)
    # a compiled runtime that replays CUDA graphs launches nothing from the host per kernel
    graphs = work.cuda_graphs
    layer_calls, adapter_calls = (0.0, 0.0) if graphs else _train_host_calls(work)
    unet_calls = max(1, work.model.passes_per_sample or 1) / _guidance(work.model)
    serial_calls, serial_s = serial_host(work, unet_calls, bool(dec))
    if layer_calls and work.model.experts and work.model.experts > 1:
        # an MoE block's router and experts run outside the dense block's 81 calls, each
        # expert's kernels from its own eager loop: about one call a kernel, as PEFT's ops
        adapter_calls += math.fsum(o.count for o in ops if o.name.split(".")[0] in _MOE_OPS)
    return replace(
        job,
        layer_calls=layer_calls,
        adapter_calls=adapter_calls,
        ops=tuple(ops),
        state_ops=tuple(o for o in ops if o.phase == "opt" or o.name == "autocast.weights"),
        host_calls=0.0 if graphs else table_host_calls(work),
        conv_calls=math.fsum(o.count for o in ops if o.kind == "conv"),
        library_kernels=inside,
        decode_calls=0.0 if graphs else decode_host_calls(work),
        decode=bool(dec),
        decode_library_kernels=dec_inside,
        serial_calls=serial_calls,
        serial_s=serial_s,
        # only an inference step with NCHW transforms has convolutions the autotuner may move
        # (``_autotuned_nchw``)
        nchw_pairs=_nchw_pairs(ops) if any(inside) and not work.training else None,
    )


# PEFT's lora.Linear adds, per adapted linear and forward, the input cast, lora_A, lora_B, the
# scaling multiply, the add into the frozen layer's output and its own module call: ~6 host
# calls (peft tuners/lora/layer.py; data/efficiency.yaml train-llm note), each backed by an
# autograd node in the backward like the block's own calls.
PEFT_CALLS_PER_LINEAR = 6.0
# An MoE block's own ops (operators._mlp): the router GEMM and each expert's kernels, with
# their backward ops (named after them)
_MOE_OPS = ("router", "expert")


def _train_host_calls(work: WorkloadSpec) -> tuple[float, float]:
    """An eager decoder training step's host calls per micro-step, as (layer_calls,
    adapter_calls): each forward call of a block is issued once per forward pass (twice under
    gradient checkpointing: torch.utils.checkpoint reruns the block's Python forward) and once
    more as the autograd node the backward runs for it, so a block's calls are its forward
    calls (the runtime's ``ops_per_layer``) × ``layer_calls`` ÷ layers; LoRA adds
    PEFT_CALLS_PER_LINEAR per adapted block linear the same number of times, and a 4-bit base
    its unpack kernels (each one PyTorch call) per linear per dequantising call. (0, 0) for
    anything else: its host is charged per kernel."""
    m = work.model
    if not work.training or m.family != "decoder" or not m.has_shape or not m.layers:
        return 0.0, 0.0
    fwd = 2.0 if work.gradient_checkpointing else 1.0
    issued = float(m.layers) * (fwd + 1.0)
    linears = float(len(block_linears(m)))
    adapters = 0.0
    if work.peft in ("lora", "qlora"):
        adapters = PEFT_CALLS_PER_LINEAR * linears * issued
    if work.peft == "qlora":
        dq = GPTQ_TORCH_DEQUANT if work.quantization == "gptq" else NF4_DEQUANT
        dq_calls = fwd + (1.0 if dq.in_backward else 0.0)
        adapters += dq.kernels * linears * float(m.layers) * dq_calls
    return issued, adapters


def _stored_bytes(work: WorkloadSpec, b: float, flash_attention: bool, act_b: float) -> float:
    """The bytes a step stores for backward, without checkpointing, that the whole-model
    traffic (TRAINING_TRAFFIC per byte) scales. A diffusion denoiser's training step reads its
    traced table's saved tensors (``unet_saved``, what its memory breakdown holds): the CNN
    proxy (ACT_MB_PER_GFLOP_16BIT, ResNet-50's ~6 MB per forward GFLOP) stores 6× as much for
    SDXL's UNet and 10× for FLUX.1's transformer, whose FLOPs per stored byte grow with their
    width, and priced FLUX.1 LoRA memory-bound at ~2.3 TB a sample (expert review xr2). Its
    inference keeps the proxy: its whole-model regimes (compiled 8-bit UNets) are scored on it."""
    m = work.model
    if work.training and m.family == "diffusion" and m.operators is not None:
        pol = training_policy(work)
        per = unet_saved(m.operators, compute=pol.compute, norm=pol.residual, checkpointing=False)
        return per * b
    return activation_bytes(
        work, b, flash_attention=flash_attention, act_bytes=act_b, checkpointing=False
    )


def _whole_model_job(work: WorkloadSpec, flash_attention: bool, act_b: float) -> _StepJob:
    b = work.batch_size
    fwd = forward_flops_per_sample(work) * b
    # Each of the sample's passes (diffusion: steps × 2) reads the weights and moves one
    # pass's activations again.
    npass = max(1, work.model.passes_per_sample or 1)
    acts = npass * _stored_bytes(work, b, flash_attention, act_b)
    wbytes = _weight_bytes(work) * npass
    if work.training:
        lora = work.peft in ("lora", "qlora")
        passes = 2.0 if lora else 3.0
        if work.gradient_checkpointing:
            passes += 1.0
        flops = fwd * passes
        traffic = acts * TRAINING_TRAFFIC * (passes / 3.0)
        pure = _pure16_update_bytes(work)
        opt = sum(pure) if pure else OPTIMIZER_TRAFFIC.get(work.optimizer, 28.0)
        trainable = work.model.params * (0.01 if lora else 1.0)
        param_bytes = wbytes * passes + trainable * opt
        if work.peft == "qlora":
            param_bytes += work.model.params * 2.0 * passes  # dequantised 16-bit copies
        kernels = _train_kernels(work)
        state = trainable * opt
    else:
        state = 0.0
        flops = fwd
        traffic = acts * TRAINING_TRAFFIC * FORWARD_TRAFFIC_SHARE
        param_bytes = wbytes
        if dequantised(work):
            # the 16-bit copy the GEMMs read, and the pass that writes it (``_dequantise``)
            read, written = _dequantised_bytes(work)
            param_bytes = (written * 2.0 + read) * npass
        kernels = (work.model.layers or 60) * KERNELS_PER_LAYER_DECODE
    host = _host_bytes_per_sample(work) * b
    return _StepJob(flops, traffic, param_bytes, wbytes, kernels, host, state_bytes=state)


def has_operators(m: ModelSpec) -> bool:
    """Whether the model resolves to operators: a shipped table, or a transformer shape."""
    if m.operators is not None:
        return True
    return m.has_shape and m.family in ("decoder", "encoder", "vit")


# Runtimes whose CNNs run in NCHW (vocab.NCHW_RUNTIMES, why there) and whose CNN training a
# shipped table prices in every precision (vocab.CNN_TRAIN_TABLE_RUNTIMES).
NCHW_RUNTIMES = frozenset(vocab.NCHW_RUNTIMES)
TRAIN_TABLE_RUNTIMES = frozenset(vocab.CNN_TRAIN_TABLE_RUNTIMES)


# Where a shipped (traced) operator table prices the step: only the regimes whose kernel curves
# have been checked against published runs and score no worse than the whole-model path there.
# Eager diffusion: the held-out diffusers rows went from a median ratio of 2.01 (whole-model) to
# 1.29. CNN inference under TensorRT (MLPerf ResNet-50: 1.28 → 1.19), eager PyTorch and
# TensorFlow (± XLA) with their host dispatch per kernel (DLE ResNeXt-101 / SE-ResNeXt-101 /
# EfficientNet-B0 tuning set: PyTorch 1.37 → 1.14, TensorFlow 2.45 → 1.45). CNN training
# under eager PyTorch, TensorFlow graph mode and TensorFlow + XLA, in every precision, with the
# NCHW layout transforms cuDNN adds around each tensor-core convolution, the bias passes of
# convolutions no norm follows, and — where the runtime autotunes cuDNN (TensorFlow; PyTorch
# training under cudnn.benchmark) — Winograd for 3×3 stride-1 convolutions where the CUDA
# cores run it faster than the GEMM path: Lambda's PyTorch tables (ResNet-50 fp16 1.19 → 1.13,
# FP32/TF32 1.14 → 1.09; SSD fp16 1.33 → 1.16, FP32 1.13 → 1.09), DLE's TF + XLA tables
# (1.38 → 1.08) and Lambda's tf_cnn_benchmarks tables (TF graph mode 1.38 → 1.17; VGG16 FP32
# 2.33 → 1.06). docs/methodology.md, "Operator tables", "DLE CNN training" and "TensorFlow
# graph-mode CNN training".
def table_prices(work: WorkloadSpec) -> bool:
    """Whether a shipped table prices this step: eager (PyTorch) diffusion inference, CNN
    inference under TensorRT, eager PyTorch and TensorFlow, CNN training under eager PyTorch
    and TensorFlow (± XLA), the regimes checked against published runs; the rest stay
    whole-model."""
    family = work.model.family
    if work.training:
        return family == "cnn" and work.runtime in TRAIN_TABLE_RUNTIMES
    if family == "cnn":
        return work.runtime in CNN_TABLE_RUNTIMES
    if family != "diffusion" or work.runtime not in DIFFUSION_TABLE_RUNTIMES:
        return False
    # a compiled 8-bit UNet stays whole-model (vocab.DIFFUSION_TABLE_PRECISIONS: why there)
    return work.runtime == "pytorch" or work.precision in DIFFUSION_TABLE_PRECISIONS


# Runtimes whose CNN inference a shipped table prices (see table_prices), and those that cast
# each conv / linear weight to 16 bits every pass (TensorRT builds 16-bit weights once).
CNN_TABLE_RUNTIMES = frozenset(vocab.CNN_TABLE_RUNTIMES)
DIFFUSION_TABLE_RUNTIMES = frozenset(vocab.DIFFUSION_TABLE_RUNTIMES)
DIFFUSION_TABLE_PRECISIONS = frozenset(vocab.DIFFUSION_TABLE_PRECISIONS)
AUTOCAST_RUNTIMES = frozenset(vocab.AUTOCAST_RUNTIMES)
# Runtimes that add a convolution's bias in an element-wise pass of its own (no epilogue
# fusion): eager PyTorch and TensorFlow graph mode (operators.conv_bias_pass). CNN training
# only: the CNN inference regimes' host dispatch per kernel (data/efficiency.yaml infer-cnn)
# was derived from the tables' kernel counts without these passes
# (scored with them, DLE's PyTorch inference set went 1.09 → 1.11; not re-derived)
BIAS_PASS_RUNTIMES = frozenset(vocab.BIAS_PASS_RUNTIMES)


def phase_regime(work: WorkloadSpec) -> str:
    """The efficiency table's regime for the step: "train", "train-llm" (decoder training, as
    rank's bands name it), "infer", "infer-cnn" (CNN inference) or "infer-diffusion"
    (diffusion inference), the last three for the host dispatch cost per op
    data/efficiency.yaml sets apart."""
    return family_regime(work.model.family, work.training)


def family_regime(family: str, training: bool) -> str:
    """phase_regime by model family alone; the uncertainty bands use the same split (their
    errors differ by family: benchmarks/accuracy.py calibrates each regime apart)."""
    if training:
        return "train-llm" if family == "decoder" else "train"
    return {"cnn": "infer-cnn", "diffusion": "infer-diffusion"}.get(family, "infer")


def _autocast_casts(work: WorkloadSpec, ops: list[Op]) -> list[Op]:
    """Mixed-precision inference over fp32 weights: one cast kernel per conv / linear weight
    (reads 4 B, writes 2 B per parameter), role "cast" so a fusing runtime (XLA) folds it.
    None where the weights are 16-bit already (``WorkloadSpec.half_weights``: model.half())."""
    if (
        work.runtime not in AUTOCAST_RUNTIMES
        or work.precision not in ("fp16", "bf16")
        or work.half_weights
    ):
        return ops
    n = sum(o.count for o in ops if o.kind in ("conv", "gemm"))
    if n <= 0:
        return ops
    p = work.model.params
    cast = Op("elementwise", "autocast.weights", MEMORY, n, 0.0, p * 4.0 / n, p * 2.0 / n,
              "fp32", "cast")  # fmt: skip
    return [*ops, cast]


def forward_ops(work: WorkloadSpec, flash_attention: bool, act_b: float) -> list[Op] | None:
    """One forward pass of the batch as operators, or None where the model has neither a
    transformer shape nor a shipped table (encoder-decoders, MLPs, CNNs without a table). A
    weight-only job (``dequantised``) runs the 16-bit job's ops and dequantises its weights
    besides (``_dequantise``)."""
    if not dequantised(work):
        return _forward_ops(work, flash_attention, act_b)
    ops = _forward_ops(math_job(work), flash_attention, act_b)
    return None if ops is None else _dequantise(work, ops)


def _dequantise(work: WorkloadSpec, ops: list[Op]) -> list[Op]:
    """A weight-only job's dequantisation: one pass per conv / linear weight, reading its
    stored bytes and writing the 16-bit copy the GEMM then reads (torchao's eager int8 linear:
    ``w_int8.to(x.dtype)`` before ``torch.mm``; an int4 kernel unpacks as much inside its
    loop). It adds to the 16-bit job's work, so the job is never priced faster than at 16 bits;
    a runtime that fuses casts (torch.compile) folds it into the GEMM, leaving the 16-bit
    job's time. The scale multiply torchao's int8 path runs over each output is not charged."""
    n = sum(o.count for o in ops if o.kind in ("conv", "gemm") and o.phase == "fwd")
    if n <= 0:
        return ops
    # every pass dequantises again (a diffusion sample's UNet runs once per step)
    per = max(1, work.model.passes_per_sample or 1) / n
    read, written = _dequantised_bytes(work)
    deq = Op("elementwise", "dequantise.weights", MEMORY, n, 0.0, read * per, written * per,
             WEIGHT_ONLY_MATH, "cast")  # fmt: skip
    return [*ops, deq]


def _dequantised_bytes(work: WorkloadSpec) -> tuple[float, float]:
    """(read, written) bytes of one dequantisation of a weight-only job's weights: the stored
    format in, the 16-bit copy out."""
    p = work.model.params
    return p * work.weight_bytes_per_param, p * 2.0


def _forward_ops(work: WorkloadSpec, flash_attention: bool, act_b: float) -> list[Op] | None:
    m = work.model
    b = float(work.batch_size)
    dtype = work.precision
    w_b = _op_weight_bytes(work)
    training = work.training
    if m.operators is not None and table_prices(work):
        npass = max(1, m.passes_per_sample or 1)
        diffusion = m.family == "diffusion"
        cfg = _guidance(m)
        ops = table_ops(
            m.operators,
            b * cfg,
            act_b=act_b,
            w_b=w_b,
            dtype=dtype,
            training=training,
            conv_bias=diffusion and work.runtime == "pytorch",
            unnormed_bias=training and m.family == "cnn" and work.runtime in BIAS_PASS_RUNTIMES,
            join_norm_fused=diffusion and work.runtime in INDUCTOR_RUNTIMES,
            group_norm_relayout=_group_norm_relayout(work),
            head_batch_copies=_head_batch_copies(work),
        )
        if _composite_rms_norm(work):
            ops = composite_norm.expand(ops, act_b)
        if npass > 1:
            # a diffusion sample runs the table (one UNet call) once per step
            ops = [replace(o, count=o.count * npass / cfg) for o in ops]
            # what the preset's FLOPs hold beyond those passes: the VAE decode of the batch,
            # from its own table (scaled to the FLOPs the preset counts for it), else one
            # well-shaped (cubic) GEMM
            rest = (m.gflops_per_sample or 0.0) * 1e9 * b - total(ops)
            if _has_rest(rest + total(ops), total(ops)):
                ops.extend(_decode_ops(work, rest, act_b, w_b))
        elif m.family == "cnn":
            ops = _autocast_casts(work, ops)
        return ops
    if m.family == "vit" and m.has_shape:
        ops = vit_ops(
            m, b, act_b=act_b, w_b=w_b, flash=flash_attention, training=training, dtype=dtype
        )
        # autocast casts a ViT's linear weights every inference pass as it does a CNN's
        # (training prices its casts in step_ops)
        return ops if training else _autocast_casts(work, ops)
    if m.family in ("decoder", "encoder") and m.has_shape:
        ops = transformer_ops(
            m,
            b,
            float(work.seq_len),
            act_b=act_b,
            w_b=w_b,
            flash=flash_attention,
            training=training,
            dtype=dtype,
            megatron_softmax=work.attention_kernel == MEGATRON_SOFTMAX,
        )
        if m.cross_kv_layers:
            # an encoder-decoder's encoder pass: the decoder's cross-attention K and V
            # projections run once over its output (app.domain.seq2seq)
            h = float(m.hidden_size or 0)
            t = b * float(work.seq_len)
            kv = 2.0 * float(m.kv_heads or 1) * float(m.head_dim or 0)
            cross = gemm("cross_kv_proj", t, kv, h, act_b=act_b, w_b=w_b, dtype=dtype)
            ops.append(replace(cross, count=float(m.cross_kv_layers)))
        return ops
    return None


def _guidance(m: ModelSpec) -> int:
    """Latents per image in one UNet call (``workload.guidance_latents``, which the memory
    estimate reads too)."""
    return guidance_latents(m)


# Runtimes that compile a diffusion table with TorchInductor: its convolutions and GEMMs stay
# library calls, so the joins after them (residual adds, gate products, skip concatenations) run
# as Triton kernels of their own (data/efficiency.yaml's torch-compile infer-diffusion row keeps
# role "residual"), each fused with the norm that reads its output (operators.table_ops).
INDUCTOR_RUNTIMES = frozenset({"torch-compile"})


# Runtimes whose host makes a table's ATen calls one by one (eager diffusers). A compiled one
# (torch.compile's default mode: Inductor's wrapper launches each fused kernel from Python) is
# charged per kernel it launches instead, as for CNN / ViT batch inference.
EAGER_CALL_RUNTIMES = frozenset({"pytorch"})


def table_host_calls(work: WorkloadSpec) -> float | None:
    """ATen calls an eager host makes per step of a table-priced job: the table's own count
    (views included) per network call — a diffusion sample's UNet once per step, its VAE once
    per decode of the batch. None where a table lacks the count: the kernels stand in."""
    m = work.model
    if m.operators is None or m.operators.aten_calls is None or not table_prices(work):
        return None
    if work.runtime not in EAGER_CALL_RUNTIMES:
        return None  # a compiled runtime (torch.compile's Inductor) launches its kernels
    npass = max(1, m.passes_per_sample or 1)
    calls = float(m.operators.aten_calls) * npass / _guidance(m)
    if _composite_rms_norm(work):
        calls += composite_norm.extra_calls(m.operators) * npass / _guidance(m)
    dec = m.decoder_operators
    unet = (m.operators.gflops_forward or m.operators.gflops) * npass
    if npass > 1 and dec is not None and dec.aten_calls and _has_rest(m.gflops_per_sample, unet):
        calls += dec.aten_calls  # one decode call of the batch
    return calls


def _head_batch_copies(work: WorkloadSpec) -> bool:
    """Whether the denoiser's attentions copy query, key and value into xFormers' layout first
    (``WorkloadSpec.head_batch_copies``, ``operators.head_batch_copy_op``): an eager PyTorch
    job that states diffusers' xFormers processor. The host's calls are not recounted: the
    per-call figure (the ``infer-diffusion`` row's 23 µs) was read off host-bound rows of
    exactly these stacks over the SDPA trace's count, so it already holds their few more."""
    return work.head_batch_copies and work.runtime in EAGER_CALL_RUNTIMES


def _composite_rms_norm(work: WorkloadSpec) -> bool:
    """Whether the job's QK RMSNorms run as diffusers' pre-refactor eight-kernel chain
    (``WorkloadSpec.composite_rms_norm``): an eager PyTorch job that states that stack; a
    compiler fuses the chain back into one kernel."""
    return work.composite_rms_norm and work.runtime in EAGER_CALL_RUNTIMES


def decode_host_calls(work: WorkloadSpec) -> float:
    """The part of ``table_host_calls`` the decode phase makes (the VAE decoder's ATen calls,
    once per batch); 0 where the step has no decode or its table no count."""
    m = work.model
    dec = m.decoder_operators
    if m.operators is None or dec is None or not dec.aten_calls or not table_prices(work):
        return 0.0
    if work.runtime not in EAGER_CALL_RUNTIMES:
        return 0.0  # its kernels stand in (_operator_step)
    npass = max(1, m.passes_per_sample or 1)
    unet = (m.operators.gflops_forward or m.operators.gflops) * npass
    return float(dec.aten_calls) if npass > 1 and _has_rest(m.gflops_per_sample, unet) else 0.0


def _has_rest(total: float | None, passes: float) -> bool:
    """Whether a diffusion preset's FLOPs hold more than its UNet passes (a VAE decode), beyond
    the rounding of the per-pass figure (a denoising-step workload has none)."""
    return (total or 0.0) > passes * (1.0 + 1e-3)


def _decode_ops(work: WorkloadSpec, flops: float, act_b: float, w_b: float) -> list[Op]:
    """``flops`` of a diffusion sample's decode: the VAE decoder's table on the batch (eager:
    its convolutions with their bias passes; ``step_ops`` adds their NCHW transforms), its
    counts scaled so that the ops hold ``flops``; without a table one cubic GEMM of those
    FLOPs."""
    m, dtype = work.model, work.precision
    if m.decoder_operators is None:
        side = (flops / 2.0) ** (1.0 / 3.0)
        rest = gemm("rest", side, side, side, act_b=act_b, w_b=w_b, dtype=dtype)
        return [replace(rest, phase=DECODE_PHASE)]
    upcast = fp32_decode(work)
    if upcast:
        act_b = w_b = 4.0
    ops = table_ops(
        m.decoder_operators,
        float(work.batch_size),
        act_b=act_b,
        w_b=w_b,
        dtype="fp32" if upcast else dtype,
        conv_bias=work.runtime == "pytorch",
        join_norm_fused=work.runtime in INDUCTOR_RUNTIMES,
        group_norm_relayout=_group_norm_relayout(work),
    )
    scale = flops / total(ops)
    ops = [replace(o, count=o.count * scale, phase=DECODE_PHASE) for o in ops]
    return _upcast_convs(ops) if upcast else ops


def _upcast_convs(ops: list[Op]) -> list[Op]:
    """A float32 decode's convolutions in both of cuDNN's forms (operators.UPCAST_TF32 /
    UPCAST_FP32), the GPU's pricing dropping the one it does not run (``_upcast_drop``)."""
    out: list[Op] = []
    for o in ops:
        if o.klass in (CONV, CONV_3X3) and not o.role:
            out.append(replace(o, flops=o.flops * TF32_PER_16BIT, role=UPCAST_TF32))
            out.append(replace(o, klass=CONV_NCHW, role=UPCAST_FP32))
        else:
            out.append(o)
    return out


def _upcast_drop(gpu: GpuSpec) -> str:
    """The float32 convolution form a GPU does not run: its CUDA-core one where it has TF32
    tensor cores, else the TF32 one."""
    return UPCAST_FP32 if peak_tflops(gpu, "tf32")[0] else UPCAST_TF32


def _group_norm_relayout(work: WorkloadSpec) -> bool:
    """Whether the step's group norms pay ``operators.group_norm_relayout_op``: an eager
    PyTorch inference job whose model runs channels-last (ATen's CUDA group norm runs NCHW
    only). torch.compile lowers the group norm itself (Inductor's decomposition keeps the
    layout), TensorRT and ONNX Runtime run their own NHWC group norm kernels; training is not
    priced here."""
    return work.runtime == "pytorch" and work.channels_last and not work.training


def _op_weight_bytes(work: WorkloadSpec) -> float:
    """Bytes per weight a forward GEMM reads: the stored format when serving, the 16-bit copy
    under mixed precision, 4 in fp32; under QLoRA the 16-bit copy its dequantisation op wrote
    (bitsandbytes and AutoGPTQ alike hand F.linear / torch.matmul a 16-bit weight); a runtime
    whose quantised GEMMs dequantise inside the kernel (MLX) reads the stored 4-bit weight."""
    if qlora_in_kernel(work):
        return qlora_base_width(work)
    if work.training and work.peft == "qlora":
        return 2.0
    if not work.training:
        return work.weight_bytes_per_param
    return BYTES.get(work.precision, 2.0)


def step_ops(work: WorkloadSpec, flash_attention: bool, act_b: float) -> list[Op] | None:
    """The step as operators: the forward; when training, a recomputed forward under
    gradient checkpointing, every op's backward (no weight gradients for LoRA's frozen base),
    the optimizer update over the trainable parameters and, under mixed precision, autocast's
    weight casts."""
    fwd = forward_ops(work, flash_attention, act_b)
    if fwd is None:
        return fwd
    fwd = _replicated_without_sp(work, fwd)
    nchw = runs_nchw(work)
    if not work.training:
        return fwd + nchw_transposes(fwd, w_b=_op_weight_bytes(work)) if nchw else fwd
    lora = work.peft in ("lora", "qlora")
    ops = list(fwd)
    m = work.model
    # LoRA on the last blocks only (mlx-lm's --num-layers): the blocks before the first
    # adapted one run forward alone, and nothing before them (the embedding) gets a gradient
    share = adapted_share(work) if lora else 1.0
    behind = _adapted_blocks(fwd, m, share)
    if work.gradient_checkpointing:
        ops.extend(recomputed(behind, m))
    elif work.selective_recompute:
        ops.extend(attention_core(behind))
    ops.extend(backward_ops(behind, weight_grads=not lora))
    if nchw:
        w_b = _op_weight_bytes(work)
        ops.extend(nchw_transposes(fwd, w_b=w_b, training=True))
        if work.gradient_checkpointing:  # the recomputed forward's calls
            ops.extend(nchw_transposes(fwd, w_b=w_b))
    if lora and m.is_transformer and m.has_shape:
        adapters = lora_ops(
            m, work.batch_size, work.seq_len, work.lora_rank, act_b=act_b, dtype=work.precision
        )
        adapters = _adapted_blocks(adapters, m, share)
        ops.extend(adapters * (2 if work.gradient_checkpointing else 1))
        ops.extend(backward_ops(adapters, input_grad=True))
        sums = lora_input_grad_sums(m, work.batch_size, work.seq_len, act_b=act_b)
        ops.extend(_adapted_blocks(sums, m, share))
    if _fp8_casts(work):
        table = work.efficiency
        unfused = table is not None and bool(
            table.runtime_value(work.runtime, "fp8_unfused_inputs")
        )
        ops.extend(fp8_cast_ops(m, float(work.batch_size * work.seq_len), unfused_inputs=unfused))
    ops.append(optimizer_op(_trainable(work), work.optimizer, _pure16_update_bytes(work)))
    ops = _megatron_gpu_shapes(work, ops)
    params = work.model.params
    if work.peft == "qlora" and not qlora_in_kernel(work):
        ops.extend(_qlora_dequant(work))
    elif work.precision not in ("fp32", "tf32") and not lora and not pure16(work):
        # pure 16-bit has no fp32 weight to cast: its matmuls read the bf16 parameters
        ops.append(weight_cast_op(params))
    return ops


def _adapted_blocks(ops: list[Op], model: ModelSpec, share: float) -> list[Op]:
    """``ops`` as far as backward reaches under LoRA on the last blocks (``share`` of them):
    the per-block operators (those run once per layer) on the adapted blocks alone, the
    embedding dropped (no gradient reaches it), the head and loss as they are. ``ops`` itself
    where every block is adapted."""
    if share >= 1.0:
        return ops
    layers = float(model.layers or 0)
    return [
        derive(o, count=o.count * share) if layers > 1 and o.count == layers else o
        for o in ops
        if o.role != "embed"
    ]


BYTES16 = 2.0  # a bf16 / fp16 parameter or gradient


def _pure16_update_bytes(work: WorkloadSpec) -> tuple[float, float] | None:
    """(read, written) bytes per trainable parameter of a pure 16-bit job's optimizer update,
    None for the rest (OPTIMIZER_TRAFFIC's fp32 bytes). The update reads the 16-bit parameter,
    its 16-bit gradient and each state, and writes the parameter and the states back: torch's
    AdamW and SGD keep their states in the parameter's dtype (zeros_like(p)), bitsandbytes'
    8-bit Adam its two 1-byte moments (workload.optimizer_state_bytes). AdamW 8 + 6 = 14 B
    where mixed precision's fp32 update moves 28; 8-bit Adam 10 (16); SGD 10 (20)."""
    if not pure16(work):
        return None
    state = optimizer_state_bytes(work)
    return BYTES16 + BYTES16 + state, BYTES16 + state


def _megatron_gpu_shapes(work: WorkloadSpec, ops: list[Op]) -> list[Op]:
    """A Megatron job whose stated layout gives its micro-batch: the step's GEMMs priced at the
    shapes one GPU runs (operators.megatron_shapes). Context-parallel, FSDP and MoE layouts,
    and jobs without a stated micro-batch, keep the batch's shapes."""
    lay, m = work.megatron, work.model
    if (
        work.runtime != "megatron"
        or lay is None
        or not lay.micro_batch
        or lay.cp > 1
        or lay.fsdp
        or (m.experts and m.experts > 1)
        or m.family not in ("decoder", "encoder")
    ):
        return ops
    return megatron_shapes(ops, float(work.batch_size), float(lay.micro_batch), lay.tp)


def _replicated_without_sp(work: WorkloadSpec, fwd: list[Op]) -> list[Op]:
    """A Megatron job whose stated layout runs tensor parallel without sequence parallelism:
    every TP rank runs the layer norms and residual adds on the whole activation
    (megatron.REPLICATED_ROLES), so, the step being the batch's work shared by its GPUs, those
    ops move ``tp`` times their bytes (their backward too, derived from them)."""
    lay = work.megatron
    if work.runtime != "megatron" or lay is None or lay.sequence_parallel or lay.tp <= 1:
        return fwd
    tp = float(lay.tp)
    return [
        replace(o, bytes_read=o.bytes_read * tp, bytes_written=o.bytes_written * tp)
        if o.role in megatron.REPLICATED_ROLES
        else o
        for o in fwd
    ]


def _fp8_casts(work: WorkloadSpec) -> bool:
    """Whether the step runs Transformer Engine's FP8 cast-transpose passes: an fp8 decoder or
    encoder trained under a runtime whose rows say so (data/efficiency.yaml: megatron)."""
    m = work.model
    return (
        work.precision == "fp8"
        and work.efficiency is not None
        and m.family in ("decoder", "encoder")
        and m.has_shape
        and bool(work.efficiency.runtime_value(work.runtime, "fp8_cast_transpose"))
    )


def _qlora_dequant(work: WorkloadSpec) -> list[Op]:
    """QLoRA's dequantisation of the 4-bit base, per block linear and per call: bitsandbytes
    NF4 (forward, recomputed forward, backward) or, for a GPTQ base, AutoGPTQ's PyTorch unpack
    (forward and recomputed forward). A model without block shapes: one kernel over all its
    weights per call."""
    m = work.model
    dq = GPTQ_TORCH_DEQUANT if work.quantization == "gptq" else NF4_DEQUANT
    calls = 1.0 + (1.0 if work.gradient_checkpointing else 0.0) + (1.0 if dq.in_backward else 0.0)
    if m.is_transformer and m.has_shape:
        return dequant_ops(m, dq, calls)
    p = m.params
    read, written = p * dq.read_b / dq.bandwidth_share, p * dq.write_b / dq.bandwidth_share
    return [Op("elementwise", dq.name, MEMORY, calls, 0.0, read, written, "bf16")]


# Ops of a transformer that sit outside its blocks: the embedding lookup, the final norm, the LM
# head and the loss. Activation checkpointing wraps the blocks (FSDP's apply_activation_
# checkpointing on each decoder block in llm-foundry and torchtitan; Megatron's full recompute
# of each transformer layer), so only the blocks' forward runs twice.
_OUTSIDE_BLOCKS = ("embed", "lm_head")


def recomputed(fwd: list[Op], model: ModelSpec) -> list[Op]:
    """The forward ops a gradient-checkpointed backward runs again: a transformer's blocks, or
    the whole forward of a model without blocks."""
    if not (model.is_transformer and model.has_shape):
        return fwd
    return [
        o
        for o in fwd
        if not (o.name in _OUTSIDE_BLOCKS or o.name.endswith(".final") or o.name.startswith("loss"))
    ]


def attention_core(fwd: list[Op]) -> list[Op]:
    """The forward ops Megatron's selective activation recomputation (``--recompute-granularity
    selective``, Korthikanti et al. 2022 §5) runs again in backward: the attention core only —
    QKᵀ, softmax, softmax dropout and attention over V (the unfused path's ``attention.qk`` …
    ``attention.av``), or the fused kernel that does all four; not the layout copies around
    them, not the projections."""
    return [
        o
        for o in fwd
        if o.name == "attention" or (o.name.startswith("attention.") and o.role != "copy")
    ]


def runs_nchw(work: WorkloadSpec) -> bool:
    """Whether the step's convolutions see NCHW tensors: a CNN or diffusion (UNet and VAE)
    table under an NCHW runtime (diffusers leaves its models NCHW unless the user converts
    them to channels_last), or under a torch.compile whose Inductor leaves them NCHW
    (``_inductor_keeps_nchw``), unless the workload says it runs channels-last."""
    m = work.model
    return (
        m.family in ("cnn", "diffusion")
        and m.operators is not None
        and (work.runtime in NCHW_RUNTIMES or _inductor_keeps_nchw(work))
        and not work.channels_last
        and table_prices(work)
    )


# PyTorch releases from which Inductor runs an NCHW model's convolutions channels-last
# (GraphLowering.decide_layout_opt): CNN tables from 2.1, whose layout optimisation (PyTorch PR
# #99773, mid-2023) skips a graph with any 3×3 convolution of at least twice as many input as
# output channels ("is_in_out_channel": pytorch_unet among the models it names), which every
# Stable Diffusion UNet has (its up blocks' 2560 → 1280); diffusion UNets from 2.2, whose
# inference heuristic weighs each convolution class's measured channels-last speed-up instead
# (PR #114600, 2023-11: "The motivating model here was SDXL which now hits channels last and
# improves 10%").
INDUCTOR_CHANNELS_LAST = {"cnn": (2, 1), "diffusion": (2, 2)}


def _inductor_keeps_nchw(work: WorkloadSpec) -> bool:
    """A torch.compile job under a stated PyTorch release (``WorkloadSpec.torch_version``;
    unstated: a current one) older than ``INDUCTOR_CHANNELS_LAST`` for its family: Inductor
    lowers its convolutions to cuDNN in the model's own NCHW layout, so cuDNN transforms
    around each tensor-core convolution as under eager PyTorch."""
    first = INDUCTOR_CHANNELS_LAST.get(work.model.family)
    release = llm_step._release(work.torch_version)
    return (
        work.runtime == "torch-compile"
        and first is not None
        and release is not None
        and (release < first)
    )


def single_gpu(
    gpu: GpuSpec,
    work: WorkloadSpec,
    *,
    framework: str = "pytorch",
    calibration: Calibration | None = None,
    flash_attention: bool = True,
    backend: str | None = None,
) -> OneGpu:
    if seq2seq.is_seq2seq_inference(work):
        return _seq2seq_step(gpu, work, framework, calibration, flash_attention, backend)
    on = _on_gpu(gpu, work, framework, calibration, backend)
    asked = work
    if on.prof.attention == UNFUSED_ATTENTION:
        work = _unfused_attention(work)
    flash_attention = flash_attention or on.prof.attention == "fused"
    job = _step_job(work, flash_attention, on.act_b)
    if job.ops is not None and on.rates is not None:
        job = _autotuned_nchw(on, work, job)
        # only a job with serial host calls reads the eager figure (most have none)
        eager_us = _eager_host_us(gpu, asked, on) if job.serial_calls > 0 else 0.0
        return _operator_step(on, job, on.rates, eager_us)
    traffic = job.traffic * on.prof.traffic
    t_comp = seconds(job.flops, on.split)
    host = 0.0 if on.host_bw is None else job.host_bytes / (on.host_bw * 1e9)
    t_wmem = job.param_bytes / on.bw
    t_act = traffic / on.bw
    overhead = job.kernels * on.prof.kernel_us * 1e-6
    # max(max(t_comp, t_wmem) + t_act + overhead, host) as max picks (the first unless a later
    # one is larger), without its calls
    step = (t_wmem if t_wmem > t_comp else t_comp) + t_act + overhead
    step = host if host > step else step
    # positional, in field order: one per card and job variant
    return OneGpu(
        on.eff, on.backend, job.wbytes, t_comp, on.mode, t_wmem, t_act, overhead, host, step,
        t_state=job.state_bytes / on.bw, t_opt=job.state_bytes / on.bw, opt_in_wmem=True,
    )  # fmt: skip


# A runtime row's ``attention`` for a runtime that brings its own attention but no fused
# kernel on the GPU: the whole score matrix between two batched GEMMs, with one
# scale-mask-softmax kernel over it, which no fusion folds away (``_build_on_gpu`` keeps the
# "softmax" role). TensorRT's BERT plugin on Volta: the UnfusedMHARunner (data/efficiency.yaml,
# trt-bert-mha-sm); the LLM step reads the same word (llama.cpp without -fa).
UNFUSED_ATTENTION = llm_step.UNFUSED_ATTENTION


def _unfused_attention(work: WorkloadSpec) -> WorkloadSpec:
    """``work`` with its attention priced as ``UNFUSED_ATTENTION`` says: the operators'
    ``fused_softmax`` path (MEGATRON_SOFTMAX's shape; an inference job runs no dropout in it),
    kept on the spec so that every GPU of a request reads one operator list."""
    if work.attention_kernel == MEGATRON_SOFTMAX:
        return work
    key = ("unfused-attention",)
    hit = work.derived.get(key)
    if not isinstance(hit, WorkloadSpec):
        hit = work.derived[key] = replace(work, attention_kernel=MEGATRON_SOFTMAX)
    return hit


def _seq2seq_step(
    gpu: GpuSpec,
    work: WorkloadSpec,
    framework: str,
    calibration: Calibration | None,
    flash_attention: bool,
    backend: str | None,
) -> OneGpu:
    """An encoder-decoder's inference of one batch (app.domain.seq2seq): the encoder's pass
    over its positions on the operator path, as an encoder's batch inference is priced (its
    eager host dispatch per op included), with the decoder's cross-attention K/V projections;
    then ``output_tokens`` decoder steps from the one LLM step function (llm_step) — the
    weights and the self-attention cache at the mean context read per step, the runtime's
    kernel gaps and, for an eager loop, its host dispatch per layer (CUDA graphs where the
    runtime replays them) — plus each step's cross-attention: the encoder's cached K/V read
    (or its math, whichever is longer) and its kernels, and under beam search the caches'
    reordering (seq2seq.BEAM_REORDER). A step takes max(GPU, host)."""
    enc_work, dec_work = seq2seq.halves(work)
    enc = single_gpu(
        gpu,
        enc_work,
        framework=framework,
        calibration=calibration,
        flash_attention=flash_attention,
        backend=backend,
    )
    eff = efficiencies(gpu, calibration)
    be = backend or (gpu.backends[0] if gpu.backends else "cuda")
    rep = llm_replica(gpu, dec_work, 1, eff, be)
    out = max(1, work.output_tokens)
    seqs = float(dec_work.batch_size)
    if rep.flops <= 0 or rep.attn_flops <= 0:
        step = math.inf
        dec = llm_step.StepTime(math.inf, "compute", math.inf, math.inf, 0.0, 0.0, 0.0, 0.0)
    else:
        dec = rep.parts(seqs, 1.0 + out / 2.0, 0.0, 0.0)
        m = work.model
        enc_len = float(seq2seq.encoder_tokens(work))
        cross_bytes = seqs * seq2seq.cross_kv_values(m, enc_len) * formats.kv_bytes(work.kv_format)
        width = float((m.num_heads or 1) * (m.head_dim or 0))
        cross_math = 4.0 * float(m.layers or 0) * width * seqs * enc_len / rep.attn_flops
        prof = llm_card(gpu, dec_work, eff, be).decode
        layers = float(m.layers or 0)
        cross_kernels = layers * seq2seq.CROSS_ATTENTION_KERNELS * prof.kernel_us * 1e-6
        cross_floor = (
            layers
            * (seq2seq.CROSS_ATTENTION_GEMMS * prof.gemm_min_us + prof.attention_min_us)
            * 1e-6
        )
        t_cross = max(cross_bytes / rep.bw, cross_math, cross_floor) + cross_kernels
        # beam search: the caches follow the beams kept after every step (seq2seq.BEAM_REORDER)
        reorder_bytes, reorder_host = 0.0, 0.0
        if work.beams > 1:
            cross_too, calls = seq2seq.beam_reorder(work.runtime)
            self_bytes = seqs * (m.kv_values(1.0 + out / 2.0) or 0.0)
            self_bytes *= formats.kv_bytes(work.kv_format)
            reorder_bytes = 2.0 * (self_bytes + (cross_bytes if cross_too else 0.0))
            reorder_host = layers * calls * prof.host_us_per_op * 1e-6
        gpu_s = dec.gpu_s + t_cross + reorder_bytes / rep.bw
        # the loop's own layer calls where counted (openai/whisper's, seq2seq.LAYER_CALLS) in
        # place of the profile's bare-loop ops per layer
        counted = seq2seq.layer_calls(work.runtime)
        fwd_host = dec.host_s
        if counted is not None and fwd_host > 0:
            fwd_host += layers * (counted - prof.ops_per_layer) * prof.host_us_per_op * 1e-6
        fwd_host += reorder_host
        # the search's Python after the step's device sync: the GPU idles through it
        post = seq2seq.search_calls(work.runtime, seqs, work.beams) * prof.host_us_per_op * 1e-6
        host_s = fwd_host + post
        step = max(gpu_s, fwd_host) + post + rep.scheduler_s
        dec = replace(
            dec,
            seconds=step,
            gpu_s=gpu_s,
            compute_s=dec.compute_s + cross_math,
            memory_s=dec.memory_s + (cross_bytes + reorder_bytes) / rep.bw,
            launch_s=dec.launch_s + cross_kernels,
            host_s=host_s,
        )
    host_bound = dec.host_s > dec.gpu_s
    return OneGpu(
        enc.eff,
        enc.backend,
        _weight_bytes(work),
        enc.t_comp + out * dec.compute_s,
        enc.mode,
        enc.t_wmem + out * dec.memory_s,
        enc.t_act,
        enc.overhead + out * dec.launch_s,
        enc.host,
        enc.step_s + out * dec.seconds,
        enc.dispatch + (out * dec.host_s if host_bound else 0.0),
        token_s=dec.seconds,
        first_token_s=enc.step_s + dec.seconds,
    )


# A cuDNN convolution call costs the host several times what an op that launches one plain
# kernel does: descriptors, the algorithm (autotune cache) lookup and a workspace per call, where
# an element-wise op is an executor step and a launch. An eager CNN forward's profile reads
# conv2d ~112 µs, relu_ ~26 µs of CPU per call (pytorch-conv-profile, data/efficiency.yaml):
# a convolution counts 112 / 26 host-op equivalents. Applied where the runtime issues its
# kernels in order (queued_dispatch: TensorFlow's executor, graph mode and XLA, whose
# infer-cnn host figures were solved per op-equivalent with it). DLE's TF1 tables show it: at
# batch 1, SE-ResNeXt-101's 33 squeeze-excitations (a mean, two dense MatMuls, five
# element-wise ops each, no convolution) add 2-18 % under XLA to ResNeXt-101's 9-18 ms,
# not the 47 % more a per-kernel figure charged.
CONV_CALL_WEIGHT = 112.0 / 26.0


def _autotuned_nchw(on: _OnGpu, work: WorkloadSpec, job: _StepJob) -> _StepJob:
    """The step as cuDNN's autotuner runs an NCHW network's convolutions on this GPU. The
    autotuner times each algorithm's whole call and keeps the fastest
    (cudnnFindConvolutionForwardAlgorithm; PyTorch under cudnn.benchmark, TensorFlow by
    default: the runtime rows that set ``winograd_3x3``), and a tensor-core call includes the
    NCHW↔NHWC transforms cuDNN runs inside it (``operators.nchw_transposes``). cuDNN's implicit-
    GEMM algorithms also take NCHW tensors directly, on the CUDA cores in FP32 math (PyTorch
    gives a 16-bit convolution an FP32 descriptor: ATen cudnn/Descriptors.h), with no
    transforms. So a convolution runs there where that is the faster call: priced as the engine
    prices any CUDA-core convolution (the FP32 vector rate, the same tile and K-pipeline
    efficiency, no tensor-core K step to pad), against the tensor-core kernel plus its
    transforms. Where the FP32 rate is a small share of the
    16-bit tensor rate (A100 1/16, V100 and T4 1/8) the tensor path wins; on GeForce Ampere,
    Ada and Blackwell, whose 16-bit rate with FP32 accumulation is twice the FP32 one, the
    transforms of a memory-bound convolution can cost more than that. Role "layout" ops only
    (a 3×3 stride-1 convolution's choice is the Winograd class's, ``class_rates``); inference
    only (a training step's transforms are counted per convolution over its three calls).
    ``job`` itself where no convolution moves."""
    rates = on.rates
    pairs = job.nchw_pairs  # None for a training step
    if pairs is None or not pairs.names or not on.prof.winograd_3x3 or "layout" in on.drop:
        return job
    if rates is None or not on.vector_rate or job.ops is None:
        return job
    won = _moved_to_cores(pairs, on, rates)
    if not len(won):
        return job
    key = frozenset(pairs.names[i] for i in won.tolist())
    hit = job.autotuned.get(key)
    if hit is None:
        hit = job.autotuned[key] = _moved_job(job, pairs, won, on.drop)
    return hit


def _moved_job(
    job: _StepJob, pairs: _NchwPairs, won: NDArray[np.intp], fuse: tuple[str, ...]
) -> _StepJob:
    """``job`` with the convolutions of the pairs ``won`` in class CONV_NCHW and their
    transforms gone (every convolution and transform of their names), and its columns under
    ``fuse`` taken from ``job``'s (kernels.reclassed: a catalog's GPUs move a few sets of
    convolutions each, and each set's columns would otherwise be built from its ops again)."""
    assert job.ops is not None
    named = np.zeros(len(pairs.unique) + 1, dtype=np.bool_)  # the last: no pair's name
    named[pairs.name_of[won]] = True
    moved, dropped = named[pairs.conv_of], named[pairs.layout_of]
    ops = list(job.ops)
    for i in np.flatnonzero(moved).tolist():
        core = job.on_cores.get(i)
        if core is None:
            core = job.on_cores[i] = derive(ops[i], klass=CONV_NCHW)
        ops[i] = core
    kept = tuple(compress(ops, (~dropped).tolist()))
    dec = [o for o in kept if o.phase == DECODE_PHASE]
    cols = job.columns.get(fuse)
    if cols is None:
        cols = job.columns[fuse] = op_columns(job.ops, fuse)
    twins = job.twins.get(fuse)
    if twins is None:
        twins = job.twins[fuse] = twinned(cols, CONV_NCHW)
    return replace(
        job,
        ops=kept,
        library_kernels=_inside_kernels(kept),
        decode_library_kernels=_inside_kernels(dec),
        arrays={},
        decode_arrays={},
        columns={fuse: reclassed(cols, moved, dropped, CONV_NCHW, twins)},
        twins={},
        on_cores={},
        autotuned={},
        nchw_pairs=None,
    )


@dataclass(frozen=True, slots=True)
class _NchwPairs:
    """A step's convolutions that cuDNN runs with NCHW transforms around them, each with its
    transform (``_autotuned_nchw``): GPU-independent, so built once per step and compared on
    each GPU as arrays."""

    names: tuple[str, ...]
    klass: NDArray[np.intp]  # each convolution's class, into CLASSES
    # each convolution's shape (kernels.column_efficiencies'), then its twin's in class CONV_NCHW
    shapes: ShapeColumns
    flops: NDArray[np.float64]
    bytes: NDArray[np.float64]
    layout_bytes: NDArray[np.float64]  # its transforms' (MEMORY ops: no FLOPs, e = 1)
    # the convolutions' names once each, each pair's index into them, and for each op of the
    # step the index of its name among them where it is a convolution (``conv_of``) or a
    # transform (``layout_of``) of one of them, else len(unique)
    unique: tuple[str, ...]
    name_of: NDArray[np.intp]
    conv_of: NDArray[np.intp]
    layout_of: NDArray[np.intp]


def _nchw_pairs(ops: Sequence[Op]) -> _NchwPairs:
    convs = {o.name: o for o in ops if o.kind == "conv"}
    found = [
        (convs[t.name.removesuffix(".nchw")], t)
        for t in ops
        if t.role == "layout" and t.name.removesuffix(".nchw") in convs
    ]
    assert all(t.klass == MEMORY and not t.flops for _, t in found)

    def col(xs: list[float]) -> NDArray[np.float64]:
        return np.array(xs, dtype=np.float64)

    def ids(names: list[str]) -> NDArray[np.intp]:
        return np.array([unique.get(n, len(unique)) for n in names], dtype=np.intp)

    unique = {n: i for i, n in enumerate(dict.fromkeys(c.name for c, _ in found))}
    return _NchwPairs(
        names=tuple(c.name for c, _ in found),
        unique=tuple(unique),
        name_of=ids([c.name for c, _ in found]),
        conv_of=ids([o.name if o.kind == "conv" else "" for o in ops]),
        layout_of=ids([o.name.removesuffix(".nchw") if o.role == "layout" else "" for o in ops]),
        klass=np.array([CLASS_INDEX[c.klass] for c, _ in found], dtype=np.intp),
        shapes=shape_columns(
            [(c.klass, c.m, c.n, c.k, c.batch, c.in_channels) for c, _ in found]
            + [(CONV_NCHW, c.m, c.n, c.k, c.batch, c.in_channels) for c, _ in found]
        ),
        flops=col([c.flops for c, _ in found]),
        bytes=col([c.bytes for c, _ in found]),
        layout_bytes=col([t.bytes for _, t in found]),
    )


def _moved_to_cores(pairs: _NchwPairs, on: _OnGpu, rates: Sequence[float]) -> NDArray[np.intp]:
    """The pairs (their indices) whose convolution's CUDA-core call beats the tensor-core one
    plus its transforms on this GPU: ``kernels.op_time`` of each as arrays (the same
    operations, so the same doubles); the CUDA-core twin is the convolution in class
    CONV_NCHW, whose shape efficiency pads no tensor-core K step."""
    launch = on.prof.kernel_us * 1e-6
    sms, tc, bal = on.sms, on.tensor_conv, on.balance
    per_class = np.array(rates, dtype=np.float64)
    e = column_efficiencies(pairs.shapes, sms, tc, bal)
    e_tensor, e_cores = e[: len(pairs.names)], e[len(pairs.names) :]
    memory = pairs.bytes / on.bw
    tensor = np.maximum(pairs.flops / (per_class[pairs.klass] * e_tensor), memory) + launch
    cores = np.maximum(pairs.flops / (per_class[CLASS_INDEX[CONV_NCHW]] * e_cores), memory) + launch
    layout = pairs.layout_bytes / on.bw + launch
    return np.flatnonzero(cores < tensor + layout)


def _inside_kernels(ops: Sequence[Op]) -> tuple[float, ...]:
    """Launches per role of LAYOUT_ROLES that cuDNN makes inside another op's call."""
    return tuple(math.fsum(o.count for o in ops if o.role == r) for r in LAYOUT_ROLES)


def _host_weight(o: Op) -> float:
    """Host-op equivalents of one issued op (``CONV_CALL_WEIGHT`` for a convolution)."""
    return CONV_CALL_WEIGHT if o.kind == "conv" else 1.0


def _queued_step(
    on: _OnGpu, job: _StepJob, rates: tuple[float, ...], dispatch: float, stretch: float
) -> float:
    """The step's busy time when the host issues its kernels in order into one stream
    (``RuntimeProfile.queued_dispatch``): kernels.fifo_finish over the kernels the GPU runs —
    each op's roofline time as ``step_time`` prices it, × ``stretch`` (a power-capped board's
    energy bound spread over them) — with ``dispatch`` shared over the kernels the host issues
    by their host-op equivalents (``_host_weight``: a convolution's cuDNN call weighs more;
    cuDNN's NCHW layout transforms run inside a convolution's call: no host time of their
    own). Weight casts (role "cast") are issued first."""
    drop = set(on.drop)
    kept = (o for o in job.ops or () if not (o.role and o.role in drop))
    runs = issue_order(kept, ("cast",), LAYOUT_ROLES)
    issuing = sum(_host_weight(o) for run in runs for o in run if o.role not in LAYOUT_ROLES)
    per_call = dispatch / issuing if issuing else 0.0
    launch = on.prof.kernel_us * 1e-6
    timed: dict[int, tuple[float, float]] = {}

    def kernel(o: Op) -> tuple[float, float]:
        hit = timed.get(id(o))
        if hit is None:
            e = shape_efficiency(o, on.sms, on.tensor_conv, on.balance)
            work = o.flops / e if o.flops else 0.0
            gpu_s = max(work / rates[CLASS_INDEX[o.klass]], o.bytes / on.bw) + launch
            host_s = 0.0 if o.role in LAYOUT_ROLES else per_call * _host_weight(o)
            hit = timed[id(o)] = (host_s, gpu_s * stretch)
        return hit

    return fifo_finish(kernel(o) for run in runs for o in run)


def _operator_step(
    on: _OnGpu, job: _StepJob, rates: tuple[float, ...], eager_host_us: float
) -> OneGpu:
    """``single_gpu`` as a sum over the step's operators (app.domain.kernels).
    ``eager_host_us``: host µs per eager ATen call (``_eager_host_us``), read by
    ``job.serial_calls`` alone."""
    fuse = on.drop
    cols = job.columns.get(fuse)
    if cols is None:
        cols = job.columns[fuse] = op_columns(job.ops or (), fuse)
    # the shapes' wave fill depends on the GPU's SM count: one set of columns per count (and
    # per tensor-core use and balance where the step's shapes read them); the decode phase's
    # ops are some of the step's, so they read no more of the GPU
    key = (fuse, *gpu_key(cols.shape_cols, on.sms, on.tensor_conv, on.balance))
    arrs = job.arrays.get(key)
    if arrs is None:
        arrs = job.arrays[key] = arrays_of(cols, on.sms, on.tensor_conv, on.balance)
    st = step_time(arrs, rates, on.bw, on.prof.kernel_us * 1e-6)
    total, compute = st.total, st.compute
    if on.power_cap_flops:
        # a power-capped board: the step's energy — its FLOPs at the capped rate and its bytes
        # streamed — bounds it from below; kernels that leave SMs idle (a small batch) draw
        # less, hold their clock, and are not slowed
        energy = (
            arrs.flops / on.power_cap_flops + sum(c.bytes_below[-1] for c in arrs.classes) / on.bw
        )
        if energy > total:
            compute, total = compute + energy - total, energy
    host = 0.0 if on.host_bw is None else job.host_bytes / (on.host_bw * 1e9)
    # an eager runtime dispatches every op from the host: throughput cannot beat it — the
    # table's ATen calls where it counts them (views included; cuDNN's layout transforms run
    # inside a convolution's call), else every kernel but those layout transforms
    kept = zip(LAYOUT_ROLES, job.library_kernels, strict=True)
    inside = math.fsum(n for r, n in kept if r not in fuse)
    launched = arrs.kernels - inside
    calls = launched if job.host_calls is None else job.host_calls
    if job.host_calls is None and job.layer_calls and on.prof.ops_per_layer:
        # eager decoder training whose runtime row counts host calls per block: its forward
        # calls, rerun and backed by autograd nodes, plus the adapters' (_train_host_calls)
        calls = on.prof.ops_per_layer * job.layer_calls + job.adapter_calls
    if on.prof.queued_dispatch and job.host_calls is None:
        # each convolution's cuDNN call counts CONV_CALL_WEIGHT host-op equivalents
        calls += (CONV_CALL_WEIGHT - 1.0) * job.conv_calls
    dispatch = calls * on.host_us * 1e-6
    busy = max(total, dispatch)
    if on.prof.queued_dispatch and dispatch > 0.0 and not job.decode and st.total > 0.0:
        # kernels issued in order into one stream: none starts before the host issues it (the
        # energy bound stretches each kernel alike)
        busy = _queued_step(on, job, rates, dispatch, total / st.total)
    # a harness that copies the batch in before the step's kernels can start (serial_input_copy)
    # adds the copy; else it overlaps with the previous step's compute
    step = busy + host if on.prof.serial_input_copy else max(busy, host)
    dec_gpu = dec_disp = 0.0
    if job.decode:
        # a diffusion pipeline: the denoising loop, then the VAE decode, each bound apart
        darrs = job.decode_arrays.get(key)
        if darrs is None:
            dec_ops = [o for o in job.ops or () if o.phase == DECODE_PHASE]
            darrs = job.decode_arrays[key] = prepare(
                dec_ops, fuse, on.sms, on.tensor_conv, on.balance
            )
        raw = step_time(darrs, rates, on.bw, on.prof.kernel_us * 1e-6).total
        # the step's energy bound (a power-capped board) stretches the decode alike
        dec_gpu = raw * total / st.total if st.total > 0 else raw
        dec_calls = job.decode_calls
        if job.host_calls is None:
            # the decode phase's own launches: its kernels but cuDNN's layout transforms
            kept = zip(LAYOUT_ROLES, job.decode_library_kernels, strict=True)
            dec_calls = darrs.kernels - math.fsum(n for r, n in kept if r not in fuse)
        dec_disp = dec_calls * on.host_us * 1e-6
        step = phased_step(total - dec_gpu, dispatch - dec_disp, dec_gpu, dec_disp)
        step = max(step, host)
    # host work a diffusion pipeline does with its GPU idle (prompt encoders of a compiled job,
    # the scheduler after a per-step sync): it adds, whatever bound the rest
    serial = job.serial_calls * eager_host_us * 1e-6 + job.serial_s
    step += serial
    eff = on.op_eff or on.eff
    gpu = (compute, on.mode, 0.0, st.memory, st.launch)
    kept_state = [o for o in job.state_ops if o.role not in fuse]
    state = math.fsum(o.count * o.bytes for o in kept_state) / on.bw
    opt = math.fsum(o.count * o.bytes for o in kept_state if o.phase == "opt") / on.bw
    return OneGpu(
        eff, on.backend, job.wbytes, *gpu, host, step, dispatch, dec_gpu, dec_disp,
        serial_copy=on.prof.serial_input_copy and host > 0.0, t_state=state, t_opt=opt,
        serial=serial,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class _OnGpu:
    """What ``single_gpu`` reads of a GPU for a job's precision, runtime, regime and framework
    under one calibration: the same for every job and batch with them, so kept with the GPU's
    spec (``_on_gpu``, ``GpuSpec.derived``) rather than worked out for every card of every
    request."""

    eff: Efficiency
    backend: str
    prof: RuntimeProfile
    bw: float  # bytes/s the runtime streams
    act_b: float  # bytes per activation element
    split: Split
    mode: str
    host_bw: float | None
    # FLOP/s per kernel class for the operator path (app.domain.kernels.CLASSES); None where a
    # datapath the job needs has no peak
    rates: tuple[float, ...] | None = None
    # ``eff`` with the kernel profiles' GEMM efficiencies and their basis (operator_efficiency)
    op_eff: Efficiency | None = None
    sms: int | None = None  # the GPU's SM count (wave quantisation); None: unknown
    # The average tensor FLOP rate a power-capped board sustains (``_sustained_clock`` × its
    # boost-clock GEMM rate); None: no cap known
    power_cap_flops: float | None = None
    # roles of the step's ops that do not run here: what the runtime fuses, and the NCHW layout
    # transforms where the convolutions do not run on tensor cores (``_nchw_transforms_run``)
    drop: tuple[str, ...] = ()
    # False where the convolutions run on the CUDA cores (``_cuda_core_convs``): no tensor-core
    # K step for a narrow input to pad (kernels.CHANNEL_ALIGN)
    tensor_conv: bool = True
    # host µs per dispatched op (RuntimeProfile.host_us_per_op)
    host_us: float = 0.0
    # the attention matmuls' rate ÷ the FP32 peak: the attention softmax's cost beside its
    # matmuls (kernels.softmax_fill; llm_step.softmax_balance); None: not priced
    balance: float | None = None
    # the FP32 CUDA-core rate (FLOP/s) a convolution moved off the tensor cores runs at
    # (_autotuned_nchw); None where the GPU's FP32 peak is unknown
    vector_rate: float | None = None


def _on_gpu(
    gpu: GpuSpec,
    work: WorkloadSpec,
    framework: str,
    calibration: Calibration | None,
    backend: str | None,
) -> _OnGpu:
    # the GPU's own store (GpuSpec.derived): the same for every request with this backend,
    # runtime, precision, phase, family and kernels, checked against the table and the
    # calibration it came from
    m = work.model
    key = (
        "on_gpu",
        backend,
        work.runtime,
        work.precision,
        work.training,
        m.family,
        work.allow_tf32_matmul,
        framework,
        work.attention_kernel,
    )
    table = work.efficiency
    hit = gpu.derived.get(key)
    if isinstance(hit, tuple) and hit[0] is table and hit[1] is calibration:
        kept: _OnGpu = hit[2]
        return kept
    out = _build_on_gpu(gpu, work, framework, calibration, backend)
    gpu.derived[key] = (table, calibration, out)
    return out


def _build_on_gpu(
    gpu: GpuSpec,
    work: WorkloadSpec,
    framework: str,
    calibration: Calibration | None,
    backend: str | None,
) -> _OnGpu:
    eff = efficiencies(gpu, calibration)
    be = backend or (gpu.backends[0] if gpu.backends else "cuda")
    prof = profile_for(gpu, work, be, phase_regime(work))
    bw = gpu.memory_bandwidth_gbs * 1e9 * _memory_efficiency(eff, prof)
    act_b = 4.0 if work.precision in ("fp32", "tf32") else 2.0
    if not work.training and work.precision in prof.native:
        act_b = 1.0  # int8/fp8 engines keep activations in 8 bits between layers
    split, mode = compute_split(gpu, work, framework, eff, prof)
    if split is not None and work.training:
        # the whole-model rate is the best-shape rate × its utilisation: the same share of it
        best = compute_split(gpu, work, framework, eff, prof, per_operator=True)[0]
        split = _held(split, _sustained_shares(gpu, work, mode, best))
    op_eff = operator_efficiency(eff, mode)
    op_split = (
        compute_split(gpu, work, framework, op_eff, prof, per_operator=True)[0]
        if has_operators(work.model)
        else None
    )
    rates, cap, attn_acc = None, None, 1.0
    vector: float | None = None
    if op_split is not None:
        vector = gpu.fp32_tflops * 1e12 * eff.compute["fp32"] if gpu.fp32_tflops else None
        gemm_rate = 1.0 / seconds(1.0, op_split)  # at the boost clock
        # a training step's GEMMs at what the board holds over a long run (class_rates: the
        # GEMM and convolution classes only)
        held = _held(op_split, _sustained_shares(gpu, work, mode, op_split))
        held_rate = 1.0 / seconds(1.0, held)
        factor = _flash_factor(op_eff, mode)
        # A profiled attention rate is what the GPU's best kernel reached (the H100 profile's
        # is FlashAttention-3's 740 TFLOPS): no prior cap under it, but the runtime's own
        # kernel caps it where the runtime row states one (flash_peak_share: PyTorch's SDPA and
        # flash-attn 2 run FlashAttention-2 on Hopper, 35 % of peak, not FlashAttention-3)
        fcap = _flash_cap(gpu, op_eff, prof, mode)
        if factor and fcap is not None and fcap < gemm_rate * factor:
            # the runtime's kernel prices attention, not the profiled one: say so
            op_eff, factor = replace(op_eff, attention=None), None
        # TensorRT's FP16 tactics accumulate in FP16 where that is faster (GeForce), and its
        # fused MHA kernels too
        gain = llm_step.fp16_accumulate_rate_gain(gpu) if mode == "fp16" else 1.0
        acc = gain if prof.fp16_accumulate else 1.0
        attn_acc = gain if prof.attention_fp16_accumulate else 1.0
        # the softmax weighs against the matmuls' peak, which FP16 accumulate doubles
        # (llm_step.fused_attention's balance alike), whatever share of it they hold
        peak_gain = llm_step.fp16_accumulate_gain(gpu) if mode == "fp16" else 1.0
        attn_peak = peak_gain if prof.attention_fp16_accumulate else 1.0
        # the runtime's GEMMs and fused attention at the share of the full GEMM rate its kernel
        # library issues at on this architecture (TensorRT's Ampere-built tactics on Hopper);
        # its convolutions keep their own share of the full rate
        tshare = tensor_share(prof, mode)
        rates = class_rates(
            gemm_rate * tshare,
            vector,
            factor,
            fcap,
            _attention_kernel(gpu, work, be),
            prof.winograd_3x3,
            held_rate / gemm_rate,
            _conv_share(prof, mode) / tshare,
            acc,
            attn_acc,
        )
        # the softmax's vector work beside attention matmuls that run at that share
        attn_acc = attn_peak * tshare
        clock = _sustained_clock(gpu, op_eff, prof, mode)
        cap = gemm_rate * clock if clock < 1.0 else None
        if clock < 1.0 and phase_regime(work) in SUSTAINED_CLOCK_REGIMES:
            # a denoising loop holds the board at its power limit for seconds: its SMs run at
            # the clock the TDP feeds, as an LLM prompt's do (llm_step.sustained_clock), not
            # at boost with the power only an energy bound on the step
            rates = tuple(r * clock for r in rates)
    host = host_bandwidth_gbs(gpu, calibration)
    drop: tuple[str, ...] = prof.fuse
    if prof.attention == UNFUSED_ATTENTION:
        # the runtime's softmax over the score matrix is a kernel of its own
        drop = tuple(r for r in drop if r != "softmax")
    if not _nchw_transforms_run(gpu, be, mode) or (prof.nhwc_16bit and mode in _HALF_MODES):
        drop = (*drop, *LAYOUT_ROLES)
    elif rates is not None and rates[_CONV3] > rates[_CONV]:
        # the autotuner runs the 3×3 convolutions as Winograd on the CUDA cores, which read
        # NCHW directly: no transforms around those
        drop = (*drop, "layout_3x3")
    if work.model.family == "diffusion":
        # which of a float32 decode's convolution forms this GPU runs (family, not preset:
        # the key this is kept under, _on_gpu, holds no preset; a job without such ops
        # drops nothing by it)
        drop = (*drop, _upcast_drop(gpu))
    tensor_conv = not _cuda_core_convs(gpu, be, mode)
    host_us = prof.host_us_per_op
    return _OnGpu(
        eff, be, prof, bw, act_b, split, mode, host, rates, op_eff, gpu.sm_count, cap, drop,
        tensor_conv, host_us, llm_step.softmax_balance(gpu, mode, attn_acc),
        vector,
    )  # fmt: skip


def _eager_host_us(gpu: GpuSpec, work: WorkloadSpec, on: _OnGpu) -> float:
    """Host µs per ATen call of the eager runtime in the job's regime: the job's own where it
    is eager, else the ``pytorch`` row's (a compiled job's eager parts: diffusion_host). Only
    a job with serial host calls asks, so it is looked up when asked. Without an efficiency
    table profile_for answers EAGER for either runtime."""
    if work.model.family != "diffusion" or work.runtime in EAGER_CALL_RUNTIMES:
        return on.prof.host_us_per_op  # read by diffusion_host's work alone
    eager = replace(work, runtime="pytorch")
    return profile_for(gpu, eager, on.backend, phase_regime(eager)).host_us_per_op


_CONV, _CONV3 = CLASS_INDEX[CONV], CLASS_INDEX[CONV_3X3]
_HALF_MODES = frozenset(vocab.AMP_PRECISIONS)  # the 16-bit datapaths

# Datapaths whose cuDNN convolutions run on tensor cores: 16-bit on compute capability ≥ 7.0
# (Volta, Turing and later), TF32 on ≥ 8.0 (the mode says so only where the GPU has it).
_TENSOR_CORE_MODES = ("fp16", "bf16", "tf32", "fp32+tf32")


def _conv_share(prof: RuntimeProfile, mode: str) -> float:
    """The tensor-core convolutions' rate ÷ the GEMM rate (kernels.class_rates' conv_share):
    the runtime row's ``conv_peak_share`` for a 16-bit job where it sets one (Ampere-built
    implicit-GEMM convolutions on Hopper: half its dense peak), else 1."""
    share = prof.conv_peak_share
    return share if share and mode in _HALF_MODES else 1.0


def _nchw_transforms_run(gpu: GpuSpec, backend: str, mode: str) -> bool:
    """Whether cuDNN transforms NCHW tensors around this GPU's convolutions: only for its
    tensor-core kernels (NHWC); FP32 CUDA-core kernels (Pascal, or Turing in FP32) read NCHW
    directly, and other vendors' libraries are not modelled as transforming."""
    if backend != "cuda" or gpu.vendor != "nvidia" or mode not in _TENSOR_CORE_MODES:
        return False
    try:
        major = int((gpu.compute_capability or "0").split(".")[0])
    except ValueError:
        return False
    return major >= 7


def _cuda_core_convs(gpu: GpuSpec, backend: str, mode: str) -> bool:
    """Whether cuDNN runs this GPU's convolutions on the CUDA cores: an NVIDIA GPU on the plain
    FP32 datapath (FP32 before Ampere, or with TF32 math off), or any datapath before Volta (no
    tensor cores). Other vendors' libraries, and 8-bit modes, keep the tensor-core padding."""
    if backend != "cuda" or gpu.vendor != "nvidia":
        return False
    try:
        major = int((gpu.compute_capability or "0").split(".")[0])
    except ValueError:
        return False
    return mode == "fp32" or 0 < major < 7


def _attention_kernel(gpu: GpuSpec, work: WorkloadSpec, backend: str) -> str:
    """The job's fused attention kernel (a key of ``kernels.ATTENTION_KERNEL_SLOWDOWN``, or ""
    for FlashAttention-2): the one it names, else "flash1" — a first-generation kernel
    (FlashAttention v1 or the CUTLASS memory-efficient kernel) — for any SDPA stack on an
    NVIDIA GPU below sm80 — PyTorch's flash backend only runs from sm80 ("Flash attention only
    supports gpu architectures in the range [sm80, ...]", aten/.../transformers/cuda/sdp_utils.cpp),
    so a V100 or T4 gets the memory-efficient kernel."""
    if work.attention_kernel:
        return work.attention_kernel
    return llm_step.sdpa_attention_kernel(gpu, work.runtime, backend)


def _flash_factor(eff: Efficiency, mode: str) -> float | None:
    """The attention forward's rate ÷ the GEMM rate from the kernel profiles: both are
    efficiencies against the same 16-bit peak, so their ratio; only for 16-bit jobs (an
    fp32 or 8-bit job's attention keeps the prior factor)."""
    if eff.attention is None or mode not in ("bf16", "fp16"):
        return None
    gemm = eff.compute.get(mode)
    return eff.attention.efficiency / gemm if gemm else None


def _attention_basis(one: OneGpu, work: WorkloadSpec) -> str:
    """What the operator path's attention kernels rest on ("" where the prior factor priced
    them: no operator list, a non-16-bit datapath, or no attention profile)."""
    kb = one.eff.attention
    if kb is None or one.mode not in ("bf16", "fp16") or not has_operators(work.model):
        return ""
    return kb.basis


def _flash_cap(gpu: GpuSpec, eff: Efficiency, prof: RuntimeProfile, mode: str) -> float | None:
    """FLOP/s the flash-attention forward reaches at most on this GPU. Attention runs in 16
    bits whatever the GEMMs' datapath: FP8 training recipes keep it there (Transformer Engine's
    recipes default to fp8_dpa=False), so an fp8 job's attention runs at the 16-bit rate, not at
    FLASH_FWD_FACTOR × its fp8 GEMMs. The 16-bit rate is the runtime profile's share of the
    16-bit dense peak where it sets one (FlashAttention-2 on Hopper), else the kernel profile's
    attention efficiency, else the GEMM-relative factor on the 16-bit GEMM rate; at the boost
    clock, as every class rate (a power cap applies to the whole step). None for a 16-bit job
    without a profile share (class_rates' own factor applies) or without a 16-bit peak."""
    share = prof.flash_peak_share
    if mode in ("bf16", "fp16"):
        if not share:
            return None
        half, key = _half_peak(gpu, mode)
    elif mode == "fp8":
        half, key = _half_peak(gpu, "bf16")
        if key != "fp32" and not share:
            att = eff.attention.efficiency if eff.attention is not None else None
            share = att or eff.compute[key] * FLASH_FWD_FACTOR
    else:
        return None
    if not half or key == "fp32" or not share:
        return None
    return half * 1e12 * share


def _sustained_shares(
    gpu: GpuSpec, work: WorkloadSpec, mode: str, best: Split
) -> tuple[float, ...] | None:
    """Per part of ``best`` (``compute_split``'s best-shape rates, peak × prior at the boost
    clock), the share of it a training step's GEMMs hold: min(1, the TFLOPS a large GEMM on
    that part's datapath sustains over a long run at the board's power limit ÷ the rate),
    where the efficiency table has a measurement for this GPU and datapath
    (``sustained_gemm_tflops``; H100 SXM: Hugging Face's gpu-fryer, 60 s of 8192³ cuBLASLt
    GEMMs), else 1. A training run keeps the GPU at its power limit for minutes to weeks; the
    prior (MAMF's best shape, 100 iterations) is a burst a short kernel catches at the boost
    clock, so inference, short bursts between host work, keeps it. None where nothing is
    held below the prior."""
    if not work.training or work.efficiency is None or best is None:
        return None
    # compute_split's parts: the TF32 share before the FP32 one in a mixed fp32 job
    paths = ("tf32", "fp32") if mode == "fp32+tf32" else (mode,)
    if len(paths) != len(best):
        return None
    table = work.efficiency
    shares = []
    for path, (_, rate) in zip(paths, best, strict=True):
        held = table.sustained_gemm_tflops(gpu.slug, path)
        shares.append(min(1.0, held * 1e12 / rate) if held else 1.0)
    return tuple(shares) if min(shares) < 1.0 else None


def _held(split: Split, shares: tuple[float, ...] | None) -> Split:
    """``split`` with each part's rate × its sustained share (``_sustained_shares``)."""
    if split is None or shares is None:
        return split
    return tuple((f, rate * h) for (f, rate), h in zip(split, shares, strict=True))


# Regimes whose whole job is one GPU-bound loop of seconds or more at the board's power limit:
# the operator path prices its kernels at the sustained clock (``_sustained_clock``), not only
# under the energy bound. Eager diffusion: 20-50 UNet calls back to back (docs/methodology.md
# §6.7x "sdc"); training keeps its measured sustained GEMM rates (``_sustained_shares``).
SUSTAINED_CLOCK_REGIMES = frozenset({"infer-diffusion"})


def _sustained_clock(gpu: GpuSpec, eff: Efficiency, prof: RuntimeProfile, mode: str) -> float:
    """The share of its boost clock a power-capped board holds under sustained tensor load:
    its 16-bit GEMMs reach at most TDP × the architecture's sustained TFLOPS per watt, and the
    clock it drops to slows the job's tensor datapath, whichever it is, where the job's rows
    carry the figure (data/efficiency.yaml keys them on the jobs it binds: on Ada and Ampere
    bf16/fp16 jobs and weight-only int4/fp4 prompts, not native fp8/int8; on Turing every
    one). 1 where the rows give no figure or the job runs on the CUDA cores. The operator path
    takes it as an energy bound on the whole step (``_operator_step``), not a slower kernel."""
    per_watt = prof.tensor_tflops_per_watt
    if not per_watt or not gpu.tdp_w or mode.startswith("fp32"):
        return 1.0
    half, key = _half_peak(gpu, "fp16")
    if not half or key == "fp32":
        return 1.0
    return min(1.0, gpu.tdp_w * per_watt / (half * eff.compute[key]))


def estimate(
    gpu: GpuSpec,
    work: WorkloadSpec,
    *,
    framework: str = "pytorch",
    num_gpus: int = 1,
    calibration: Calibration | None = None,
    flash_attention: bool = True,
    sharded: bool | None = None,
    accumulation_steps: int = 1,
    backend: str | None = None,
    one: OneGpu | None = None,
    shard_min: int | None = None,
) -> PerfEstimate:
    """Throughput of ``work`` (at its resolved precision) on ``num_gpus`` × ``gpu``, under the
    job's runtime on ``backend`` (default: the GPU's first backend).

    ``sharded``: the job needs several GPUs' memory (FSDP / tensor parallel) rather than being
    replicated; ``None`` means sharded whenever ``num_gpus`` > 1 for LLM inference and never
    for the rest. ``accumulation_steps``: micro-steps per optimizer step (gradients cross the
    link once per global batch). ``one``: ``single_gpu`` of the same arguments, when the
    caller already has it (not used for LLM inference). ``shard_min``: the fewest GPUs whose
    memory holds a sharded training job (``None``: all ``num_gpus``).
    """
    if work.is_llm_inference:
        eff = efficiencies(gpu, calibration)
        be = backend or (gpu.backends[0] if gpu.backends else "cuda")
        return _llm_inference(gpu, work, framework, num_gpus, eff, be)
    if one is None:
        one = single_gpu(
            gpu,
            work,
            framework=framework,
            calibration=calibration,
            flash_attention=flash_attention,
            backend=backend,
        )
    b = work.batch_size
    n = max(1, num_gpus)
    # the one-GPU step scaling is measured against runs the same global batch: its optimizer
    # update, too, once per optimizer step (``least_micro_step_s``), or a one-GPU row with
    # gradient accumulation read 106 % scaling against a reference that stepped every micro-batch
    single = (
        least_micro_step_s(one, one.step_s, accumulation_steps, 1) if work.training else one.step_s
    )
    layout, group = "", 0
    state = 0.0  # the model-state updates a sharded GPU adds beyond its n-way split (HSDP)
    # what the optimizer update, once per optimizer step, takes off a micro-step's memory
    # term and its GPU's busy time (``_optimizer_saving``)
    opt_mem = opt_busy = 0.0
    # the whole model's model-state and optimizer updates, before any per-GPU share
    t_state, t_opt = one.t_state, one.t_opt
    ways = float(n) if sharded else split_ways(b, n)  # how the step's work divides
    # how many ways a sharded GPU's terms still split its model-state updates (1 once ``one``
    # is already one GPU's share: ``_sharded_part``)
    div = float(n) if sharded else 1.0
    per_gpu = split_step_s(one, n, sharded=bool(sharded), batch=b)
    part = _replica_part(gpu, work, n, sharded, framework, calibration, flash_attention, backend)
    if part is not None and part.step_s > per_gpu:
        # each replica's kernels run at its own share's shapes, not the whole batch's
        one, ways, per_gpu = part, 1.0, part.step_s
    if work.training:
        lay = training_layout(
            gpu,
            work,
            n,
            sharded=bool(sharded),
            accumulation_steps=accumulation_steps,
            compute_s=per_gpu,
            shard_min=shard_min,
        )
        if sharded and lay.name in SHARE_LAYOUTS:
            share = _sharded_part(gpu, work, n, framework, calibration, flash_attention, backend)
            if share is not None and share.step_s > per_gpu:
                # each FSDP / HSDP GPU runs its own share of the micro-batch: its GEMMs at
                # that share's M, its weights gathered whole (``_sharded_part``)
                again = training_layout(
                    gpu,
                    work,
                    n,
                    sharded=True,
                    accumulation_steps=accumulation_steps,
                    compute_s=share.step_s,
                    shard_min=shard_min,
                )
                if again.name in SHARE_LAYOUTS:
                    # the longer compute hides at most as much more communication as it
                    # lasts longer (so ``evaluate.throughput_bound``, on the split, stays a bound)
                    least = lay.exposed_s - (share.step_s - per_gpu)
                    hidden = replace(again, exposed_s=max(again.exposed_s, least))
                    one, ways, per_gpu, lay, div = share, 1.0, share.step_s, hidden, 1.0
        comm, layout, group = lay.exposed_s, lay.label, lay.shard_group
        if sharded and 1 < group < n:
            # HSDP: each GPU updates the model states of its group's shard, 1/group of them,
            # where the split's n ways had given it 1/n (64 H100s in groups of 8 had come out
            # faster per GPU than 8 under FSDP, at the same micro-batch a GPU)
            state = t_state * (1.0 / group - 1.0 / n)
            per_gpu += state
        # the optimizer update runs once per optimizer step, not every micro-step
        extra = t_opt * (1.0 / group - 1.0 / n) if sharded and 1 < group < n else 0.0
        saved = _optimizer_saving(one, ways, div, extra, accumulation_steps)
        if saved > 0.0:
            floor = max(one.dispatch, one.host / ways)
            per_gpu = max(per_gpu - saved, floor)
            # the breakdown's memory term sheds the update's bytes, the GPU's busy time what
            # the step sheds (a weight stream that hid behind the math sheds nothing)
            keep = 1.0 - 1.0 / accumulation_steps
            opt_mem, opt_busy = (one.t_opt / ways + extra) * keep, saved
    else:
        comm = comm_s(gpu, work, one, n, sharded=bool(sharded))
    step = per_gpu + comm
    scale = (single / n) / step
    bottleneck = _bottleneck(one, comm * n)
    throughput = b / step
    latency = None if work.training else step * 1e3
    # the host's excess over the GPU's own work, as timing.overhead_s says it counts it: an
    # eager SDXL step of 3.15 s showed 0.31 + 0.11 + 0.21 s of parts and no host time at all
    busy = _gpu_busy_s(one, ways, bool(sharded) and n > 1) + state - opt_busy
    excess = per_gpu - busy if per_gpu > busy else 0.0
    if work.training and n > 1:
        bottleneck = _training_bottleneck(one, ways, comm, excess, bottleneck)
    # an encoder-decoder's window (its latency) and its decoder's pace per output token
    ttft = one.first_token_s * 1e3 if one.token_s else None
    per_token = one.token_s * 1e3 if one.token_s else None
    return PerfEstimate(
        throughput=throughput,
        unit="samples/s",
        step_time_s=step,
        bottleneck=bottleneck,
        compute_s=one.t_comp / ways,
        memory_s=(one.t_wmem + one.t_act) / ways + state - opt_mem,
        overhead_s=one.overhead + excess,
        host_s=one.host,
        comm_s=comm,
        num_gpus=n,
        scaling_efficiency=scale,
        compute_precision=one.mode,
        efficiency_source=one.eff.source,
        efficiency_basis=one.eff.basis,
        attention_basis=_attention_basis(one, work),
        latency_ms=latency,
        ttft_ms=ttft,
        ms_per_token=per_token,
        runtime=work.runtime,
        backend=one.backend,
        measured_on=one.eff.measured_on,
        parallelism=layout,
        shard_group=group if n > 1 else 0,
    )


def _optimizer_saving(one: OneGpu, ways: float, div: float, extra: float, steps: int) -> float:
    """GPU seconds a training micro-step sheds when its optimizer update (``OneGpu.t_opt``)
    runs once per optimizer step of ``steps`` micro-steps: PyTorch DDP skips the all-reduce
    under no_sync and the loop steps the optimizer after the last micro-batch; DeepSpeed steps
    it at the gradient-accumulation boundary only (engine.is_gradient_accumulation_boundary),
    and FSDP2 reduce-scatters every micro-batch while the user steps the optimizer after K of
    them (pytorch/pytorch#126166). So a micro-step carries 1/steps of the update, and a job's
    time, micro-steps × the micro-step, holds the update once per optimizer step. The update
    sits in the term ``split_step_s`` splits it with: the weight stream (``opt_in_wmem``, the
    whole-model path), split ``div`` ways (n for a sharded GPU's share of the states) and
    hidden behind the math where that is longer; else the additive memory term, split
    ``ways``. ``extra``: the update's seconds an HSDP GPU adds for its shard group (1/group of
    the states, not 1/n: ``estimate``)."""
    if steps <= 1 or one.t_opt <= 0.0:
        return 0.0
    keep = 1.0 - 1.0 / steps
    saved = extra * keep
    if one.opt_in_wmem:
        t_w, t_c = one.t_wmem / div, one.t_comp / ways
        cut = min(t_w, one.t_opt / div * keep)
        return saved + max(t_w, t_c) - max(t_w - cut, t_c)
    return saved + one.t_opt / ways * keep


def least_micro_step_s(one: OneGpu, split: float, steps: int, n: int) -> float:
    """A training micro-step of ``split`` seconds on ``n`` GPUs (``split_step_s``) less at
    least what ``estimate`` sheds for an optimizer update spread over ``steps`` micro-steps
    (0: any number), so ``evaluate.throughput_bound`` stays above the estimate: on one GPU
    exactly what it sheds; on several the whole model's update's share (``OneGpu.t_opt``), the
    most any GPU of any layout updates. Positive."""
    if one.t_opt <= 0.0 or 0 < steps <= 1:
        return split
    keep = 1.0 if steps <= 0 else 1.0 - 1.0 / steps
    if n <= 1 and steps > 0:
        saved = _optimizer_saving(one, 1.0, 1.0, 0.0, steps)
        return max(split - saved, one.dispatch, one.host)
    return max(split - one.t_opt * keep, split * 1e-6)


def _gpu_busy_s(one: OneGpu, ways: float, sharded: bool) -> float:
    """One GPU's own work in a step, by the overlap model the step itself uses
    (``split_step_s``): weight traffic overlapping the math, then the activation traffic and
    the launches; a replica reads all its weights, a sharded job its share. A copy the
    harness makes before the kernels start (``OneGpu.serial_copy``) adds; an overlapped one
    does not (it shows as timing.host_transfer_s beside the step). What the step takes beyond
    this is the host's excess (its dispatch, or an overlapped copy that outlasts the GPU),
    which timing.overhead_s counts and ``_bottleneck`` names."""
    t_w = one.t_wmem / ways if sharded else one.t_wmem
    t_c = one.t_comp / ways
    busy = (t_w if t_w > t_c else t_c) + one.t_act / ways + one.overhead
    return busy + one.host / ways if one.serial_copy else busy


def _bottleneck(one: OneGpu, comm: float) -> str:
    """What limits the step: the host's input copy or its dispatch only where it outlasts the
    GPU's own work (each overlaps that work, so a copy of 3.1 ms beside 3.2 ms of kernels
    limits nothing), else the largest of the GPU's parts and the link."""
    busy = max(one.t_comp, one.t_wmem) + one.t_act + one.overhead
    if one.host >= busy and one.host >= one.dispatch and one.host > 0:
        return "host transfer"
    if one.dispatch >= busy and one.dispatch > 0:
        return "host overhead"
    parts = {
        "compute": one.t_comp,
        "memory bandwidth": one.t_wmem + one.t_act,
        "interconnect": comm,
    }
    return max(parts, key=parts.__getitem__)


def _training_bottleneck(one: OneGpu, ways: float, comm: float, excess: float, own: str) -> str:
    """What limits a multi-GPU training step, among the parts its row reports
    (timing.compute_s, memory_s, interconnect_s, overhead_s): the largest of the GPU's math,
    its memory traffic, the exposed communication (``comm``: what the layout does not overlap)
    and the fixed costs — the kernel launches plus the host's excess over the GPU's own work
    (``excess``: its dispatch, which does not split over GPUs, or its input copies). ``own``
    (``_bottleneck``'s) where the host outlasts the GPU on one card already. DeepSeek-V3 fp8
    on 64 GB200s spent 4.5 s of a 6.7 s step in dispatch and read "interconnect"; A100 PCIe
    at 53 % scaling read "compute"."""
    if own in ("host transfer", "host overhead"):
        return own
    # the host's excess is its copies where those outlast its dispatch, else its dispatch
    host = "host transfer" if one.host / ways > one.dispatch else "host overhead"
    fixed = "kernel launches" if one.overhead >= excess else host
    parts = {
        "compute": one.t_comp / ways,
        "memory bandwidth": (one.t_wmem + one.t_act) / ways,
        "interconnect": comm,
        fixed: one.overhead + excess,
    }
    return max(parts, key=parts.__getitem__)


def _replica_part(
    gpu: GpuSpec,
    work: WorkloadSpec,
    n: int,
    sharded: bool | None,
    framework: str,
    calibration: Calibration | None,
    flash_attention: bool,
    backend: str | None,
) -> OneGpu | None:
    """One replica's step at its own share of the batch (⌈batch/n⌉ samples), where ``n``
    replicas split it: its GEMMs and convolutions run at that share's M, which a kernel's
    efficiency curve prices below the whole batch's (split_step_s divides the whole batch's
    time, as if each share ran at the large batch's efficiency: 8 replicas then came out
    faster per GPU than one card at the same micro-batch). ``estimate`` takes the slower of
    the two, so the split stays the bound ``evaluate.throughput_bound`` reads. None where
    nothing splits into replicas."""
    if sharded:
        return None
    return _share_step(gpu, work, n, framework, calibration, flash_attention, backend)


def _share_step(
    gpu: GpuSpec,
    work: WorkloadSpec,
    n: int,
    framework: str,
    calibration: Calibration | None,
    flash_attention: bool,
    backend: str | None,
) -> OneGpu | None:
    """One GPU's step at its own ⌈batch/n⌉ samples; None where nothing splits (one sample,
    one GPU)."""
    share = math.ceil(work.batch_size / n) if n > 1 else work.batch_size
    if share >= work.batch_size:
        return None
    return single_gpu(
        gpu,
        share_job(work, share),
        framework=framework,
        calibration=calibration,
        flash_attention=flash_attention,
        backend=backend,
    )


def share_job(work: WorkloadSpec, share: int) -> WorkloadSpec:
    """``work`` at a batch of ``share``, one spec per share and job (``WorkloadSpec.derived``),
    so every card of a request reads one GPU-independent step (``_step_job``) for it."""
    key = ("share", share)
    hit = work.derived.get(key)
    if not isinstance(hit, WorkloadSpec):
        hit = work.derived[key] = replace(work, batch_size=share)
    return hit


# The training layouts whose GPUs each run their own share of the micro-batch's samples
# through every layer (parallelism.fsdp, parallelism.hsdp): tensor-parallel and Megatron
# layouts split the GEMMs' other dimensions and keep the batch's shapes (megatron_shapes)
SHARE_LAYOUTS = frozenset({"fsdp", "hsdp"})


def _sharded_part(
    gpu: GpuSpec,
    work: WorkloadSpec,
    n: int,
    framework: str,
    calibration: Calibration | None,
    flash_attention: bool,
    backend: str | None,
) -> OneGpu | None:
    """One FSDP / HSDP GPU's micro-step: its own ⌈batch/n⌉ samples through every layer, as
    DDP's replicas run theirs (``_replica_part``) — the GEMMs at that share's M (Hugging
    Face's per_device_train_batch_size, DeepSpeed's train_micro_batch_size_per_gpu), so a
    kernel's efficiency curve (small M, wave quantisation) prices them, not the whole
    micro-batch's shapes split n ways — and the whole layer's weights, all-gathered, read by
    its GEMMs; only the model-state updates (optimizer, weight casts) run on its 1/n shard
    (``t_state`` and ``t_opt`` come back as that share; ``estimate`` adds HSDP's group
    share). None where nothing splits (one sample, one GPU)."""
    p = _share_step(gpu, work, n, framework, calibration, flash_attention, backend)
    if p is None:
        return None
    cut = p.t_state * (1.0 - 1.0 / n)
    t_wmem, t_act = p.t_wmem, p.t_act
    if p.opt_in_wmem:  # the whole-model path: the states' bytes stream with the weights
        cut = min(cut, t_wmem)
        shed = max(t_wmem, p.t_comp) - max(t_wmem - cut, p.t_comp)
        t_wmem -= cut
    else:
        cut = min(cut, t_act)
        shed = cut
        t_act -= cut
    step = max(p.step_s - shed, p.dispatch, p.host)
    return replace(
        p, t_wmem=t_wmem, t_act=t_act, step_s=step, t_state=p.t_state / n, t_opt=p.t_opt / n
    )


def comm_s(
    gpu: GpuSpec,
    work: WorkloadSpec,
    one: OneGpu,
    n: int,
    *,
    sharded: bool,
    accumulation_steps: int = 1,
    shard_min: int | None = None,
) -> float:
    """The GPU-to-GPU time a (non-LLM-inference) step on ``n`` GPUs adds to ``one``'s step
    split ``n`` ways: ``estimate``'s step is single/n plus this. ``shard_min``: the fewest GPUs
    whose memory holds a sharded training job (``None``: all ``n``)."""
    if work.training:
        return training_comm_s(
            gpu,
            work,
            n,
            sharded=sharded,
            accumulation_steps=accumulation_steps,
            compute_s=split_step_s(one, n, sharded=sharded, batch=work.batch_size),
            shard_min=shard_min,
        )
    if sharded and n > 1:
        # a model too big for one GPU, served in layers: its weights cross the link once
        lk = topology.link(gpu, n)
        return topology.comm_seconds(lk, topology.allgather_bytes(n, one.wbytes))
    return 0.0  # independent replicas


def as_copies(
    one: PerfEstimate, copies: int, batch: int, single_s: float, span: str
) -> PerfEstimate:
    """``copies`` copies of a job side by side, each ``one`` (its estimate: a share of the
    ``batch`` on num_gpus GPUs; ``span``: how the runtime spreads that replica, efficiency
    row's ``span``): they share no step and no link, so the batch is done when a copy has done
    its share (``one``'s step, latency, first token and token pace), and the throughput is the
    batch over that time, copies × one copy's throughput where the batch divides evenly.
    ``single_s``: the whole batch's time on one GPU, for the scaling efficiency."""
    n = one.num_gpus * copies
    share = math.ceil(batch / copies)
    per = one.num_gpus
    how = "" if per == 1 else (" (tensor parallel)" if span == "tensor" else " (layer split)")
    label = (
        f"{copies} copies × {per} GPU{'s' if per > 1 else ''}{how}, each on 1/{copies} of the "
        f"samples at batch {share}"
    )
    return replace(
        one,
        throughput=one.throughput * batch / share,
        num_gpus=n,
        scaling_efficiency=single_s / one.step_time_s / n,
        parallelism=label,
        copies=copies,
    )


def llm_efficiency(eff: Efficiency) -> dict[str, float]:
    """Whole-model GEMM efficiency by datapath for the LLM step: the GPU's best-shape GEMM
    efficiency × MODEL_UTILISATION, on the operator path's basis (``operator_efficiency``): a
    device report's figure, else the GPU's kernel profile (own or carried over), else the
    vendor prior; int8 and fp4 kernels reach the share fp8 ones do."""
    if eff.llm is not None:
        return eff.llm
    best = {**eff.compute, **{p: kb.efficiency for p, kb in eff.gemm.items()}}
    comp = {p: v * MODEL_UTILISATION for p, v in best.items()}
    comp["fp4"] = comp.get("fp8", comp.get("bf16", 0.5))
    comp["int8"] = comp.get("fp8", comp.get("bf16", 0.5))
    # the fused attention forward's best-shape share of the 16-bit peak, as the operator path
    # takes it (class_rates' flash forward before the runtime's terms): the kernel profile's,
    # else the prior's share of the 16-bit GEMM's; the LLM step prices its prompt attention
    # with it (llm_step.fused_attention), at no whole-model utilisation: the shape prices it
    att = eff.attention.efficiency if eff.attention is not None else None
    comp[llm_step.ATTENTION_SHARE] = att or best.get("bf16", 0.5) * FLASH_FWD_FACTOR
    object.__setattr__(eff, "llm", comp)
    return comp


def llm_basis(eff: Efficiency, precision: str) -> str:
    """What the LLM step's GEMMs on datapath ``precision`` rest on, in words, where a kernel
    profile priced them ("" = the prior, or a device report's own figure): the basis of the
    entry ``llm_efficiency`` reads for it (int8 and fp4 read fp8's)."""
    kb = eff.gemm.get("fp8" if precision in ("int8", "fp4") else precision)
    return kb.basis if kb is not None else ""


def llm_job(work: WorkloadSpec) -> llm_step.ReplicaJob:
    """The job's GPU-independent replica terms (llm_step.replica_job), worked out once per
    job spec: a request builds each job variant once and asks for it on every card and count;
    the spec carries it (``WorkloadSpec.derived``), so it lives as long as the request's
    job."""
    hit = work.derived.get(("llm",))
    if not isinstance(hit, llm_step.ReplicaJob):
        hit = llm_step.replica_job(
            work.model,
            weights=work.precision,
            kv=work.kv_format,
            own_bits=work.own_bits,
            format_bits=work.format_bits,
            torch_version=work.torch_version,
            kv_repeat=work.kv_repeat,
            quantization=work.quantization,
            mmha=work.mmha,
            experts_16bit=work.experts_16bit,
            graphs=work.llamacpp_graphs,
        )
        work.derived[("llm",)] = hit
    return hit


def llm_card(gpu: GpuSpec, work: WorkloadSpec, eff: Efficiency, backend: str) -> llm_step.CardTerms:
    """The GPU's terms for the job's runtime and weight format (llm_step.card_terms): the
    same for every model, count and request, so kept with the spec (``GpuSpec.derived``),
    checked against the efficiency table and the efficiencies they came from."""
    table = work.efficiency
    key = ("llm", backend, work.runtime, work.precision, work.prompt_gemm)
    hit = gpu.derived.get(key)
    if isinstance(hit, tuple) and hit[0] is table and hit[1] is eff:
        terms: llm_step.CardTerms = hit[2]
        return terms
    terms = llm_step.card_terms(
        gpu,
        weights=work.precision,
        decode=profile_for(gpu, work, backend, "decode"),
        prefill=prefill_profile(gpu, work, backend),
        memory_efficiency=eff.memory,
        compute_efficiency=llm_efficiency(eff),
    )
    gpu.derived[key] = (table, eff, terms)
    return terms


def prefill_profile(gpu: GpuSpec, work: WorkloadSpec, backend: str) -> RuntimeProfile:
    """The runtime's prompt profile; a quantised model on llama.cpp's cuBLAS prompt path
    (``WorkloadSpec.prompt_gemm`` "cublas", CUDA) takes the F16 weights' profile (FP16 cuBLAS,
    its dequantise pass: data/efficiency.yaml) instead of MMQ's."""
    if work.prompt_gemm not in ("", "cublas"):
        raise ValueError(f"unknown prompt GEMM path {work.prompt_gemm!r}")
    quantised = work.weight_bits is not None and work.precision in ("int4", "int8")
    if work.prompt_gemm == "cublas" and quantised and backend == "cuda":
        return profile_for(gpu, work.with_precision("fp16"), backend, "prefill")
    return profile_for(gpu, work, backend, "prefill")


def llm_replica(
    gpu: GpuSpec,
    work: WorkloadSpec,
    n: int,
    eff: Efficiency,
    backend: str,
    *,
    links: bool = True,
) -> llm_step.Replica:
    """The LLM inference job as one replica of the one LLM step function (llm_step): its
    weight format, a 16-bit KV cache (fp32 for fp32 jobs), the runtime's profiles on this GPU
    and no serving scheduler. ``links=False``: no GPU-to-GPU time (an upper bound). The job's
    terms and each card's are worked out once per request (``llm_job``, ``llm_card``); the
    replica itself is a few products."""
    card = llm_card(gpu, work, eff, backend)
    return llm_step.replica(
        gpu,
        work.model,
        weights=work.precision,
        kv=work.kv_format,
        n=n,
        decode=card.decode,
        prefill=card.prefill,
        memory_efficiency=eff.memory,
        compute_efficiency=llm_efficiency(eff),
        own_bits=work.own_bits,
        format_bits=work.format_bits,
        job=llm_job(work),
        card=card,
        links=links,
    )


def llm_throughput_bound(
    gpu: GpuSpec,
    work: WorkloadSpec,
    *,
    framework: str = "pytorch",
    num_gpus: int = 1,
    calibration: Calibration | None = None,
    backend: str,
) -> float:
    """An upper bound on ``estimate``'s LLM inference throughput on ``num_gpus``: the same
    steps without GPU-to-GPU time (never negative). On one GPU it is the estimate's
    throughput. ``inf`` where the estimate has no finite positive throughput (a phase with no
    peak to run at): the caller then evaluates it."""
    eff = efficiencies(gpu, calibration)
    rep = llm_replica(gpu, work, max(1, num_gpus), eff, backend, links=False)
    b, s, out = work.batch_size, work.seq_len, max(1, work.output_tokens)
    if rep.flops <= 0 or rep.attn_flops <= 0:
        return math.inf
    ttft = rep.parts(0.0, 0.0, float(b * s), float(s)).seconds
    tpot = rep.parts(float(b), s + out / 2.0, 0.0, float(s)).seconds
    total = ttft + decode_steps(work) * tpot
    return b * out / total if 0 < total < math.inf else math.inf


LlmCard = tuple[GpuSpec, WorkloadSpec, int, str]  # (gpu, job, GPUs, backend)


def llm_throughput_bounds(
    cards: Sequence[LlmCard], *, calibration: Calibration | None = None
) -> list[float]:
    """``llm_throughput_bound`` of every (gpu, job, count, backend), to the last bit, with the
    two steps of all of them taken at once as arrays (llm_step.Columns): the request's terms
    (batch, context, tokens) broadcast over the cards' terms. The jobs share batch, sequence
    and output length (one request's variants). A dense model's rows are built as arrays from
    each card's terms and the counts (``llm_step.dense_columns``); a routed one's replica by
    replica."""
    if not cards:
        return []
    work = cards[0][1]
    b, s, out = work.batch_size, work.seq_len, max(1, work.output_tokens)
    if any((w.batch_size, w.seq_len, max(1, w.output_tokens)) != (b, s, out) for _, w, *_ in cards):
        raise ValueError("the cards' jobs differ in batch, sequence or output length")
    bounds = [math.inf] * len(cards)
    # the rows of each job variant (a request has one or a few)
    jobs: list[tuple[WorkloadSpec, list[int]]] = []
    for i, (_, w, _, _) in enumerate(cards):
        group = next((rows for x, rows in reversed(jobs) if x is w), None)
        if group is None:
            jobs.append((w, [i]))
        else:
            group.append(i)
    for w, rows in jobs:
        job = llm_job(w)
        if job.experts:
            reps = [
                llm_replica(g, w, max(1, n), efficiencies(g, calibration), be, links=False)
                for g, _, n, be in (cards[i] for i in rows)
            ]
            stepped = [k for k, r in enumerate(reps) if r.flops > 0 and r.attn_flops > 0]
            if not stepped:
                continue
            cols = llm_step.columns([reps[k] for k in stepped])
            index = [rows[k] for k in stepped]
        else:
            slot: dict[tuple[GpuSpec, str], int] = {}
            terms: list[llm_step.CardTerms] = []
            card = np.empty(len(rows), np.intp)
            n = np.empty(len(rows), np.float64)
            for k, i in enumerate(rows):
                g, _, count, be = cards[i]
                c = slot.get((g, be))
                if c is None:
                    c = slot[(g, be)] = len(terms)
                    terms.append(llm_card(g, w, efficiencies(g, calibration), be))
                card[k] = c
                n[k] = max(1, count)
            cols = llm_step.dense_columns(job, llm_step.card_rows(terms), card, n)
            index = rows
        for i, t in zip(index, stepped_bounds(cols, w).tolist(), strict=True):
            bounds[i] = t
    return bounds


Phase = tuple[float, float, float, float]  # a step's (decodes, context, prompt tokens, prompt)


def decode_steps(work: WorkloadSpec) -> int:
    """Decode steps after the prefill for the job's output tokens: the prefill's forward yields
    the first token, so n tokens take n − 1 steps (vLLM's and HF generate's accounting, and the
    serving model's TTFT + (n − 1) × ITL); llama-bench's tg rate is a decode step's alone."""
    return max(1, work.output_tokens) - 1


def _phases(work: WorkloadSpec) -> tuple[Phase, Phase]:
    """The job's two steps as the LLM step functions take them: its prompt as one prefill of
    batch × sequence tokens, and a decode of the batch at the mean context."""
    b, s, out = work.batch_size, work.seq_len, max(1, work.output_tokens)
    return (0.0, 0.0, float(b * s), float(s)), (float(b), s + out / 2.0, 0.0, float(s))


def stepped_bounds(cols: llm_step.Columns, work: WorkloadSpec) -> NDArray[np.float64]:
    """``llm_throughput_bound`` of every row of ``cols`` (the replicas without links) for the
    job's batch, sequence and output length: ``inf`` where a row has no peak to run a phase
    at or no finite positive time."""
    prefill, decode = _phases(work)
    with np.errstate(divide="ignore", invalid="ignore"):
        ttft = cols.seconds(*prefill)
        tpot = cols.seconds(*decode)
    return _bounds(cols, work, ttft, tpot)


def stepped_parts(
    cols: llm_step.Columns, work: WorkloadSpec
) -> tuple[NDArray[np.float64], llm_step.StepColumns, llm_step.StepColumns]:
    """``stepped_bounds`` with the prompt and decode steps it took (``Columns.parts``, whose
    seconds are ``Columns.seconds``), for a caller that makes estimates of some rows from
    them (``llm_one_gpu_estimate``)."""
    prefill, decode = _phases(work)
    with np.errstate(divide="ignore", invalid="ignore"):
        pre = cols.parts(*prefill)
        dec = cols.parts(*decode)
    return _bounds(cols, work, pre.seconds, dec.seconds), pre, dec


def _bounds(
    cols: llm_step.Columns,
    work: WorkloadSpec,
    ttft: NDArray[np.float64],
    tpot: NDArray[np.float64],
) -> NDArray[np.float64]:
    b, out = work.batch_size, max(1, work.output_tokens)
    # a card without a peak to run a phase at is not stepped (the scalar bound: inf)
    runs = (cols.flops > 0) & (cols.attn_flops > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = ttft + decode_steps(work) * tpot
        bound = b * out / total
    ok = runs & (total > 0) & (total < math.inf)
    return np.where(ok, bound, math.inf)


def _llm_inference(
    gpu: GpuSpec, work: WorkloadSpec, framework: str, n_req: int, eff: Efficiency, backend: str
) -> PerfEstimate:
    """The job's prompt as one prefill step (which yields the first token), then
    ``output_tokens`` − 1 decode steps at the mean context (``decode_steps``), each from the
    one LLM step function (llm_step) that the serving scheduler calls too: prefill
    compute-bound, decode reading the weights and the KV cache once per token; an
    eager loop (Hugging Face ``generate``) host-bound, a CUDA-graph runtime not; the replica
    spread over the GPUs as the runtime's ``span`` says (tensor parallel, layer split)."""
    n = max(1, n_req)
    rep = llm_replica(gpu, work, n, eff, backend)
    if rep.flops <= 0 or rep.attn_flops <= 0:
        return _no_llm_figures(work, n, rep, eff, backend)
    prefill, decode = _phases(work)
    pre = rep.parts(*prefill)
    dec = rep.parts(*decode)
    single = _llm_single(gpu, work, eff, backend) if n > 1 else None
    out = _llm_perf(work, n, pre, dec, single, rep.compute_precision, eff, backend)
    if n == 1:
        keep_single(gpu, work, eff, backend, out.step_time_s)
    return out


class _Step(Protocol):
    """What ``_llm_perf`` reads of a step (llm_step.StepTime; columns of many: llm_totals)."""

    @property
    def seconds(self) -> float: ...
    @property
    def gpu_s(self) -> float: ...
    @property
    def compute_s(self) -> float: ...
    @property
    def memory_s(self) -> float: ...
    @property
    def launch_s(self) -> float: ...
    @property
    def host_s(self) -> float: ...
    @property
    def comm_s(self) -> float: ...


def _llm_perf(
    work: WorkloadSpec,
    n: int,
    pre: _Step,
    dec: _Step,
    single: float | None,
    mode: str,
    eff: Efficiency,
    backend: str,
) -> PerfEstimate:
    """The estimate of the job's prompt step ``pre`` and its ``decode_steps`` decode steps
    ``dec`` on ``n`` GPUs; ``single``: the job's time on one of them (None when ``n`` is 1)."""
    b, out = work.batch_size, max(1, work.output_tokens)
    steps = decode_steps(work)
    ttft, tpot = pre.seconds, dec.seconds
    total = ttft + steps * tpot
    comm = pre.comm_s + steps * dec.comm_s
    if single is None:
        single = total
    host_excess = max(0.0, dec.host_s - dec.gpu_s)
    # What the job's time is made of: a decode step the host outlasts takes the host's time,
    # its GPU work hidden under it, so the whole step counts as host time. Counting only the
    # host's excess over the GPU set it against the hidden bytes, and an A100 eager 8B loop
    # (host 14.4 ms, GPU 10.4 ms a token) read as bandwidth-bound where an H100's (GPU 6.9 ms)
    # read as host-bound.
    host_bound = host_excess > 0.0
    gpu_dec = 0.0 if host_bound else float(steps)
    parts = {
        "compute": pre.compute_s + gpu_dec * dec.compute_s,
        "memory bandwidth": pre.memory_s + gpu_dec * dec.memory_s,
        "host overhead": steps * dec.host_s if host_bound else 0.0,
        "kernel launches": pre.launch_s + gpu_dec * dec.launch_s,
        "interconnect": comm * n,
    }
    bottleneck = max(parts, key=parts.__getitem__)
    step_parts = {
        "compute": dec.compute_s,
        "memory bandwidth": dec.memory_s,
        "host overhead": dec.host_s if host_bound else 0.0,
        "kernel launches": dec.launch_s,
        "interconnect": dec.comm_s * n,
    }
    return PerfEstimate(
        decode_bottleneck=max(step_parts, key=step_parts.__getitem__),
        throughput=b * out / total,
        unit="tokens/s",
        step_time_s=total,
        bottleneck=bottleneck,
        compute_s=pre.compute_s + steps * dec.compute_s,
        memory_s=pre.memory_s + steps * dec.memory_s,
        overhead_s=pre.launch_s + steps * (dec.launch_s + host_excess),
        host_s=0.0,
        comm_s=comm,
        num_gpus=n,
        scaling_efficiency=single / total / n,
        compute_precision=mode,
        efficiency_source=eff.source,
        latency_ms=total * 1e3,
        ttft_ms=ttft * 1e3,
        ms_per_token=tpot * 1e3,
        runtime=work.runtime,
        backend=backend,
        measured_on=eff.measured_on,
        efficiency_basis=llm_basis(eff, mode),
    )


def llm_estimates(
    cards: Sequence[LlmCard], *, calibration: Calibration | None = None
) -> list[PerfEstimate]:
    """``estimate`` of every (gpu, LLM inference job, count, backend), to the last bit, with
    the prompt and decode steps of all of them taken at once as arrays (llm_step.Columns,
    ``Columns.parts``): a dense model's rows built from each card's terms and the counts
    (``llm_step.dense_columns``, with the links between the GPUs), a routed one's replica by
    replica. The one-GPU time a count's scaling efficiency divides by is stepped with them
    where the job has not kept it yet (``_llm_single``). A card without the peak a phase runs
    at is estimated alone (no figures)."""
    # The rows in sets stepped together: the jobs (a request has a few: one per precision a
    # card runs at) whose replica terms and step shape are the same (a model's BF16 and FP16
    # weights) share one, as a set of columns costs about the same whatever its rows.
    sets: list[tuple[llm_step.ReplicaJob, WorkloadSpec, list[int]]] = []
    last: tuple[WorkloadSpec, list[int]] | None = None
    for i, (_, w, _, _) in enumerate(cards):
        if last is not None and last[0] is w:  # most rows: the previous row's job
            last[1].append(i)
            continue
        job = llm_job(w)
        group = next((rows for j, x, rows in sets if x is w or _same_step(j, x, job, w)), None)
        if group is None:
            group = []
            sets.append((job, w, group))
        group.append(i)
        last = (w, group)
    out: list[PerfEstimate | None] = [None] * len(cards)
    for job, _, rows in sets:
        for i, e in zip(
            rows, _job_estimates(job, [cards[i] for i in rows], calibration), strict=True
        ):
            out[i] = e
    return [e for e in out if e is not None]


def _same_step(
    job: llm_step.ReplicaJob, w: WorkloadSpec, other: llm_step.ReplicaJob, v: WorkloadSpec
) -> bool:
    """Whether two jobs' rows step as one set of columns: the same replica terms, batch,
    sequence and output length (what the columns and the steps read of the job)."""
    shape = (w.batch_size, w.seq_len, w.output_tokens)
    return shape == (v.batch_size, v.seq_len, v.output_tokens) and job == other


def _job_estimates(
    job: llm_step.ReplicaJob, cards: list[LlmCard], calibration: Calibration | None
) -> list[PerfEstimate]:
    """``llm_estimates`` of one set's rows (``job``: their jobs' replica terms, the same)."""
    # each card's terms once, then each row's card and count
    slot: dict[tuple[GpuSpec, str, int], int] = {}
    terms: list[llm_step.CardTerms] = []
    effs: list[Efficiency] = []
    keys: list[tuple[GpuSpec, str]] = []
    works: list[WorkloadSpec] = []  # each card's own job (its precision's)
    stores: list[dict[tuple[object, ...], tuple[object, float]]] = []  # its job's per_card
    distinct: list[WorkloadSpec] = []  # the set's jobs (a card's terms are its job's)
    card: list[int] = []
    count: list[int] = []
    for g, w, n, be in cards:
        at_w = next((k for k, x in enumerate(distinct) if x is w), None)
        if at_w is None:
            at_w = len(distinct)
            distinct.append(w)
        c = slot.get((g, be, at_w))
        if c is None:
            c = slot[(g, be, at_w)] = len(terms)
            e = efficiencies(g, calibration)
            terms.append(llm_card(g, w, e, be))
            effs.append(e)
            keys.append((g, be))
            works.append(w)
            stores.append(llm_job(w).per_card)
        card.append(c)
        count.append(max(1, n))
    w = works[0]  # the batch, sequence and output length: the same for every row
    # a one-GPU row for each card whose one-GPU time a row needs and its job lacks
    singles = {c: k for k, (c, n) in enumerate(zip(card, count, strict=True)) if n == 1}
    for c, n in zip(card[:], count[:], strict=True):
        if n > 1 and c not in singles:
            hit = stores[c].get(("single", *keys[c]))
            if hit is None or hit[0] is not effs[c]:
                singles[c] = len(card)
                card.append(c)
                count.append(1)
    runs = [t.flops > 0 and t.attn_flops > 0 for t in terms]
    stepped = [k for k, c in enumerate(card) if runs[c]]
    at = {k: j for j, k in enumerate(stepped)}  # a stepped row's place in the columns
    figures: llm_totals.Totals | None = None  # the stepped rows' (none stepped: none)
    b, s, n_out = w.batch_size, w.seq_len, max(1, w.output_tokens)
    if stepped:
        on = [card[k] for k in stepped]
        counts = [count[k] for k in stepped]
        cols = _set_columns(job, terms, [(*keys[c], works[c], effs[c]) for c in on], on, counts)
        pre = cols.parts(0.0, 0.0, float(b * s), float(s))
        dec = cols.parts(float(b), s + n_out / 2.0, 0.0, float(s))
        steps = decode_steps(w)
        alone = (pre.seconds + steps * dec.seconds).tolist()  # each row's job time
        for c, k in singles.items():  # the jobs' one-GPU times, kept as _llm_single keeps them
            if runs[c] and count[k] == 1:
                stores[c][("single", *keys[c])] = (effs[c], alone[at[k]])
        one: dict[int, float] = {}  # each card's one-GPU time (``_llm_single``), once
        single = alone[:]  # a row on one GPU: its own time
        for j, k in enumerate(stepped):
            c = card[k]
            if k < len(cards) and count[k] > 1:
                got = one.get(c)
                if got is None:
                    (g, be), e = keys[c], effs[c]
                    got = one[c] = _llm_single(g, works[c], e, be)
                single[j] = got
        # _llm_perf of every stepped row at once, to the last bit (llm_totals)
        figures = llm_totals.totals(
            b * n_out, steps, np.array(counts, np.float64), pre, dec, np.array(single)
        )
    out = []
    # each card's words once (its datapath, efficiency source and basis), then each row's
    # estimate from its figures (_stepped_estimate's, field for field)
    words = [_card_words(t, e) for t, e in zip(terms, effs, strict=True)]
    for k in range(len(cards)):
        c, n = card[k], count[k]
        (g, be), e, run = keys[c], effs[c], works[c]
        if not runs[c]:
            out.append(_llm_inference(g, run, "pytorch", n, e, be))
            continue
        assert figures is not None  # a card that runs is stepped
        out.append(_figures_estimate(figures, at[k], run.runtime, be, n, words[c]))
    return out


def _card_words(card: llm_step.CardTerms, eff: Efficiency) -> tuple[str, str, int, str]:
    """What a stepped row's estimate says of its card (``_stepped_estimate``'s): the datapath
    it names, the efficiencies' source and measuring machines, and what its GEMMs rest on."""
    mode = card.math or card.mode
    return mode, eff.source, eff.measured_on, llm_basis(eff, mode)


def _figures_estimate(
    f: llm_totals.Totals,
    j: int,
    runtime: str,
    backend: str,
    n: int,
    said: tuple[str, str, int, str],
) -> PerfEstimate:
    """``_stepped_estimate`` of row ``j`` of ``f`` given its card's words (``said``: its
    datapath, efficiency source, measured_on and basis), built positionally in field order:
    one per stepped row, and keywords cost a third more."""
    mode, source, measured_on, basis = said
    return PerfEstimate(
        f.throughput[j],
        "tokens/s",
        f.step_time_s[j],
        f.bottleneck[j],
        f.compute_s[j],
        f.memory_s[j],
        f.overhead_s[j],
        0.0,
        f.comm_s[j],
        n,
        f.scaling_efficiency[j],
        mode,
        source,
        f.latency_ms[j],
        f.ttft_ms[j],
        f.ms_per_token[j],
        runtime,
        backend,
        measured_on,
        basis,
        "",
        "",
        0,
        1,
        f.decode_bottleneck[j],
    )


def _set_columns(
    job: llm_step.ReplicaJob,
    terms: list[llm_step.CardTerms],
    rows: list[tuple[GpuSpec, str, WorkloadSpec, Efficiency]],
    on: list[int],
    counts: list[int],
) -> llm_step.Columns:
    """The columns of a set's stepped rows (``rows``: each one's GPU, backend, job and
    efficiencies; ``on``: its card's place in ``terms``; ``counts``: its GPUs): a dense model's
    from the cards' terms and the counts, with the links between the GPUs; a routed one's
    replica by replica."""
    if job.experts:
        reps = [llm_replica(g, w, n, e, be) for (g, be, w, e), n in zip(rows, counts, strict=True)]
        return llm_step.columns(reps)
    return llm_step.dense_columns(
        job,
        llm_step.card_rows(terms),
        np.array(on, np.intp),
        np.array(counts, np.float64),
        gpus=[g for g, _, _, _ in rows],
    )


def _stepped_estimate(
    figures: llm_totals.Totals,
    j: int,
    run: WorkloadSpec,
    n: int,
    card: llm_step.CardTerms,
    eff: Efficiency,
    backend: str,
) -> PerfEstimate:
    """``_llm_perf``'s estimate of row ``j`` of ``figures`` (``llm_totals.totals``): ``run``
    on ``n`` of ``card``'s GPUs."""
    mode = card.math or card.mode
    return PerfEstimate(
        decode_bottleneck=figures.decode_bottleneck[j],
        throughput=figures.throughput[j],
        unit="tokens/s",
        step_time_s=figures.step_time_s[j],
        bottleneck=figures.bottleneck[j],
        compute_s=figures.compute_s[j],
        memory_s=figures.memory_s[j],
        overhead_s=figures.overhead_s[j],
        host_s=0.0,
        comm_s=figures.comm_s[j],
        num_gpus=n,
        scaling_efficiency=figures.scaling_efficiency[j],
        compute_precision=mode,
        efficiency_source=eff.source,
        latency_ms=figures.latency_ms[j],
        ttft_ms=figures.ttft_ms[j],
        ms_per_token=figures.ms_per_token[j],
        runtime=run.runtime,
        backend=backend,
        measured_on=eff.measured_on,
        efficiency_basis=llm_basis(eff, mode),
    )


class _StepRow(NamedTuple):
    """One row of ``llm_step.StepColumns`` as plain floats: a step ``_llm_perf`` reads."""

    seconds: float
    gpu_s: float
    compute_s: float
    memory_s: float
    launch_s: float
    host_s: float
    comm_s: float


def step_row(cols: llm_step.StepColumns, row: int) -> _StepRow:
    """Row ``row`` of steps taken as columns, each value the float64 the column holds."""
    return _StepRow(*map(float, map(itemgetter(row), cols)))  # in C: no generator frames


def llm_one_gpu_estimate(
    work: WorkloadSpec,
    prompt: llm_step.StepColumns,
    decode: llm_step.StepColumns,
    row: int,
    card: llm_step.CardTerms,
    eff: Efficiency,
    backend: str,
) -> PerfEstimate:
    """``estimate`` of the job on one of the card's GPUs from row ``row`` of its prompt and
    decode steps, stepped as columns elsewhere (app/domain/fleet.py, with the bounds): one GPU
    has no links, so the row is the replica ``estimate`` steps, and ``_llm_perf`` of its two
    steps is the estimate, to the last bit. Only the rows a request walks are read (~10 of a
    catalog's ~100 or ~1,000), so their figures are worked out here, one row at a time,
    rather than for every row stepped (``llm_totals.totals``)."""
    pre, dec = step_row(prompt, row), step_row(decode, row)
    return _llm_perf(work, 1, pre, dec, None, card.math or card.mode, eff, backend)


def keep_single(
    gpu: GpuSpec, work: WorkloadSpec, eff: Efficiency, backend: str, seconds: float
) -> None:
    """``seconds``, the job's time on one of the card's GPUs from a one-GPU estimate made of
    the same replica's two steps (``_llm_perf``'s total at one GPU: the prompt step plus
    ``decode_steps`` decode steps, as ``_llm_single`` adds them), kept where ``_llm_single``
    finds it: a request's one-GPU row is estimated first, and its card's other counts had
    stepped the same replica again for their scaling efficiency."""
    llm_job(work).per_card[("single", gpu, backend)] = (eff, seconds)


def _llm_single(gpu: GpuSpec, work: WorkloadSpec, eff: Efficiency, backend: str) -> float:
    """The job's time on one of the card's GPUs: the same for each of the card's counts, so
    worked out once per request (kept with the job's terms, ``llm_job``)."""
    store = llm_job(work).per_card
    key = ("single", gpu, backend)
    hit = store.get(key)
    if hit is not None and hit[0] is eff:
        return hit[1]
    b, s, out = work.batch_size, work.seq_len, max(1, work.output_tokens)
    one = llm_replica(gpu, work, 1, eff, backend)
    t1 = one.parts(0.0, 0.0, float(b * s), float(s)).seconds
    single = t1 + decode_steps(work) * one.parts(float(b), s + out / 2.0, 0.0, float(s)).seconds
    store[key] = (eff, single)
    return single


def _no_llm_figures(
    work: WorkloadSpec, n: int, rep: llm_step.Replica, eff: Efficiency, backend: str
) -> PerfEstimate:
    """A GPU without the peak a phase runs at: no finite throughput (callers exclude it)."""
    return PerfEstimate(
        throughput=0.0,
        unit="tokens/s",
        step_time_s=math.inf,
        bottleneck="compute",
        compute_s=math.inf,
        memory_s=0.0,
        overhead_s=0.0,
        host_s=0.0,
        comm_s=0.0,
        num_gpus=n,
        scaling_efficiency=0.0,
        compute_precision=rep.compute_precision,
        efficiency_source=eff.source,
        runtime=work.runtime,
        backend=backend,
        measured_on=eff.measured_on,
    )

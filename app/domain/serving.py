"""LLM serving with continuous batching: the scheduler and queueing around the one LLM step
function (app/domain/llm_step.py, which LLM inference calls too) — time to first token, inter-
token latency, the throughput-latency curve and the KV-cache limit on concurrency, for one
configuration (GPU × GPUs per replica × replicas × weight format × KV format × runtime).

* A step's time is llm_step's: decode sequences plus prompt chunks on one replica, from the
  runtime's efficiency rows, the format table and the replica's layout, plus the server's
  fixed cost per step (scheduling, sampling).
* Prefill is chunked and mixed into decode steps (vLLM V1, SGLang, TensorRT-LLM): on average
  each step also carries the prompt tokens of the requests that replace finished ones,
  B × prompt ÷ output tokens, which is what makes long prompts compute-bound.
* The paged KV cache holds what is left of ``memory_utilization`` × memory (the one GiB rule,
  efficiency.usable_gb) after weights and activations; it caps the running batch (as does the
  runtime's maximum batch) by the runtime's admission rule (efficiency.KvAdmission): each
  request's whole prompt + output where the runtime reserves it up front (TensorRT-LLM's
  GUARANTEED_NO_EVICT), its prompt + a share of its output where it allocates on demand and
  preempts when the pool runs out (vLLM V1, SGLang), which a note names past the whole count.
* A load of N concurrent requests per replica settles at a request rate given by Little's law,
  λ = N ÷ (TTFT + (output − 1) × ITL); prompts queue for the prefill share of the GPU
  (an M/D/1 wait); requests beyond the batch cap wait for a slot.
* An arrival rate is weighed against the shape's capacity at saturation: at or past it the load
  is not carried, and past ``NEAR_CAPACITY`` of it ``meets`` refuses the plan (more replicas).

Pure: frozen inputs, frozen outputs, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from app.domain import efficiency, formats, llm_step
from app.domain.efficiency import EfficiencyTable
from app.domain.figures import sig_figs
from app.domain.gpu import GpuSpec
from app.domain.units import gib
from app.domain.workload import ModelSpec, allocator_slack, context_gb, replicated_weight_bytes
from app.vocab import SERVING_PRECISION_ORDER as PRECISION_ORDER
from app.vocab import runtime_name

GB = 1e9

# ---------------------------------------------------------------- formats and runtimes

# Stored bits, labels and KV bytes per format: the one table inference reads too
# (app/domain/formats.py).
SERVED_WEIGHTS = PRECISION_ORDER
WEIGHT_BITS: dict[str, float] = {p: formats.bits(p) for p in SERVED_WEIGHTS}
WEIGHT_FORMAT: dict[str, str] = {p: formats.WEIGHT_FORMATS[p].label for p in SERVED_WEIGHTS}
KV_BYTES: dict[str, float] = {p: formats.kv_bytes(p) for p in formats.KV_FORMATS}


@dataclass(frozen=True, slots=True)
class RuntimeProfile:
    """What a serving runtime contributes, at the version its defaults were read from
    (data/efficiency.yaml ``serving_runtimes``; built by ``runtime_profile``)."""

    name: str
    version: str
    continuous_batching: bool
    # share of memory the runtime claims (vLLM gpu_memory_utilization, SGLang
    # mem_fraction_static); ``of_free`` = a share of what is left after the weights
    # (TensorRT-LLM free_gpu_memory_fraction)
    memory_utilization: float
    of_free: bool
    max_batch: int  # most sequences in one step (max_num_seqs / max_running_requests)
    chunk_tokens: int  # most tokens in one step (max_num_batched_tokens / chunked prefill)
    step_overhead_s: float  # per step: scheduling, sampling, what CUDA graphs do not hide
    source: str
    # host work per running sequence per step, overlapped with the GPU's step
    host_per_seq_s: float = 0.0
    # host work per running sequence per step run between GPU steps (a synchronous engine)
    serial_per_seq_s: float = 0.0
    # eager host dispatch per kernel of a step that carries prompt tokens (CUDA graphs for
    # decode-only steps alone), on the same host thread as the per-sequence work
    mixed_host_us_per_kernel: float = 0.0
    # several GPUs per replica: "tensor" (tensor parallel), "layers" (whole layers per GPU, a
    # token through them in turn) or "none"; and the micro-batch a layer split overlaps
    multi_gpu: str = "tensor"
    microbatch_tokens: int = 0
    # the scheduler limits the runtime picks on a large GPU: (least GiB, GPU names excepted,
    # max_batch, chunk_tokens); None: the two above on every GPU (``on``)
    large_gpu: tuple[float, tuple[str, ...], int, int] | None = None
    # a runtime with its own 4-bit format (llama.cpp: GGUF Q4_K_M): its name and stored bits
    # per weight over the whole file; None: AWQ/GPTQ (WEIGHT_BITS)
    int4_format: str | None = None
    int4_bits: float | None = None
    # (precision, format, bits per quantised weight) of the named format the job's weights at
    # that precision are stored in: a model's release (gpt-oss's MXFP4, 4.25 bits, served at
    # fp4), or one the runtime is ``reading`` at int4; the embeddings and output in 16-bit
    # (formats.weight_bytes' format_bits). None: the precision's own row (WEIGHT_BITS)
    named_format: tuple[str, str, float] | None = None
    # FP4 weights without FP4 tensor cores, weight-only, from this compute capability (vLLM's
    # Marlin FP4; efficiency.fp4_weight_only_min_cc); None: FP4 tensor cores only
    fp4_weight_only_min_cc: str | None = None
    # a dense model's FP8 weights without FP8 tensor cores, weight-only, from this compute
    # capability (vLLM's FP8 Marlin; efficiency.fp8_weight_only_min_cc); None: FP8 cores only
    fp8_weight_only_min_cc: str | None = None
    # other vendors' architectures with weight-only FP4 (efficiency.fp4_weight_only_archs)
    fp4_weight_only_archs: tuple[str, ...] = ()
    # the runtime's context and workspaces (GiB) where its efficiency rows give one (vLLM,
    # SGLang); None: the backend's (workload.context_gb, as LLM inference reads it)
    context_gib: float | None = None
    # bytes per logit its startup profiling pass reserves (efficiency.profiling_peak_gb);
    # None: no profiling pass
    profile_bytes_per_logit: float | None = None
    # the claim computed from the GPU's memory and tensor-parallel size (SGLang 0.5;
    # efficiency.claimed_share) and where its startup activations live
    # (efficiency.startup_activations_gb)
    reserve_rule: efficiency.ReserveRule | None = None
    startup_activations: str | None = None
    fp8_kv: bool = True  # has an FP8 KV cache format (efficiency.ServingSpec.fp8_kv)
    # how it admits requests against its KV pool (efficiency.KvAdmission): the whole prompt and
    # output reserved up front, or the cache allocated as tokens arrive (preempting when the
    # pool runs out), a running request counted at its prompt + a share of its output
    kv_admission: efficiency.KvAdmission = efficiency.RESERVE_FULL
    # allocates all its slots' KV cache at startup (efficiency.ServingSpec.kv_at_start)
    kv_at_start: bool = False
    # the runtime's efficiency rows on this GPU (data/efficiency.yaml), the ones LLM inference
    # reads: bandwidth and GEMM efficiency, kernel gaps, host dispatch, native datapaths
    decode: efficiency.RuntimeProfile = efficiency.EAGER
    prefill: efficiency.RuntimeProfile = efficiency.EAGER

    def on(self, gpu: GpuSpec) -> RuntimeProfile:
        """The profile with the scheduler limits the runtime picks on ``gpu`` (vLLM sizes its
        default max_num_seqs and max_num_batched_tokens by the device's memory)."""
        batch, chunk = efficiency.scheduler_limits(
            self.max_batch, self.chunk_tokens, self.large_gpu, gpu, self.reserve_rule
        )
        if (batch, chunk) == (self.max_batch, self.chunk_tokens):
            return self
        return replace(self, max_batch=batch, chunk_tokens=chunk, large_gpu=None)

    def bits(self, precision: str) -> float | None:
        """Stored bits per weight over the whole file where the runtime's own format differs
        from WEIGHT_BITS (formats.weight_bytes' own_bits)."""
        return self.int4_bits if precision == "int4" else None

    def format_bits(self, precision: str) -> float | None:
        """Bits per quantised weight of the named format weights at ``precision`` are in
        (formats.weight_bytes' format_bits); None where the precision's own row or the
        runtime's own format (``bits``) applies."""
        named = self.named_format
        return named[2] if named is not None and named[0] == precision else None

    def reading(self, fmt: str, bits: float) -> RuntimeProfile:
        """The runtime reading a model's weights in the named format ``fmt`` (``bits`` per
        quantised weight) on its own 4-bit path: llama.cpp's MXFP4 blocks go through the
        integer-dot kernels of its Q4 types (ggml-cuda vecdotq.cuh vec_dot_mxfp4_q8_1)."""
        return replace(self, int4_format=fmt, int4_bits=None, named_format=("int4", fmt, bits))


def runtime_profile(
    table: EfficiencyTable,
    name: str,
    decode: efficiency.RuntimeProfile | None = None,
    prefill: efficiency.RuntimeProfile | None = None,
) -> RuntimeProfile:
    """The serving runtime ``name`` from the efficiency table, with the profiles the table's
    decode and prefill rows give the same runtime on this GPU (resolved by the caller): the
    step function reads its efficiencies, kernel gaps, host dispatch and how a replica spans
    GPUs from them, as LLM inference does."""
    spec = table.serving.get(name)
    if spec is None:
        raise ValueError(f"data/efficiency.yaml has no serving runtime {name!r}")
    int4_bits = None
    if spec.int4_format is not None:
        int4_bits = table.bits_per_weight.get(spec.int4_format)
        if int4_bits is None:
            raise ValueError(f"serving runtime {name!r}: no bits for {spec.int4_format!r}")
    else:  # the runtime's own 4-bit file format, where it has one (MLX's affine 4-bit)
        int4_bits = formats.runtime_bits(name, "int4")
    return RuntimeProfile(
        name=name,
        version=spec.version,
        continuous_batching=spec.continuous_batching,
        memory_utilization=spec.memory_utilization,
        of_free=spec.of_free,
        max_batch=spec.max_batch,
        chunk_tokens=spec.chunk_tokens,
        step_overhead_s=spec.step_overhead_ms * 1e-3,
        host_per_seq_s=spec.step_overhead_per_seq_us * 1e-6,
        serial_per_seq_s=spec.step_serial_per_seq_us * 1e-6,
        mixed_host_us_per_kernel=spec.mixed_step_host_us_per_kernel,
        source=", ".join(spec.sources),
        multi_gpu=decode.span if decode is not None else "tensor",
        microbatch_tokens=decode.microbatch_tokens if decode is not None else 0,
        large_gpu=spec.large_gpu,
        int4_format=spec.int4_format,
        int4_bits=int4_bits,
        context_gib=table.runtime_value(name, "context_gib"),
        fp4_weight_only_min_cc=spec.fp4_weight_only_min_cc,
        fp8_weight_only_min_cc=spec.fp8_weight_only_min_cc,
        fp4_weight_only_archs=spec.fp4_weight_only_archs,
        profile_bytes_per_logit=spec.profile_bytes_per_logit,
        reserve_rule=spec.reserve_rule,
        startup_activations=spec.startup_activations,
        fp8_kv=spec.fp8_kv,
        kv_admission=spec.kv_admission or efficiency.RESERVE_FULL,
        kv_at_start=spec.kv_at_start,
        decode=decode if decode is not None else efficiency.EAGER,
        prefill=prefill if prefill is not None else (decode or efficiency.EAGER),
    )


# Backend → runtime used when the request names none. vLLM runs on Intel GPUs (Data Center GPU
# Max and Arc) with tensor parallelism (efficiency.yaml source vllm-xpu) and on Gaudi.
DEFAULT_RUNTIME = {
    "cuda": "vllm",
    "rocm": "vllm",
    "xpu": "vllm",
    "hpu": "vllm",  # Gaudi: the vllm-gaudi plugin (data/frameworks.yaml)
    "mps": "mlx",
    "cpu": "llama.cpp",
}

# Whole-model GEMM efficiency by datapath when the caller has none (the engine's NVIDIA
# datacenter prior 0.80 × model utilisation 0.70; perf.llm_efficiency gives the real ones).
DEFAULT_COMPUTE: dict[str, float] = {
    p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")
}


# ---------------------------------------------------------------- inputs and outputs


@dataclass(frozen=True, slots=True)
class ServingLoad:
    prompt_tokens: int
    output_tokens: int
    concurrent_requests: float | None = None
    requests_per_s: float | None = None
    # the KV cache is sized for mean + spread, so long requests are not preempted
    kv_extra_tokens: int = 0
    # prompt tokens of each request already in the server's prefix cache (a benchmark that
    # replays the same prompts under prefix caching): held in the KV cache and read by every
    # decode step, never computed; at least one prompt token is always computed
    cached_prompt_tokens: int = 0
    # the context each request is deployed with (``deploy_context``: the serve command's
    # --max-model-len, llama-server's -c ÷ -np), which a runtime that allocates its slots at
    # startup (RuntimeProfile.kv_at_start) sizes each slot's cache for; 0: the request's own
    # prompt + output + extra tokens (a benchmark's load, whose server was not ours)
    slot_tokens: int = 0

    @property
    def fresh_prompt_tokens(self) -> int:
        """The prompt tokens a request's prefill computes (at least one: the logits of the
        first output token need it)."""
        p = max(1, self.prompt_tokens)
        return p - min(max(0, self.cached_prompt_tokens), p - 1)


def deploy_context(
    prompt: int,
    output: int,
    spread: int = 0,
    max_context: int | None = None,
    native: int | None = None,
) -> int:
    """The context a serve command gives each request (vLLM's --max-model-len, llama-server's
    -c ÷ -np): room for the longest request the load describes, within the model's own limit.
    vLLM refuses a prompt longer than --max-model-len and cuts the answer at it, so the mean
    lengths would fail every longer request: mean + spread where the load gives a spread (what
    the plan sizes each request's KV cache for), else twice the mean. ``native``: the context
    the model serves without its RoPE scaling (a preset's ``long_context``), which a load whose
    stated lengths fit it is held to: the publisher advises the scaling only where long
    contexts are needed (Qwen3: "if the average context length does not exceed 32,768 tokens,
    we do not recommend enabling YaRN"), and twice the mean is a margin, not a need."""
    need = prompt + output + spread
    context = need if spread else 2 * (prompt + output)
    if max_context:
        context = min(context, max_context) if context else max_context
    if native and context > native and need <= native:
        context = native
    return context or 4096


@dataclass(frozen=True, slots=True)
class ServingTargets:
    ttft_ms: float | None = None  # None: no target (only ``with_defaults`` callers see one)
    itl_ms: float | None = None
    percentile: str = "p50"  # p50 | p95
    # which targets are the defaults below rather than the user's (for the wording)
    ttft_default: bool = False
    itl_default: bool = False


# Latency targets where the request sets none (methodology §6.7). Without a target anything that
# eventually answers "meets" the load, so the planner holds every configuration to MLPerf
# Inference's Llama 2 70B "Server" scenario: time to first token ≤ 2,000 ms and time per output
# token after the first (TPOT, the mean inter-token latency of a request) ≤ 200 ms
# (mlcommons/inference loadgen/mlperf.conf @ 001712e9: llama2-70b.Server.ttft_latency = 2000,
# llama2-70b.Server.tpot_latency = 200). MLPerf holds them at the 99th percentile
# (*.Server.target_latency_percentile = 99); the planner checks them at the percentile the
# request picks (p50 unless p95), which is looser. MLPerf's stricter "interactive" pair
# (llama2-70b-interactive: 450 ms and 40 ms) is one a chat product may want; users set it.
DEFAULT_TTFT_MS = 2000.0
DEFAULT_ITL_MS = 200.0
DEFAULT_TARGETS_SOURCE = (
    "MLPerf Inference Llama 2 70B Server scenario (TTFT ≤ 2 s, TPOT ≤ 200 ms; MLPerf holds "
    "them at p99)"
)


# The most of a plan's modelled capacity an arrival-rate load (``requests_per_s``) may take: an
# open-loop plan is sized with this margin, adding replicas until the load is within it (``meets``
# refuses the rest). Under random (Poisson) arrivals a queue's wait grows as ρ ÷ (1 − ρ) (M/M/1;
# Kingman's G/G/1 formula, Wq ≈ ρ ÷ (1 − ρ) × (ca² + cs²) ÷ 2 × the service time): ×4 at 80 %,
# ×9 at 90 %, without bound towards 100 %. A continuous-batching server is no single FIFO queue,
# so the rule is a margin, not a latency: the waits a rate load's TTFT adds are modelled in
# ``_solve`` (its prompts' M/D/1 wait, its KV slots' Erlang C). And the capacity is itself a
# model: a row's serving band puts its low edge at 0.68–0.81 of it (0.81–1.17 held out by GPU
# and workload in benchmarks/accuracy.py, wider where the row's runtime or card is not in it).
# A fixed number of concurrent clients (a closed loop) cannot outrun the servers: not weighed.
NEAR_CAPACITY = 0.8


def with_defaults(targets: ServingTargets) -> ServingTargets:
    """``targets`` with MLPerf's defaults wherever the request left one unset, flagged as such.
    A user who wants no limit on one sets it high (the API allows up to an hour)."""
    ttft_default, itl_default = targets.ttft_ms is None, targets.itl_ms is None
    return ServingTargets(
        DEFAULT_TTFT_MS if ttft_default else targets.ttft_ms,
        DEFAULT_ITL_MS if itl_default else targets.itl_ms,
        targets.percentile,
        ttft_default=ttft_default,
        itl_default=itl_default,
    )


@dataclass(frozen=True, slots=True)
class ServingConfig:
    gpus_per_replica: int
    replicas: int
    weight_precision: str
    kv_precision: str
    runtime: str


@dataclass(frozen=True, slots=True)
class CurvePoint:
    concurrency: int
    itl_ms: float
    ttft_ms: float
    output_tokens_per_s: float  # one replica


# Why a card the catalog gives no compute figures (an Apple chip with no sourced TFLOPS) is not
# served: ServingResult.no_figures tells it from a memory miss
NO_FIGURES = "no compute figures for this GPU"


@dataclass(frozen=True, slots=True)
class ServingResult:
    config: ServingConfig
    fits: bool
    reason: str | None
    weights_gb_per_gpu: float
    kv_pool_gb_per_gpu: float
    activations_gb_per_gpu: float
    framework_gb_per_gpu: float
    kv_gb_per_request: float
    max_concurrency: int  # per replica
    ttft_ms: float | None
    ttft_p95_ms: float | None
    itl_ms: float | None
    itl_p95_ms: float | None
    output_tokens_per_s: float | None  # all replicas, at the asked load
    input_tokens_per_s: float | None
    max_output_tokens_per_s: float  # all replicas, at saturation
    requests_per_s: float | None
    saturated: bool
    prefill_share: float  # share of GPU time spent on prompts
    bottleneck: str
    compute_precision: str
    curve: tuple[CurvePoint, ...]
    notes: tuple[str, ...] = ()
    step: llm_step.StepTime | None = None  # the decode step at the asked load, by its parts
    # copies of a request's KV cache its replica holds (llm_step.kv_copies: every GPU of a
    # tensor-parallel group holds a latent-attention model's whole cache)
    kv_copies: float = 1.0
    # of ``activations_gb_per_gpu``, what the runtime keeps out of its pool at startup by its
    # own rule (``startup_reserve_gb``: vLLM's sampler peak), the share LLM inference takes
    # off its usable memory instead (evaluate.usable_gb); 0 where it has no such rule
    reserve_gb_per_gpu: float = 0.0
    # an arrival-rate load's share of the plan's modelled capacity (the asked requests/s over
    # its rate at saturation, all replicas); None under concurrent clients or where not solved
    load_share: float | None = None
    # the KV cache a running request is counted at by the runtime's admission rule (on demand:
    # its prompt + a share of its output, efficiency.KvAdmission); None: ``kv_gb_per_request``
    kv_held_gb_per_request: float | None = None
    # requests per replica whose whole prompt + output the pool holds at once (the count a
    # reserve-full runtime runs); None where not worked out
    reserve_full_concurrency: int | None = None
    kv_admission: efficiency.KvAdmission = efficiency.RESERVE_FULL
    # the runtime allocates every slot's KV cache at startup (RuntimeProfile.kv_at_start): its
    # memory holds ``max_concurrency`` slots' caches however few requests run
    kv_at_start: bool = False

    @property
    def total_gpus(self) -> int:
        return self.config.gpus_per_replica * self.config.replicas

    @property
    def no_figures(self) -> bool:
        """Left out for want of compute figures, not of memory (the exclusion's no_figures,
        as every other task codes it: evaluate's)."""
        return not self.fits and self.reason == NO_FIGURES

    def kv_gb_per_gpu(self, running: float) -> float:
        """The KV cache ``running`` requests fill on each GPU of a replica, as the capacity
        counts it (_capacity: on demand, what each holds on average): split over the group,
        times the copies it holds. A runtime that allocates its slots at startup holds all of
        them (llama-server: the -c it is started with, however few requests run)."""
        if self.kv_at_start:
            running = float(self.max_concurrency)
        return running * self.kv_held_gb * self.kv_copies / self.config.gpus_per_replica

    @property
    def kv_held_gb(self) -> float:
        """The KV cache (GB) a running request is counted at: its whole prompt + output under a
        reserve-full runtime, its prompt + a share of its output on demand."""
        held = self.kv_held_gb_per_request
        return self.kv_gb_per_request if held is None else held

    def running(self, concurrent: float | None, requests_per_s: float | None) -> float:
        """Requests each replica runs at once at the load: the concurrent ones shared out, or
        under a rate load the output rate over one request's token rate (Little's law)."""
        cap = float(self.max_concurrency)
        r = self.config.replicas
        tput = self.output_tokens_per_s or 0.0
        if requests_per_s is not None and self.requests_per_s:
            return min(cap, tput / r / max(1e-9, 1000.0 / (self.itl_ms or 1.0)))
        return min(cap, (concurrent or 0.0) / r)

    def used_gb_per_gpu(self, running: float) -> float:
        """What each GPU of a replica holds with ``running`` requests: weights, workspace,
        framework and their KV cache (the rest of the runtime's pool stays free for more)."""
        return (
            self.weights_gb_per_gpu
            + self.activations_gb_per_gpu
            + self.framework_gb_per_gpu
            + self.kv_gb_per_gpu(running)
        )


# ---------------------------------------------------------------- model arithmetic


def weights_name(precision: str, weight_format: str) -> str:
    """Serving weights by their format's own name where they have one (MXFP4 as released, GGUF
    Q4_K_M: a ``weight_format`` other than the precision's own WEIGHT_FORMAT label), else by
    their precision (int4 under llama.cpp is the datapath, not what the file holds)."""
    if weight_format == WEIGHT_FORMAT.get(precision):
        return precision
    return weight_format.split(" (")[0]


def held_weights(m: ModelSpec, precision: str, rt: RuntimeProfile) -> float:
    """The whole model's stored weights at ``precision`` as ``rt`` holds them: its own format's
    whole-file bits, or the named format it is in (``RuntimeProfile.bits``, ``format_bits``)."""
    return weight_bytes(m, precision, rt.bits(precision), format_bits=rt.format_bits(precision))


def weights_per_gpu(m: ModelSpec, precision: str, rt: RuntimeProfile, n: int) -> float:
    """Bytes of weights each of a replica's ``n`` GPUs holds: its 1/n share of ``held_weights``
    plus, under tensor parallelism, the weights every rank keeps whole beyond that share
    (workload.replicated_weight_bytes: latent attention's down-projections)."""
    held = held_weights(m, precision, rt) / max(1, n)
    if n <= 1 or rt.multi_gpu != "tensor":
        return held  # a layer split: each GPU holds its own layers, none whole twice
    value = formats.quantised_value_bytes(
        precision, rt.bits(precision), format_bits=rt.format_bits(precision)
    )
    return held + replicated_weight_bytes(m, value, n)


def weight_bytes(
    m: ModelSpec, precision: str, bits: float | None = None, *, format_bits: float | None = None
) -> float:
    """Stored weights at ``precision`` (``bits``: a runtime's own format, a whole-file mean;
    ``format_bits``: a named format's bits per quantised weight): formats.weight_bytes, the
    rule inference reads too."""
    return formats.weight_bytes(m, precision, bits, format_bits=format_bits)


expert_split = llm_step.expert_split
native_fp4 = llm_step.native_fp4


def kv_values(m: ModelSpec, context: float) -> float:
    values = m.kv_values(context)
    if values is None:
        raise ValueError("the model needs layers and hidden_size (or a config.json) to serve")
    return values


def peak_tflops(
    gpu: GpuSpec, precision: str, runtime: RuntimeProfile | None = None
) -> tuple[float | None, str]:
    """Dense tensor peak the linear layers of a ``precision`` checkpoint run at, and that
    datapath (llm_step.datapath under the runtime's prefill profile)."""
    prof = runtime.prefill if runtime is not None else _SERVING_DATAPATHS
    peak, mode = llm_step.datapath(gpu, precision, prof)
    return peak or None, mode


# Without a runtime: a serving runtime's native low-precision GEMMs (vLLM/SGLang W8A8 and
# FP8, TensorRT-LLM FP8/INT8/FP4; data/efficiency.yaml)
_SERVING_DATAPATHS = efficiency.RuntimeProfile(native=("fp8", "int8", "fp4"))


def supports_weights(
    gpu: GpuSpec,
    precision: str,
    runtime: RuntimeProfile | None = None,
    model: ModelSpec | None = None,
) -> str | None:
    """None when the GPU can serve weights in ``precision``, else why not. A runtime with its
    own 4-bit format (llama.cpp's GGUF) needs no Marlin kernels for it; a dense ``model``'s fp8
    weights run weight-only where the runtime has such kernels (llm_step.fp8_weight_only)."""
    cc = gpu.compute_capability or ""
    major = int(cc.split(".")[0]) if cc[:1].isdigit() else 0
    fp8_min = runtime.fp8_weight_only_min_cc if runtime is not None else None
    if precision == "fp8" and not gpu.fp8_tflops:
        if model is not None and llm_step.fp8_weight_only(gpu, model, fp8_min):
            return None
        if fp8_min is not None and model is not None and (model.experts or 0) > 1:
            return "no fp8 tensor cores (weight-only fp8 kernels run dense models only)"
        return "no fp8 tensor cores"
    fp4_min = runtime.fp4_weight_only_min_cc if runtime is not None else None
    archs = runtime.fp4_weight_only_archs if runtime is not None else ()
    if (
        precision == "fp4"
        and not native_fp4(gpu)
        and not llm_step.fp4_weight_only(gpu, fp4_min, archs)
    ):
        if fp4_min is not None:
            return (
                f"fp4 (NVFP4/MXFP4) needs Blackwell tensor cores, or compute capability "
                f"{fp4_min}+ for {runtime_name(runtime.name) if runtime else 'the runtime'}'s "
                f"weight-only kernels"
            )
        return "fp4 (NVFP4/MXFP4) needs Blackwell tensor cores"
    own_int4 = runtime is not None and runtime.int4_format is not None
    if precision == "int4" and gpu.vendor == "nvidia" and major < 8 and not own_int4:
        return "int4 AWQ/GPTQ (Marlin) kernels need compute capability 8.0+"
    if precision == "int8" and not gpu.int8_tops:
        return "no int8 tensor figure"
    return None


def supports_kv(gpu: GpuSpec, kv: str, rt: RuntimeProfile | None = None) -> str | None:
    if kv == "fp8" and rt is not None and not rt.fp8_kv:
        return f"fp8 KV cache: {rt.name} has no such cache format"
    if kv == "fp8" and not gpu.fp8_tflops:
        return "fp8 KV cache needs fp8 support (Ada, Hopper, Blackwell, MI300)"
    return None


def replica(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: ServingConfig,
    rt: RuntimeProfile,
    mem_eff: float,
    comp_eff: Mapping[str, float],
) -> llm_step.Replica:
    """One replica of the configuration: the one LLM step function's replica (the one LLM
    inference builds), plus the server's fixed cost per step."""
    return llm_step.replica(
        gpu,
        model,
        weights=cfg.weight_precision,
        kv=cfg.kv_precision,
        n=cfg.gpus_per_replica,
        decode=rt.decode,
        prefill=rt.prefill,
        memory_efficiency=mem_eff,
        compute_efficiency=comp_eff,
        own_bits=rt.bits(cfg.weight_precision),
        format_bits=rt.format_bits(cfg.weight_precision),
        scheduler_s=rt.step_overhead_s,
        host_per_seq_s=rt.host_per_seq_s,
        serial_per_seq_s=rt.serial_per_seq_s,
        mixed_host_us_per_kernel=rt.mixed_host_us_per_kernel,
        # a server's executor, not a static session: its prompt steps are priced by the
        # serving runtime (mixed_host_us_per_kernel), not by the session's context_layer_us
        session_context=False,
    )


def memory_plan(
    gpu: GpuSpec, model: ModelSpec, cfg: ServingConfig, rt: RuntimeProfile, usable_gb: float
) -> tuple[float, float, float, float]:
    """Per GPU, in GB: weights, activations (with the allocator slack of a runtime that
    claims nothing up front), framework, KV pool (may be negative). ``usable_gb``: the GPU's
    usable memory at share 1 (efficiency.usable_gb); the runtime's claim at this replica's
    tensor-parallel size on this GPU applies here (efficiency.claimed_share, efficiency.kv_pool_gb).
    Weights, slack, context and the activations a runtime reserves at startup are the rules
    LLM inference's memory reads (formats.weight_bytes, workload.allocator_slack,
    workload.context_gb, efficiency.startup_activations_gb)."""
    tp = cfg.gpus_per_replica
    weights = weights_per_gpu(model, cfg.weight_precision, rt, tp) / GB
    h = float(model.hidden_size or 0)
    inter = float(model.intermediate_size or 4 * h)
    split = tp if rt.multi_gpu == "tensor" else 1
    act_gb = startup_reserve_gb(gpu, model, cfg, rt)
    if act_gb is None:
        # a runtime that allocates as it goes: one full chunk's hidden states, QKV and MLP
        # intermediates (16-bit) and fp32 logits of the sampled rows
        act = rt.chunk_tokens * (4.0 * h + 2.0 * inter / split) * 2.0
        act += min(rt.max_batch, rt.chunk_tokens) * (model.vocab_size or 0) * 4.0 / split
        act_gb = act / GB
    share = efficiency.claimed_share(rt.memory_utilization, rt.reserve_rule, tp, gpu)
    act_gb += allocator_slack(weights * GB, share, rt.of_free) / GB
    fw = context_gb(_backend(gpu), rt.context_gib)
    pool = efficiency.kv_pool_gb(usable_gb, weights + act_gb + fw, share, rt.of_free)
    return weights, act_gb, fw, pool


def startup_reserve_gb(
    gpu: GpuSpec, model: ModelSpec, cfg: ServingConfig, rt: RuntimeProfile
) -> float | None:
    """Per GPU, in GB: the activations the runtime keeps out of its KV pool when it sizes the
    pool at startup, by its own rule (vLLM's profiling peak over its max_num_seqs on this GPU,
    SGLang's nothing inside its claim, TensorRT-LLM's warm-up forward of max_num_tokens): the
    one rule LLM inference takes off its usable memory (efficiency.startup_activations_gb,
    evaluate.usable_gb). None: the runtime has no such rule (it allocates as it goes)."""
    h = float(model.hidden_size or 0)
    on = rt.on(gpu)
    return efficiency.startup_activations_gb(
        per_logit=rt.profile_bytes_per_logit,
        rows=on.max_batch,
        mode=rt.startup_activations,
        tokens=on.chunk_tokens,
        vocab=model.vocab_size,
        hidden=h,
        intermediate=float(model.intermediate_size or 4 * h),
        # a layer split computes the intermediates whole on each GPU
        tp=cfg.gpus_per_replica if rt.multi_gpu == "tensor" else 1,
    )


def _backend(gpu: GpuSpec) -> str:
    """The backend whose context a serving replica pays (CUDA or ROCm where the GPU has it)."""
    for b in ("cuda", "rocm"):
        if b in gpu.backends:
            return b
    return gpu.backends[0] if gpu.backends else "default"


@dataclass(frozen=True, slots=True)
class _Point:
    itl: float
    itl_p95: float
    ttft: float
    ttft_p95: float
    rate: float  # requests/s, one replica
    batch: float
    prefill_share: float
    bound: str
    step: llm_step.StepTime | None = None  # the decode step ITL is: what its time is made of
    stall_share: float = 0.0  # token gaps behind another's prompt chunk (_stall_share)
    stall_s: float = 0.0  # such a gap


def _solve(
    eng: llm_step.Replica,
    rt: RuntimeProfile,
    load_n: float | None,
    load_rate: float | None,
    p: int,
    o: int,
    cap: float,
    fresh: int | None = None,
    share: bool = False,
    recompute: float = 0.0,
) -> _Point | None:
    """Steady state of one replica under ``load_n`` concurrent requests (closed loop) or
    ``load_rate`` requests/s (open loop). None when an open-loop rate exceeds capacity.
    ``fresh``: the prompt tokens a prefill computes (``ServingLoad.fresh_prompt_tokens``;
    ``p`` when none is cached): the decode steps read the KV of all ``p``, the prompt work and
    the step's token budget see ``fresh`` alone. The fresh tokens' attention over the cached
    prefix is left out (priced as a ``fresh``-token prompt's own: 16 tokens over 2,048 is
    < 0.1 % of a decode's attention over the same context). ``recompute``: the tokens each
    request re-prefills on average after preemptions (``lockstep``), prompt work the steps carry
    beside the fresh prompts (priced at the prompt's own length: the longer contexts' extra
    attention is left out)."""
    ctx = p + o / 2.0
    q = p if fresh is None else max(1, min(fresh, p))
    chunk = rt.chunk_tokens
    t_prefill_alone, _ = eng.step(0.0, 0.0, float(q), float(q), with_prompt=True)
    if not rt.continuous_batching:
        # one request at a time: prefill, then o − 1 decode steps at batch 1
        one = eng.parts(1.0, ctx, 0.0, float(q))
        itl, bound = one.seconds, one.bound
        service = t_prefill_alone + (o - 1) * itl
        if load_rate is not None:
            rho = load_rate * service
            if rho >= 1.0:
                return None
            wait = rho / (2.0 * (1.0 - rho)) * service
            rate = load_rate
        else:
            n = max(1.0, load_n or 1.0)
            wait = (n - 1.0) * service
            rate = 1.0 / service
        return _Point(
            itl,
            itl,
            t_prefill_alone + wait,
            t_prefill_alone + 3.0 * wait,
            rate,
            1.0,
            t_prefill_alone / service,
            bound,
            one,
        )

    # The step's token budget (max_num_batched_tokens / max_num_tokens) bounds the decoding
    # batch too: in a steady state each step also carries the prompt tokens of the requests
    # that replace finished ones, b × p ÷ o, so at most chunk × o ÷ (p + o) sequences decode
    # while the budget keeps up with their prompts; requests beyond wait for it (in TTFT)
    work = q + max(0.0, recompute)  # prompt tokens computed per request
    slots = max(1.0, min(float(cap), chunk * o / (work + o)))
    users = max(1.0, load_n or 1.0)
    foreign = 1.0 if load_rate is not None else (users - 1.0) / users

    def busy(batch: float) -> tuple[float, float, float, str, llm_step.StepTime]:
        """What a request's steps cost at ``batch`` running, whatever the arrival rate: its
        decode step (the server's average one), its own prompt's chunks, and a decode step
        carrying another's chunk."""
        b = max(1.0, min(batch, slots))
        # A request shares its steps with the others running, never with its own successor:
        # in a closed loop the next prompt is sent when this answer ends, and a replacement
        # takes the slot its request frees. So its decode steps carry the prompt tokens that
        # replace the other b − 1 (b × p ÷ o in all, less its own share), and its prompt's
        # chunks run beside the other b − 1 decodes. One user: decode steps alone, as LLM
        # inference prices them, and the prompt alone.
        others = b - 1.0
        prefill_per_step = others * work / o
        step = eng.parts(b, ctx, prefill_per_step, float(q))
        # the prompt itself: chunks that share steps with the others' decodes
        room = max(chunk - others, chunk / 4.0)
        n_chunks = max(1, math.ceil(q / room))
        piece = q / n_chunks
        t_chunk, _ = eng.step(others, ctx, piece, float(q), with_prompt=True)
        # a decode step that also carries another request's prompt chunk (its ITL p95)
        t_mixed = eng.step(b, ctx, piece, float(q), with_prompt=True)[0] if others else step.seconds
        return step.seconds, n_chunks * t_chunk, t_mixed, step.bound, step

    def queued(own: float, rate: float) -> float:
        """The wait for the prompts ahead of a request's own: any request's in an open loop
        (arrivals independent of it), the other users' in a closed loop (one user never
        waits)."""
        rho = min(0.99, rate * foreign * t_prefill_alone)
        return rho / (2.0 * (1.0 - rho)) * own

    if load_rate is not None:
        # open loop: find the concurrency Little's law implies
        n = 1.0
        for _ in range(60):
            itl, own, _t, _b, _s = busy(n)
            n_new = load_rate * (own + queued(own, load_rate) + itl / 2.0 + (o - 1) * itl)
            if n_new > slots * 1.0001 or load_rate * t_prefill_alone >= 0.99:
                return None
            if abs(n_new - n) < 1e-3 * max(1.0, n):
                n = n_new
                break
            n = 0.5 * (n + n_new)
        rate = load_rate
        if n >= slots:
            return None  # the slots' queue never settles (Erlang C needs a < c)
    else:
        n = max(1.0, load_n or 1.0)
        running = min(n, slots)
        rate = 0.0
        # the steps' costs do not depend on the rate (only the queue for prompts does): one
        # pricing of the running batch, then the rate's fixed point over scalars
        parts = busy(running)
        itl, own = parts[0], parts[1]
        for _ in range(60):
            new = running / (own + queued(own, rate) + itl / 2.0 + (o - 1) * itl)
            if abs(new - rate) < 1e-4 * max(new, 1e-9):
                rate = new
                break
            rate = 0.5 * (rate + new)
    itl, own, t_chunk, bound, step = busy(n) if load_rate is not None else parts
    wait = queued(own, rate)
    ttft = own + wait + itl / 2.0
    ttft_p95 = ttft + 2.0 * wait
    queue = 0.0
    if load_n is not None and load_n > slots and rate > 0:
        queue = (load_n - slots) / rate  # clients beyond the running slots wait for one
        ttft_p95 += 3.0 * queue
    elif load_rate is not None:
        # random arrivals find every slot busy at times though n < slots on average: each
        # request holds a slot for n ÷ λ (Little's law), so the slots are an M/M/c queue
        queue, tail = slot_wait(slots, n, load_rate, 0.95)
        ttft_p95 = max(ttft + queue, ttft_p95 + tail)
    # a step that carries another request's prompt chunk is slower; it is the p95 ITL once
    # ≥5 % of a request's token gaps are such steps (the others' prompts: none for one user)
    stall = (
        _stall_share(eng, n, slots, ctx, q, chunk, rate, t_chunk, load_rate is not None)
        if share
        else 0.0
    )
    itl_p95 = t_chunk if stall >= STALL_PERCENTILE_SHARE else itl
    # the prompts' share of the GPU's time prices the $ split of the asked load alone: the
    # curve's and saturation's points skip its two extra steps
    prefill = _prefill_share(eng, min(n, slots), ctx, q, chunk, rate) if share else 0.0
    return _Point(
        itl,
        max(itl, itl_p95),
        ttft + queue,
        ttft_p95,
        rate,
        min(n, slots),
        prefill,
        bound,
        step,
        stall,
        t_chunk,
    )


# The p95 ITL is a stalled gap once this share of a request's token gaps wait behind another
# request's prompt chunk (1 − 0.95)
STALL_PERCENTILE_SHARE = 0.05


def _stall_share(
    eng: llm_step.Replica,
    n: float,
    slots: float,
    ctx: float,
    q: int,
    chunk: int,
    rate: float,
    t_mixed: float,
    open_loop: bool = False,
) -> float:
    """The share of a running request's token gaps that are steps carrying another request's
    prompt chunk. The steps are counted as the server runs them — chunk-carrying steps of
    ``t_mixed`` s, decode-only steps filling the rest of each second — not as the average step
    (which spreads the prompts over every step and so undercounts the stalls: at 1.67
    prompts/s of 0.23 s each, 28 ms average steps read 4.7 % where the 22 ms decode-only
    steps make it 5.6 %). ``open_loop``: random arrivals (a rate load), each another request's
    while this one decodes; a closed loop's own next prompt waits for its answer, so only the
    others' share of the rate stalls it."""
    running = min(n, slots)
    others = max(0.0, running - 1.0)
    if rate <= 0.0 or (not others and not open_loop):
        return 0.0
    chunks_per_s = rate if open_loop else rate * others / max(1.0, running)
    chunks_per_s *= max(1, math.ceil(q / max(chunk - others, chunk / 4.0)))
    t_dec = eng.step(max(1.0, running), ctx, 0.0, float(q))[0]
    decode_steps = max(0.0, 1.0 - chunks_per_s * t_mixed) / max(t_dec, 1e-12)
    return chunks_per_s / (chunks_per_s + decode_steps)


def erlang_c(c: float, a: float) -> float:
    """The chance an arrival waits (Erlang C) at ``c`` servers and ``a`` offered load
    (erlangs, a < c), from Erlang B: B(c, a)⁻¹ = 1 + c ÷ a × B(c − 1, a)⁻¹, and C = c × B ÷
    (c − a × (1 − B)) (any queueing text: Kleinrock, Queueing Systems I, §3.5; Gross & Harris,
    Fundamentals of Queueing Theory, §2.3). A fractional ``c`` (a step's token budget caps the
    running batch at a fraction of a slot) starts the recursion from Jagerman's continuous
    Erlang B, B(x, a)⁻¹ = ∫₀^∞ e^(−u) (1 + u ÷ a)^x du (Bell System Technical Journal 53,
    1974; DLMF §8.23: B(x, a) = aˣ e⁻ᵃ ÷ Γ(x + 1, a)), integrated here for the fractional
    part x < 1."""
    if a <= 0.0:
        return 0.0
    if a >= c:
        return 1.0
    k = math.floor(c)
    x = c - k
    inv = 1.0
    if x > 1e-9:
        # u = s²: Simpson's rule over s in [0, 7] (e^(−49) is past a float's use)
        steps, h = 400, 7.0 / 400
        total = 0.0
        for i in range(steps + 1):
            s = i * h
            f = 2.0 * s * math.exp(-s * s) * (1.0 + s * s / a) ** x
            total += f * (1 if i in (0, steps) else 4 if i % 2 else 2)
        inv = total * h / 3.0
    for j in range(1, k + 1):
        inv = 1.0 + (x + j) / a * inv
        if inv > 1e300:
            return 0.0
    b = 1.0 / inv
    return min(1.0, c * b / (c - a * (1.0 - b)))


def slot_wait(c: float, a: float, rate: float, pct: float) -> tuple[float, float]:
    """The wait for one of ``c`` slots under Poisson arrivals at ``rate``/s, each held for
    ``a`` ÷ ``rate`` s (``a`` requests running on average, Little's law), as an M/M/c queue:
    its mean, C ÷ (cμ − λ), and its ``pct`` percentile, from P(W > t) = C e^(−(cμ − λ) t)
    (Erlang C, ``erlang_c``). A slot is a request's KV cache (or its share of the step's token
    budget): with 4 slots and 3.88 running a request waits a minute on average, not nothing."""
    if a <= 0.0 or rate <= 0.0:
        return 0.0, 0.0
    if a >= c:
        return math.inf, math.inf
    p_wait = erlang_c(c, a)
    drain = rate * (c - a) / a  # cμ − λ, μ = rate ÷ a
    tail = math.log(p_wait / (1.0 - pct)) / drain if p_wait > 1.0 - pct else 0.0
    return p_wait / drain, tail


def _prefill_share(
    eng: llm_step.Replica, running: float, ctx: float, q: int, chunk: int, rate: float
) -> float:
    """The share of the GPU's time the prompts take: each prompt runs in chunks beside the other
    running requests' decodes, and costs what its chunks add to those steps (``rate`` prompts a
    second). One request at a time: its prompt alone. The decodes read the weights anyway, so a
    prompt in a batch pays its own FLOPs and KV, not another pass over the weights: a lone
    prefill's time for every prompt had charged each its own pass, so a busy server's prompts
    took all its hours and its output tokens came free."""
    others = max(0.0, running - 1.0)
    room = max(chunk - others, chunk / 4.0)
    n_chunks = max(1, math.ceil(q / room))
    piece = q / n_chunks
    with_chunk = eng.step(others, ctx, piece, float(q), with_prompt=True)[0]
    without = eng.step(others, ctx, 0.0, float(q))[0] if others else 0.0
    return min(1.0, max(0.0, rate * n_chunks * (with_chunk - without)))


def _capacity(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: ServingConfig,
    rt: RuntimeProfile,
    usable: float,
    load: ServingLoad,
    cap: bool = True,
) -> tuple[float, float, float, float, float, int, float, int]:
    """One replica's memory per GPU (weights, activations, framework, KV pool, in GB), the KV
    bytes of one request at its whole length, the most requests it runs at once (the runtime's
    maximum batch or what the pool holds by its admission rule; what the pool holds alone where
    not ``cap``), the KV bytes a running request is counted at by that rule, and the requests
    whose whole prompt + output the pool holds at once (the reserve-full count).

    A runtime that reserves the whole request (TensorRT-LLM's GUARANTEED_NO_EVICT) holds the
    reserve-full count; one that allocates on demand (vLLM V1, SGLang) runs as many as hold
    their prompt + ``output_share`` × output on average (efficiency.KvAdmission), preempting
    when the pool runs out. Either way the longest request must fit alone: no room for one
    whole request is no room (``cap`` 0)."""
    p, o = max(1, load.prompt_tokens), max(1, load.output_tokens)
    extra = max(0, load.kv_extra_tokens)
    weights, act, fw, pool = memory_plan(gpu, model, cfg, rt, usable)
    per = KV_BYTES[cfg.kv_precision]
    kv_req = kv_values(model, p + o + extra) * per
    if rt.kv_at_start and load.slot_tokens > 0:
        # llama-server sizes every slot at the deployed context (-c ÷ -np), not the request's
        kv_req = kv_values(model, load.slot_tokens) * per
    admit = rt.kv_admission
    # the spread (mean + spread: ``kv_extra_tokens``) stays a margin on what each one holds
    kv_held = (
        kv_values(model, p + admit.output_share * o + extra) * per if admit.on_demand else kv_req
    )
    # a latent-attention model under tensor parallelism holds its whole cache on every GPU of
    # the group (llm_step.kv_copies): the pools of the group hold that many copies, not one
    copies = llm_step.kv_copies(model, llm_step.span(rt.decode, cfg.gpus_per_replica)[0])
    room = pool * GB * cfg.gpus_per_replica / copies if pool > 0 else 0.0
    full = int(room // kv_req) if room > 0 else 0
    cap_kv = int(room // kv_held) if full >= 1 else 0
    held = min(rt.max_batch, cap_kv) if cap else cap_kv
    return weights, act, fw, pool, kv_req, held, kv_held, full


@dataclass(frozen=True, slots=True)
class Lockstep:
    """Requests admitted together at one length under on-demand admission, their caches
    growing one token a step in step (``lockstep``): what the pool's running out costs."""

    admitted: int  # running at the start: the batch cap, or the prompts the pool holds
    # running at the sweep's end: those whose whole prompt + output the pool holds (their
    # prompts admitted over a ramp of R steps: prompt + output − R ÷ 2 each)
    whole: int
    mean_running: float  # the running count averaged over the output's steps
    preempted: int  # admitted − whole: preempted before they finish, recomputed later
    recompute_tokens: float  # the contexts they re-prefill, per admitted request
    full_from: float  # the output token at which the pool is full (the output: never)

    @property
    def preempted_share(self) -> float:
        return self.preempted / self.admitted if self.admitted else 0.0


def lockstep(
    admitted: int, prompt: int, output: int, pool_tokens: float, step_tokens: float = math.inf
) -> Lockstep:
    """``admitted`` requests of ``prompt`` + ``output`` tokens started together on a KV pool of
    ``pool_tokens`` that admits on demand (vLLM V1; TensorRT-LLM's MAX_UTILIZATION), in
    expectation; ``step_tokens``: the step's token budget, which admits their prompts over
    R = admitted × prompt ÷ step_tokens steps (at most the output).

    Started together, n requests hold n × (prompt + t) at output token t; once that passes the
    pool the newest is preempted (vLLM V1: ``self.running.pop()``; TensorRT-LLM pauses the last
    started). Admitted over R steps, their ages spread evenly over R, so they hold n × (prompt +
    R ÷ 2 + t') as the mean age R ÷ 2 + t' runs to its peak output − R ÷ 2 (when the first
    finishes, and a steady stream follows): the same sweep, from prompt + R ÷ 2 over output − R
    tokens. At R = output that is the steady state's prompt + half the output
    (efficiency.ON_DEMAND_OUTPUT_SHARE); at R = 0 the whole request. From t* = pool ÷ n −
    prompt − R ÷ 2 the pool runs pool ÷ (prompt + R ÷ 2 + t') of them, down to ``whole``; the
    k-th to go is the newest, holding pool ÷ k − R ÷ 2, and is recomputed in full: its prompt and
    the output it had made become its new prompt (vLLM's RECOMPUTE mode, the V1 default:
    ``num_computed_tokens = 0``; TensorRT-LLM's ``LlmRequest::pause`` moves the generated tokens
    into the prompt), none of it kept (the survivors' growth takes its freed blocks within a few
    hundred steps, long before it is readmitted). So ``admitted − whole`` are preempted and the
    running count averages (n t* + pool ln(span end ÷ span start)) ÷ output over the output
    (n through the ramp). A second preemption of a readmitted request is left out."""
    p, o = max(1, prompt), max(1, output)
    c = max(0.0, pool_tokens)
    n = min(max(0, admitted), int(c // p))
    ramp = min(float(o), n * p / step_tokens) if step_tokens > 0 else float(o)
    lo = p + ramp / 2.0  # the held tokens per request at the sweep's start
    hi = p + o - ramp / 2.0  # and at its peak
    whole = min(n, int(c // hi))
    if n <= whole:
        return Lockstep(n, n, float(n), 0, 0.0, float(o))
    t_star = max(0.0, c / n - lo)
    span = o - ramp
    # through the ramp what the pool holds at its start, then n to t*, then pool ÷ (held)
    sweep = c * math.log(hi / (lo + t_star)) if span > 0 else 0.0
    running = min(n, c / lo) * ramp + n * t_star + sweep
    recompute = sum(max(float(p), c / k - ramp / 2.0) for k in range(whole + 1, n + 1)) / n
    return Lockstep(n, whole, min(float(n), running / o), n - whole, recompute, t_star)


def _replicas_needed(load: ServingLoad, cfg: ServingConfig, sat: _Point) -> str:
    """How many replicas of the shape carry an open-loop load it is too small for (an SRE's
    question: "how many"), at saturation and at ``NEAR_CAPACITY`` of it, the margin random
    arrivals want and the one plans are sized to; "" where the rate is unknown."""
    rps = load.requests_per_s
    if rps is None or sat.rate <= 0.0:
        return ""
    # a rate that is exactly n replicas' capacity needs n + 1: at share 1 it is not carried
    full = math.floor(rps / sat.rate) + 1
    margin = replicas_for(rps, sat.rate)
    g = cfg.gpus_per_replica
    said = (
        f": {full} replica{'s' if full > 1 else ''} of {g} GPU{'s' if g > 1 else ''} "
        f"({full * g} GPU{'s' if full * g > 1 else ''}) carry it at saturation"
    )
    return said + (
        f", {margin} at {100 * NEAR_CAPACITY:.0f} % of it ({margin * g} GPUs), as plans are sized"
        if margin > full
        else ""
    )


def replicas_for(requests_per_s: float, per_replica: float) -> int:
    """The fewest replicas, each carrying ``per_replica`` requests/s at saturation, that hold an
    arrival rate within ``NEAR_CAPACITY`` of their capacity (the sizing ``meets`` holds plans
    to)."""
    # 9 significant digits: a rate that is exactly the margin's multiple is not one replica short
    return max(1, math.ceil(float(f"{requests_per_s / (NEAR_CAPACITY * per_replica):.9g}")))


def planned_runtime(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: ServingConfig,
    load: ServingLoad,
    runtime: RuntimeProfile,
    usable_gb: float | None = None,
) -> RuntimeProfile:
    """The runtime at the max_num_seqs a plan deploys (vLLM serve's --max-num-seqs), where its
    startup profiling keeps a sampler peak out of the KV pool (``profile_bytes_per_logit``).
    The peak follows max_num_seqs (rows × vocabulary × bytes per logit: methodology §1), so a
    plan that runs fewer sequences than the default, because the pool holds fewer, reserves
    less and holds more: gpt-oss-120b on one H100 kept 8.0 GB for 1,024 rows and ran 21, where
    --max-num-seqs 64 keeps 0.5 GB and its pool holds 64. The most rows whose own pool holds
    them all (the pool shrinks as the rows grow: the largest fixed point, found by bisection),
    capped by the default; the default where its pool holds it, or where not one row fits (the
    refusal then names the default's peak). What ``evaluate`` prices and the deploy command's
    --max-num-seqs then agree (its ``max_concurrency``). Benchmarks read the runtime's defaults
    (benchmarks/serving_accuracy.py): only a plan the engine writes sets the flag."""
    rt = runtime.on(gpu)
    if rt.profile_bytes_per_logit is None or not model.vocab_size:
        return runtime
    usable = efficiency.usable_gb(gpu) if usable_gb is None else usable_gb

    def held(rows: int) -> int:
        """Requests the pool holds when the runtime profiles ``rows`` sampler rows."""
        at = replace(rt, max_batch=rows, large_gpu=None)
        return _capacity(gpu, model, cfg, at, usable, load, cap=False)[5]

    top = rt.max_batch
    at_top = held(top)
    if at_top >= top:
        return runtime
    at_one = held(1)
    if at_one < 1:
        return runtime
    # held(r) - r falls as r grows, >= 0 up to the answer and < 0 past it: a bracket [lo, out)
    # narrowed where the line through its ends crosses zero (the pool shrinks linearly in the
    # rows profiled once their peak passes the runtime's other activations), each guess
    # checked with its neighbour, so a straight stretch ends in one round; exact either way
    lo, spare_lo, out, spare_out = 1, at_one - 1, top, at_top - top
    while out - lo > 1:
        r = lo + int(spare_lo * (out - lo) / (spare_lo - spare_out))
        r = min(out - 1, max(lo + 1, r))
        spare = held(r) - r
        if spare >= 0:
            lo, spare_lo = r, spare
            nxt = r + 1
        else:
            out, spare_out = r, spare
            nxt = r - 1
        if lo < nxt < out:
            spare = held(nxt) - nxt
            if spare >= 0:
                lo, spare_lo = nxt, spare
            else:
                out, spare_out = nxt, spare
    return replace(rt, max_batch=lo, large_gpu=None)


def unfit(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: ServingConfig,
    load: ServingLoad,
    runtime: RuntimeProfile,
    usable_gb: float | None = None,
) -> str | None:
    """Why a replica of ``cfg`` cannot hold one request's KV cache beside its weights (None
    when it can): ``evaluate``'s memory check alone, the same for every replica count."""
    rt = runtime.on(gpu)
    usable = efficiency.usable_gb(gpu) if usable_gb is None else usable_gb
    weights, act, fw, pool, kv_req, cap, _held, _full = _capacity(gpu, model, cfg, rt, usable, load)
    if cap >= 1:
        return None
    return _no_room(weights, usable, kv_req, rt, model, (act, fw, pool), cfg.gpus_per_replica, gpu)


def _no_room(
    weights: float,
    usable: float,
    kv_req: float,
    rt: RuntimeProfile,
    model: ModelSpec,
    rest: tuple[float, float, float],
    tp: int,
    gpu: GpuSpec,
) -> str:
    """Why the weights leave no room for one request's KV cache, in the vendors' GB, and the
    smaller max_num_seqs that would where a profiling runtime's peak (``act``) is the cause.
    It names what else the GPU's memory goes to (the runtime's claim, its activations and
    context; ``rest``: activations, framework context and KV pool, in GB): "7.1 GB of 8 GB"
    alone reads as room to spare."""
    act, fw, pool = rest
    hint = ""
    if rt.profile_bytes_per_logit is not None:
        # the memory the peak may take: what it takes now, plus the pool, less one request
        room = act + pool - kv_req / GB
        hint = efficiency.fewer_seqs_hint(
            rt.profile_bytes_per_logit, model.vocab_size, rt.max_batch, room
        )
    share = efficiency.claimed_share(rt.memory_utilization, rt.reserve_rule, tp, gpu)
    # the usable figure is the runtime's claim where it claims a share of the device, as the
    # row's available memory and inference's refusal give it (evaluate.shown_memory)
    of = f"{gib(usable)} GiB per GPU; {rt.name} gives {share:.0%} of what is left to its KV cache"
    if not rt.of_free:
        of = (
            f"the {gib(usable * share)} GiB usable per GPU ({rt.name} claims {share:.0%} "
            f"of {gib(usable)} GiB)"
        )
    return (
        f"weights take {gib(weights)} GiB of {of}, and "
        f"its activations and context take {gib(act + fw)} GiB more: no room for one "
        f"request's KV cache ({gib(kv_req / GB)} GiB){hint}"
    )


class ShapeTerms:
    """What every replica count of one serving shape (GPUs per replica, weight and KV formats,
    runtime) shares under one load's request shape (prompt, output, cached and extra tokens):
    the runtime on the GPU, the memory plan and slots, the replica's step function, and its
    points at saturation. Only the load each replica carries (the rate or the clients ÷ the
    replicas) differs between counts, so ``evaluate`` solves that alone per count (a rate far
    beyond a card had worked the same saturation out again for each of 64 counts). Each point
    at saturation is solved where first asked for."""

    __slots__ = ("_sat", "base", "capacity", "eng", "key", "rt", "runtime", "tokens", "usable")

    def __init__(
        self,
        gpu: GpuSpec,
        model: ModelSpec,
        cfg: ServingConfig,
        load: ServingLoad,
        runtime: RuntimeProfile,
        usable_gb: float | None = None,
        memory_efficiency: float = 0.88,
        compute_efficiency: Mapping[str, float] | None = None,
    ) -> None:
        rt = runtime.on(gpu)
        if rt.name != cfg.runtime:
            raise ValueError(f"configuration runs {cfg.runtime}, profile is {rt.name}")
        self.key = _shape_key(cfg, load)
        self.runtime = runtime  # as given (``rt``: on this GPU)
        # prompt, output and fresh prompt tokens as the solves read them
        self.tokens = (
            max(1, load.prompt_tokens),
            max(1, load.output_tokens),
            load.fresh_prompt_tokens,
        )
        self.rt = rt
        self.usable = efficiency.usable_gb(gpu) if usable_gb is None else usable_gb
        self.capacity = _capacity(gpu, model, cfg, rt, self.usable, load)
        comp = compute_efficiency if compute_efficiency is not None else DEFAULT_COMPUTE
        self.eng = replica(gpu, model, cfg, rt, memory_efficiency, comp)
        weights, act, fw, pool, kv_req, _cap, kv_held, full = self.capacity
        self.base: dict[str, Any] = dict(
            weights_gb_per_gpu=weights,
            kv_pool_gb_per_gpu=max(0.0, pool),
            activations_gb_per_gpu=act,
            framework_gb_per_gpu=fw,
            kv_gb_per_request=kv_req / GB,
            kv_held_gb_per_request=kv_held / GB,
            reserve_full_concurrency=full,
            kv_admission=rt.kv_admission,
            kv_at_start=rt.kv_at_start,
            compute_precision=self.eng.compute_precision,
            kv_copies=llm_step.kv_copies(model, llm_step.span(rt.decode, cfg.gpus_per_replica)[0]),
            reserve_gb_per_gpu=startup_reserve_gb(gpu, model, cfg, rt) or 0.0,
        )
        self._sat: dict[bool, _Point] = {}

    def saturated(self, share: bool = False) -> _Point:
        """One replica at saturation (4 × its slots of clients, closed loop); ``share``: with
        its prompts' share of the GPU's time and its stalls."""
        hit = self._sat.get(share)
        if hit is None:
            cap = self.capacity[5]
            p, o, q = self.tokens
            users = float(cap) * 4.0 if self.rt.continuous_batching else 1.0
            hit = _solve(self.eng, self.rt, users, None, p, o, cap, q, share)
            assert hit is not None
            self._sat[share] = hit
        return hit


def _shape_key(cfg: ServingConfig, load: ServingLoad) -> tuple[object, ...]:
    """What ``ShapeTerms`` are worked out for: the shape but its replica count, and the load's
    tokens but its rate or clients."""
    return (
        cfg.gpus_per_replica,
        cfg.weight_precision,
        cfg.kv_precision,
        cfg.runtime,
        load.prompt_tokens,
        load.output_tokens,
        load.fresh_prompt_tokens,
        load.kv_extra_tokens,
        load.slot_tokens,
    )


def evaluate(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: ServingConfig,
    load: ServingLoad,
    *,
    runtime: RuntimeProfile,
    usable_gb: float | None = None,
    memory_efficiency: float = 0.88,
    compute_efficiency: Mapping[str, float] | None = None,
    with_curve: bool = False,
    saturation: bool = True,
    terms: ShapeTerms | None = None,
) -> ServingResult:
    """One serving configuration under one load (all replicas share it evenly).

    ``memory_efficiency`` and ``compute_efficiency`` are the engine's achieved-vs-peak priors
    for bandwidth and whole-model matmuls on this GPU (perf.py); the runtime scales them.
    ``saturation=False`` skips the throughput at saturation (``max_output_tokens_per_s`` 0)
    unless the load needs it: serving_step compares configurations at the asked load only.
    ``terms``: the shape's terms (``ShapeTerms``, made with these arguments) where the caller
    evaluates several replica counts of it; None: worked out here.
    """
    if terms is None:
        terms = ShapeTerms(
            gpu, model, cfg, load, runtime, usable_gb, memory_efficiency, compute_efficiency
        )
    elif terms.key != _shape_key(cfg, load):
        raise ValueError("the shape's terms were made for another shape or load")
    rt, usable, eng = terms.rt, terms.usable, terms.eng
    p, o, q = terms.tokens  # q: a cached prefix is held and read, never computed
    weights, act, fw, pool, kv_req, cap, _held, full = terms.capacity
    base: dict[str, Any] = dict(terms.base, config=cfg)
    if cap < 1 or eng.flops <= 0:
        why = (
            _no_room(weights, usable, kv_req, rt, model, (act, fw, pool), cfg.gpus_per_replica, gpu)
            if eng.flops > 0
            else NO_FIGURES
        )
        return ServingResult(
            **base,
            fits=False,
            reason=why,
            max_concurrency=0,
            ttft_ms=None,
            ttft_p95_ms=None,
            itl_ms=None,
            itl_p95_ms=None,
            output_tokens_per_s=None,
            input_tokens_per_s=None,
            max_output_tokens_per_s=0.0,
            requests_per_s=None,
            saturated=True,
            prefill_share=0.0,
            bottleneck="memory capacity",
            curve=(),
        )
    r = cfg.replicas
    rps = load.requests_per_s
    # a rate load is weighed against the shape's capacity (NEAR_CAPACITY): it needs saturation
    sat = terms.saturated() if saturation or rps is not None else None
    max_out = sat.rate * o * r if sat is not None else 0.0
    curve = (
        tuple(
            CurvePoint(int(b), pt.itl * 1e3, pt.ttft * 1e3, pt.rate * o)
            for b in _curve_batches(cap)
            if (pt := _solve(eng, rt, float(b), None, p, o, cap, q)) is not None
        )
        if with_curve
        else ()
    )
    # replicas with a request to run: fewer concurrent requests than replicas leave the rest
    # idle (a closed loop's c clients each hold one replica; c < 1 is one client part-time)
    busy = float(r)
    share: float | None = None
    if rps is not None:
        point = _solve(eng, rt, None, rps / r, p, o, cap, q, True)
        assert sat is not None
        share = rps / (sat.rate * r) if sat.rate > 0.0 else math.inf
    else:
        c = load.concurrent_requests or 1.0
        busy = min(busy, c)
        point = _solve(eng, rt, c / r, None, p, o, cap, q, True)
    notes: list[str] = []
    # a rate at or past the capacity is not carried, whatever the open-loop solve settled on
    # (it can settle a hair past saturation's rate: the closed loop's own next prompt waits)
    if point is None or (share is not None and share >= 1.0):
        sat = terms.saturated(share=True)  # its share is the one this result reports
        return ServingResult(
            **base,
            fits=True,
            reason=None,
            max_concurrency=cap,
            ttft_ms=None,
            ttft_p95_ms=None,
            itl_ms=None,
            itl_p95_ms=None,
            output_tokens_per_s=None,
            input_tokens_per_s=None,
            max_output_tokens_per_s=sat.rate * o * r,
            requests_per_s=None,
            saturated=True,
            prefill_share=sat.prefill_share,
            bottleneck=sat.bound,
            curve=curve,
            load_share=share,
            notes=(
                f"{load.requests_per_s:g} requests/s is beyond this configuration's "
                f"{sat.rate * r:.2f} requests/s at saturation{_replicas_needed(load, cfg, sat)}",
            ),
        )
    # saturation is solved at 4 × cap users, where a request's own next prompt is a smaller
    # share of the arrivals it may queue behind than at a load just past cap: that load's
    # rate can exceed it by ~0.1 %, and "up to" never reads below the rate it tops
    if point.rate * o * busy > max_out > 0.0:
        max_out = point.rate * o * busy
    if (edge := _stall_note(point)) is not None:
        notes.append(edge)
    if rt.kv_admission.on_demand and point.batch > full + 0.5:
        started = _started_together(terms, load, cfg, point)
        notes.append(_preemption_note(rt, point, full, o, *started))
    saturated = load.concurrent_requests is not None and load.concurrent_requests / r > cap
    if saturated:
        notes.append(
            f"{load.concurrent_requests:g} concurrent requests exceed the {cap * r} this "
            "configuration can run at once; the rest wait for a slot (in TTFT)"
        )
    return ServingResult(
        **base,
        fits=True,
        reason=None,
        max_concurrency=cap,
        ttft_ms=point.ttft * 1e3,
        ttft_p95_ms=point.ttft_p95 * 1e3,
        itl_ms=point.itl * 1e3,
        itl_p95_ms=point.itl_p95 * 1e3,
        output_tokens_per_s=point.rate * o * busy,
        input_tokens_per_s=point.rate * p * busy,
        max_output_tokens_per_s=max_out,
        requests_per_s=point.rate * busy,
        saturated=saturated,
        # a busy replica's share of its GPU time; idle replicas spend theirs on neither
        # (the hour's $ split charges their idle time to output, as a rate load's slack is)
        prefill_share=point.prefill_share * busy / r,
        bottleneck=point.bound,
        curve=curve,
        notes=tuple(notes),
        step=point.step,
        load_share=share,
    )


def _started_together(
    terms: ShapeTerms, load: ServingLoad, cfg: ServingConfig, point: _Point
) -> tuple[Lockstep, _Point | None]:
    """The asked load's running requests started together (``lockstep``: a load test's equal
    requests sent at once, a closed loop's cohorts that then finish and restart together), and
    its point priced so: the running count the pool keeps over the output and the preempted
    requests' recompute as prompt work on every step (``_solve``'s ``recompute``)."""
    _w, _a, _f, pool, kv_req, _c, _h, _full = terms.capacity
    p, o, q = terms.tokens
    rt = terms.rt
    per_token = kv_req / (p + o + max(0, load.kv_extra_tokens))
    room = max(0.0, pool) * GB * cfg.gpus_per_replica / terms.base["kv_copies"]
    ls = lockstep(round(point.batch), p, o, room / per_token, rt.chunk_tokens)
    r = cfg.replicas
    users = None if load.requests_per_s is not None else (load.concurrent_requests or 1.0) / r
    rate = None if load.requests_per_s is None else load.requests_per_s / r
    pt = _solve(terms.eng, rt, users, rate, p, o, ls.mean_running, q, False, ls.recompute_tokens)
    return ls, pt


def _preemption_note(
    rt: RuntimeProfile, point: _Point, full: int, o: int, ls: Lockstep, started: _Point | None
) -> str:
    """Words for a replica that runs more requests than the pool holds at their whole length
    (``full``, the reserve-full count) under a runtime that allocates its cache on demand: the
    figure counts them at what they hold on average (their ages spread over the output), and
    when they start together (``_started_together``) their caches grow in step, fill the pool
    and the newest are preempted and recomputed (vLLM V1's RECOMPUTE; SGLang's retract), which
    is priced here: how many, how many tokens each prefills again, and the output rate that
    leaves."""
    admit = rt.kv_admission
    head = (
        f"{point.batch:,.0f} requests per replica run above the {full:,} whose whole prompt + "
        f"output the KV cache holds at once: {rt.name} allocates the cache as tokens arrive, "
        f"counting each at its prompt + {admit.output_share:.0%} of its output (their ages "
        "spread), and when it runs out preempts the newest request and recomputes it later"
    )
    avoid = f"a cap of {full:,} running requests a replica avoids it"
    if ls.preempted < 1:
        return f"{head} ({avoid})"
    each = ls.recompute_tokens * ls.admitted / ls.preempted
    cost = ""
    if started is not None and point.rate > 0.0:
        out, now = started.rate * o, point.rate * o
        cost = (
            f", ~{sig_figs(out)} output tokens/s a replica "
            f"({max(0.0, 1.0 - out / now):.0%} below this figure)"
        )
    return (
        f"{head}. Started together (a load test's equal requests sent at once), their caches "
        f"fill it {ls.full_from:,.0f} tokens into the output: {ls.preempted:,} of "
        f"{ls.admitted:,} ({ls.preempted_share:.0%}) are preempted and prefill ~{each:,.0f} "
        f"tokens again each{cost}; {avoid}"
    )


def _stall_note(point: _Point) -> str | None:
    """Words for a p95 ITL near the share that flips it (STALL_PERCENTILE_SHARE): a two-valued
    gap (decode step or stalled step) makes the 95th percentile jump from one to the other, so
    an answer on either side within a factor of two of it says so, with the other value."""
    share, stalled = point.stall_share, point.stall_s
    if share < STALL_PERCENTILE_SHARE / 2.0 or share > 2.0 * STALL_PERCENTILE_SHARE:
        return None
    if stalled < 1.25 * point.itl:
        return None
    head = (
        f"{share:.1%} of token gaps wait behind another request's prompt chunk "
        f"({stalled * 1e3:,.0f} ms, not {point.itl * 1e3:,.1f} ms)"
    )
    if share >= STALL_PERCENTILE_SHARE:
        return f"{head}: that is the p95 ITL"
    return f"{head}: the p95 ITL is at the edge, {stalled * 1e3:,.0f} ms from 5 % (more load)"


def _curve_batches(cap: int) -> list[int]:
    out, b = [], 1
    while b < cap:
        out.append(b)
        b *= 2
    out.append(cap)
    return out


def meets(result: ServingResult, targets: ServingTargets) -> tuple[bool, list[str]]:
    """Whether the result is within the targets, and each miss in words. An arrival-rate load
    past ``NEAR_CAPACITY`` of the plan's capacity is a miss whatever its latencies: the planner
    adds replicas until it is within it."""
    if result.ttft_ms is None or result.itl_ms is None:
        return False, ["cannot carry the load"]
    p95 = targets.percentile == "p95"
    ttft = result.ttft_p95_ms if p95 else result.ttft_ms
    itl = result.itl_p95_ms if p95 else result.itl_ms
    misses: list[str] = []
    if targets.ttft_ms is not None and ttft is not None and ttft > targets.ttft_ms:
        misses.append(f"TTFT {ttft:,.0f} ms > {targets.ttft_ms:,.0f} ms")
    if targets.itl_ms is not None and itl is not None and itl > targets.itl_ms:
        misses.append(f"ITL {itl:,.1f} ms > {targets.itl_ms:,.1f} ms")
    if result.load_share is not None and result.load_share > NEAR_CAPACITY:
        misses.append(
            f"load {capacity_percent(result.load_share)} of modelled capacity > "
            f"{100 * NEAR_CAPACITY:.0f} % (the margin random arrivals need)"
        )
    return not misses, misses


def capacity_percent(share: float) -> str:
    """A share past ``NEAR_CAPACITY`` in whole percent, or to a tenth where the whole one would
    read as the limit itself ("80 % > 80 %")."""
    whole = f"{100 * share:.0f}"
    return f"{whole if whole != f'{100 * NEAR_CAPACITY:.0f}' else f'{100 * share:.1f}'} %"

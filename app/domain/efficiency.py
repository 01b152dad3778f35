"""Efficiency by backend and runtime: what a software stack reaches on a GPU.

The same GPU runs a job at very different speeds under eager PyTorch, a CUDA-graph loop,
TensorRT or llama.cpp (measured on an H200: an eager decode loop is 2.5–3.4× slower than a
CUDA-graph one). This module resolves, for one (GPU, backend, runtime, precision, regime),
the constants the roofline needs — compute and memory efficiency, element-wise traffic,
per-kernel and per-op host overheads, which low precisions run natively, how much of the
device the runtime lets the job use — from a table of rows in ``data/efficiency.yaml``.

Rows match on any of: runtime, regime, vendor, architecture, backend, memory (hbm, gddr,
lpddr), compute_capability, precision; an absent key matches everything. Each field is taken
from the most specific matching row that sets it (ties: the later row), so a general row sets
a runtime's defaults and narrower rows refine one figure each, every row with its source.

Pure: the table is parsed from plain dicts; the caller reads the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from app.domain.gpu import GpuSpec
from app.domain.units import GIB_PER_GB, vram
from app.vocab import (
    AMP_PRECISIONS,
    KV_ADMISSIONS,
    MULTI_GPU_MODES,
    SUSTAINED_GEMM_PRECISIONS,
    runtime_name,
)

MATCH_KEYS = (
    "runtime",
    "regime",
    "vendor",
    "architecture",
    "backend",
    "memory_kind",
    "compute_capability",
    "precision",
    # the model family (workload.ModelSpec.family): a row whose source covers one kind of
    # model only (TensorRT's BERT attention plugin: family encoder)
    "family",
)


@dataclass(frozen=True, slots=True)
class RuntimeProfile:
    """Constants of one (GPU, backend, runtime, precision, regime); see data/efficiency.yaml."""

    runtime: str = "pytorch"
    regime: str = "train"
    # Multiplier on the engine's eager whole-model GEMM efficiency (prior × model utilisation).
    compute_scale: float = 1.0
    # When set, matmul time is FLOPs ÷ (peak[compute_basis] × compute): a runtime whose kernels
    # are bound by another datapath (llama.cpp's quantised prompt kernels by CUDA-core work).
    compute_basis: str | None = None
    compute: float | None = None
    # The arithmetic such a kernel does, as an answer names it ("int8 math"): a basis is a
    # rate (``sm``: the SM's issue rate), not a datapath
    compute_math: str | None = None
    memory: float = 0.88  # achieved ÷ datasheet bandwidth when streaming weights / KV cache
    traffic: float = 1.0  # element-wise activation traffic relative to eager PyTorch
    kernel_us: float = 4.0  # GPU-side launch gap per kernel
    # A runtime that captures and replays a CUDA graph only for steps (micro-batches) of at
    # most this many tokens launches every kernel of a longer step from the host, one by one:
    # such a step's GPU-side gap per kernel is ``eager_kernel_us`` instead of ``kernel_us``
    # (llama.cpp's CUDA backend: graphs for one-token steps alone, ggml-cuda.cu). 0: the same
    # launch policy at every step size
    graph_max_tokens: int = 0
    eager_kernel_us: float = 0.0
    # A runtime that captures its CUDA graphs piecewise (vLLM V1 before 0.11: every layer's
    # attention runs eagerly between the graph pieces) pays this much more per decoder layer
    # and pass than a whole-forward graph: the pieces' launches and the eager attention
    # kernels' gaps (llm_step.Replica.launch_s). 0: one graph for the whole forward, or eager
    graph_split_us: float = 0.0
    # Shortest time a kernel takes however little it reads (a decode step split over many
    # GPUs, a small model): a GEMM and an attention kernel; not the gap above
    gemm_min_us: float = 0.0
    attention_min_us: float = 0.0
    # An MoE layer's routed block besides its grouped GEMMs' bytes and FLOPs — routing, top-k,
    # activation quantisation, permute, activation, finalize — a fixed time per layer added to
    # them (as the kernel gaps are), whatever the step's tokens
    moe_block_us: float = 0.0
    # Kernels each block-FP8 dense linear of an LLM layer adds by quantising its input in a step
    # of its own before the FP8 GEMM (llm_step.ReplicaJob.quant_linears counts the linears); 0:
    # the runtime fuses it into the kernel before, or runs no such linears
    act_quant_kernels: float = 0.0
    # The routed experts' grouped GEMMs (llm_step.routed_gemm): the kernel's token tile — the
    # smallest power of two from ``moe_tile_min`` to ``moe_tile_max`` rows that holds an
    # expert's typical rows; each expert's rows are padded to it. And every LLM-step GEMM's
    # fixed cost per output tile (pipeline fill, epilogue) in bytes of K, against which a
    # shallow K runs below the rate a ``gemm_k_ref_bytes``-deep dense GEMM (the efficiency
    # prior) reaches (llm_step.routed_slowdown, dense_slowdown). 0: not modelled
    moe_tile_min: int = 0
    moe_tile_max: int = 0
    gemm_k_overhead_bytes: float = 0.0
    gemm_k_ref_bytes: float = 0.0
    # Share of the fp8 GEMMs' efficiency (achieved ÷ their own peak) that the fp4 (NVFP4) GEMMs
    # reach on the GPU, beyond what their halved K bytes already cost (above): B200's fp4
    # kernels run well short of twice its fp8 ones at decode-sized M (llm_step.card_terms)
    fp4_gemm_share: float = 1.0
    # The same share at a large GEMM M (``fp4_gemm_large_tokens`` rows, the step's tokens) where
    # the fp4 kernels close in on twice the fp8 rate; ``fp4_gemm_share`` holds up to
    # ``fp4_gemm_small_tokens`` (llm_step.fp4_m_terms). 0: one share at every M
    fp4_gemm_share_large: float = 0.0
    fp4_gemm_small_tokens: float = 0.0
    fp4_gemm_large_tokens: float = 0.0
    # A step that carries prompt tokens beside decoding sequences runs its attention as two
    # kernels in turn, the prompts' (context FMHA, compute-bound) then the decodes' (generation
    # kernel, bound by the KV cache it reads): their times add (TensorRT-LLM's attention op,
    # thop/attentionOp.cpp). False: one kernel over the mixed batch, max(KV bytes, FLOPs)
    split_attention: bool = False
    host_us_per_op: float = 0.0  # host dispatch per op when the host cannot run ahead (eager)
    ops_per_layer: float = 0.0  # eager ops per transformer layer per decode step
    # Bytes of KV cache a decode step moves per byte of cache it attends over: 1 where the cache
    # is preallocated (or paged) and written in place; Hugging Face generate()'s cache grows by
    # torch.cat each step (legacy tuple cache, DynamicCache.update), which reads the whole old
    # K and V and writes them again one token longer before attention reads them: 3
    kv_traffic: float = 1.0
    native: tuple[str, ...] = ()  # low precisions run on their own tensor peak (int8, fp8)
    # Roles of memory-bound operators the runtime folds into a neighbouring kernel (GEMM
    # epilogues, fused norm/activation chains): app.domain.operators.ROLES
    fuse: tuple[str, ...] = ()
    # "fused": the runtime brings its own fused attention kernel (TensorRT's fused MHA) on every
    # GPU it runs on; "unfused": its own attention without one (TensorRT's BERT plugin where it
    # ships no fused kernel: two batched GEMMs around the whole score matrix and one
    # scale-mask-softmax kernel between them, perf.UNFUSED_ATTENTION); "": the framework's
    # (flash where the GPU supports it, else math)
    attention: str = ""
    # The runtime's 16-bit GEMMs accumulate in FP16 (llama.cpp's cuBLAS path for F16 weights:
    # CUBLAS_COMPUTE_16F): on GeForce parts, whose FP32-accumulate tensor rate (the catalog's
    # fp16) is half the FP16-accumulate one, they run at the full rate (llm_step.replica)
    fp16_accumulate: bool = False
    # Its fused attention kernels accumulate in FP16 as well (TensorRT's fused MHA: NVIDIA's
    # fmha_v2 kernels take FP16 accumulators for FP16 inputs unless built otherwise), so on
    # GeForce parts they too run at the FP16-accumulate rate (kernels.class_rates)
    attention_fp16_accumulate: bool = False
    # A quantised model's GEMMs on this profile first dequantise each weight matrix to FP16 (a
    # pass that reads the stored weights and writes 2 bytes per weight) in every pass of more
    # than this many tokens: llama.cpp's cuBLAS path (builds before PR #8075, June 2024, and
    # GGML_CUDA_FORCE_CUBLAS builds: MMQ_MAX_BATCH_SIZE 32); 0: never (llm_step.Replica)
    dequantize_min_tokens: int = 0
    # Time per decoder layer that a context pass (prompt tokens, no decodes) takes beyond its
    # math, bytes, kernel gaps and links, serially with them: TensorRT-LLM's context phase
    # (gptSession's executeContext, never a CUDA graph). An effective figure set from the
    # tuning rows it was measured on (data/efficiency.yaml); 0: none (llm_step.Replica)
    context_layer_us: float = 0.0
    # Share of the GPU's per-SM-clock issue rate (``basis_tflops`` basis ``sm``: SMs × clock in
    # units of a 128-lane SM's FP32 FMA rate) at which a decode attention kernel that does its
    # Q·K and A·V math on the CUDA cores, one thread block per query head (TensorRT-LLM's
    # masked MHA kernel, which a run without XQA uses for grouped-query models), reaches: its
    # math time is the decode attention's FLOPs at this rate, never shorter than its KV bytes.
    # An effective figure set from the tuning rows (data/efficiency.yaml); read only for a job
    # that runs that kernel (WorkloadSpec.mmha); 0: not modelled (llm_step.card_terms)
    mmha_sm_share: float = 0.0
    # Sustained 16-bit tensor TFLOPS per board watt on a power-capped part (an architecture's
    # energy per tensor FLOP): a GEMM cannot run faster than TDP × this, whatever the boost
    # clock's peak says (operator path); None: not known for the architecture
    tensor_tflops_per_watt: float | None = None
    # Share of the 16-bit dense peak the runtime's flash-attention forward reaches on the
    # architecture, where it is below the kernels module's share of the GEMM rate (FlashAttention-2
    # on Hopper: written for Ampere's synchronous mma, it uses neither wgmma nor TMA); None: the
    # GEMM-relative factors (kernels.FLASH_FWD_FACTOR, FLASH_BWD_FACTOR) alone
    flash_peak_share: float | None = None
    # Share of the GEMM rate the runtime's 16-bit tensor-core convolutions issue at on the
    # architecture, where their kernels cannot reach its full tensor rate: implicit-GEMM
    # convolutions written for Ampere's synchronous mma (the 2023 stacks: cuDNN 8, TensorRT
    # 8.6 / 9; CUTLASS's first wgmma convolutions came with 3.5, 2024) on Hopper, whose SM
    # doubles Ampere's MMA rate per clock only through wgmma: 0.5. None: the GEMM rate
    # (kernels.class_rates' conv_share)
    conv_peak_share: float | None = None
    # Share of the GEMM rate the runtime's other 16-bit tensor-core kernels (its GEMMs and its
    # fused attention) issue at on the architecture, where they come from the same Ampere-built
    # kernel library as its convolutions: TensorRT 8.6 / 9 on Hopper, which builds every layer
    # from its own tactics (cuBLAS and cuDNN tactic sources off by default since 8.6), not
    # cuBLAS 12's wgmma GEMMs: 0.5. ``conv_peak_share`` stays the convolutions' share of the
    # same full GEMM rate. None: the GEMM rate (``tensor_share``)
    gemm_peak_share: float | None = None
    # Where the runtime autotunes its cuDNN convolutions (times every algorithm, keeps the
    # fastest): the multiply saving of the Winograd algorithm it can pick for a 3×3 stride-1
    # convolution on the CUDA cores; None: no autotuning, implicit GEMM only
    winograd_3x3: float | None = None
    # The runtime rewrites a 16-bit CNN graph to NHWC on tensor-core GPUs (TensorFlow's grappler
    # layout optimizer): its convolutions see NHWC tensors, cuDNN adds no layout transforms
    nhwc_16bit: bool = False
    # The harness copies each batch's input to the GPU inside the timed step, before the step's
    # first kernel can run, and does not overlap it with compute (a synchronous session.run whose
    # input comes from a host-side tf.data pipeline): step = copy + max(GPU, host dispatch)
    # rather than max(copy, GPU, dispatch) (a DataLoader prefetching pinned batches)
    serial_input_copy: bool = False
    # The host issues the step's kernels one by one, in the network's order, into one GPU
    # stream (TensorFlow's executor): a kernel cannot start before it is issued, so the step
    # ends at kernels.fifo_finish of the per-kernel host and GPU times, not max(Σ GPU, Σ host)
    # — the GPU idles while the host issues kernels that do little on it (AMP's weight casts,
    # issued first) and the last kernels' GPU time is not hidden
    queued_dispatch: bool = False
    # Transformer Engine's FP8 training: the cast-transpose kernels its FP8 GEMMs need
    # (operators.fp8_cast_ops) run in the step; False: an fp8 job's GEMMs run on the FP8 peak
    # with no cast passes priced (the eager rows' simplification)
    fp8_cast_transpose: bool = False
    # with fp8_cast_transpose: the GEMM inputs a fused producer writes in FP8 under Megatron
    # (the norms' and the activation's outputs) are bf16 here and take a cast-transpose pass
    # each (operators.fp8_cast_ops ``unfused_inputs``: te.Linear, torchao Float8Linear)
    fp8_unfused_inputs: bool = False
    # LoRA as the runtime's own fine-tuning script applies it where that differs from PEFT's
    # (every block adapted): adapters on the last this many blocks only (mlx-lm's --num-layers,
    # default 16), so backward runs through them alone and only their activations are saved;
    # a job's own ``WorkloadSpec.lora_layers`` wins. 0: every block
    lora_layers: int = 0
    # The runtime's QLoRA base is its own 4-bit format over every weight, embeddings and LM
    # head included (formats.runtime_bits at int4), and its quantised GEMMs dequantise inside
    # the kernel (MLX's quantized_matmul): no 16-bit copy of a linear, no dequantisation pass.
    # False: bitsandbytes NF4 / AutoGPTQ on the blocks, each linear dequantised per call
    qlora_in_kernel: bool = False
    # Bytes per logit the loss holds beyond the head's output at the start of backward; None:
    # an eager fp32 loss's (activations.LOSS_BYTES_PER_LOGIT)
    loss_logit_bytes: float | None = None
    # How one replica spans several GPUs (MULTI_GPU_MODES): "tensor" (every GPU holds a slice
    # of every layer and works on every token: bandwidth and compute add up, two all-reduces
    # per layer), "layers" (llama.cpp --split-mode layer, Accelerate device_map: each GPU holds
    # whole layers and a token passes through them in turn, so a decode step is the sum of
    # each GPU's share: one card's speed) or "none" (one GPU per replica)
    span: str = "tensor"
    # "layers": a step's tokens run as micro-batches of this many that overlap across the GPUs
    # (llama.cpp's -ub); 0 = no overlap, one GPU works at a time
    microbatch_tokens: int = 0
    # "layers": how many micro-batches' graph inputs the runtime's scheduler keeps copies of
    # (llama.cpp's GGML_SCHED_MAX_COPIES): before copying a micro-batch's inputs to a stage
    # the host waits until that stage has finished the micro-batch that used the same copy,
    # so at most copies + 1 micro-batches are in flight (llm_step.pipeline_passes); 0 = no
    # such bound
    microbatch_copies: int = 0
    # "layers": bytes per hidden-state value handed from one GPU to the next at a stage
    # boundary (llama.cpp's residual stream is F32: ggml_mul_mat's result is GGML_TYPE_F32)
    handoff_bytes: float = 2.0
    # "layers": whether that hand-off is a peer-to-peer copy wherever the GPUs' link allows it.
    # False: llama.cpp, whose CUDA backend enables peer access only for row-split weights
    # (ggml_cuda_compute_forward) or on request (GGML_CUDA_P2P), so its layer split's
    # cudaMemcpyPeerAsync is staged through host memory on every card, NVLink or not
    handoff_peer: bool = True
    # "layers": the runtime places its split points over the model's layers plus the output
    # layer as one more unit (llama.cpp's load_tensors at -ngl above the layer count), so the
    # first GPU can take a whole layer more than an even share and a pipelined prompt's
    # micro-batches wait on it (llm_step.busiest_stage_share); False: over the layers alone
    split_output_unit: bool = False
    context_gib: float | None = None  # runtime context + workspaces; None: the backend default
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Row:
    match: dict[str, str]
    values: dict[str, Any]
    source: str | None = None


@dataclass(frozen=True, slots=True)
class ReserveRule:
    """A runtime that sizes its claim from the GPU's memory (SGLang 0.5,
    server_args._handle_gpu_memory_settings): buckets by the device's total memory (MiB, as
    nvidia-smi reports it) pick chunked_prefill_size and cuda_graph_max_bs, and
    mem_fraction_static = (memory - reserved) / memory, rounded to 3 places, where reserved =
    base + max(chunk, least_chunk) x per_chunk_token + graph_bs x per_graph_seq + tp x per_tp,
    at least ``floor_mib`` on a GPU above ``floor_above_mib``."""

    # (below this many MiB, or None for the rest; chunked_prefill_size; cuda_graph_max_bs
    # below ``graph_tp`` GPUs per replica; from ``graph_tp``), ascending
    buckets: tuple[tuple[float | None, int, int, int], ...]
    graph_tp: int
    base_mib: float
    mib_per_chunk_token: float
    least_chunk_tokens: int
    mib_per_graph_seq: float
    mib_per_tp: float
    floor_mib: float
    floor_above_mib: float

    def bucket(self, mib: float, tp: int) -> tuple[int, int]:
        """(chunked_prefill_size, cuda_graph_max_bs) on a GPU of ``mib`` at ``tp``."""
        for below, chunk, small, large in self.buckets:
            if below is None or mib < below:
                return chunk, small if tp < self.graph_tp else large
        raise ValueError("reserve_rule: no bucket for the rest of the GPUs")

    def share(self, mib: float, tp: int) -> float:
        """mem_fraction_static on a GPU of ``mib`` at ``tp`` GPUs per replica."""
        chunk, graph_bs = self.bucket(mib, tp)
        reserved = (
            self.base_mib
            + max(chunk, self.least_chunk_tokens) * self.mib_per_chunk_token
            + graph_bs * self.mib_per_graph_seq
            + tp * self.mib_per_tp
        )
        if mib > self.floor_above_mib:
            reserved = max(reserved, self.floor_mib)
        return round((mib - reserved) / mib, 3)


@dataclass(frozen=True, slots=True)
class ServingRuntime:
    """A serving runtime's defaults (the ``serving_runtimes`` section; see its header)."""

    version: str
    continuous_batching: bool
    memory_utilization: float
    of_free: bool
    max_batch: int
    chunk_tokens: int
    step_overhead_ms: float
    sources: tuple[str, ...] = ()
    # the runtime's own 4-bit format (a key of the quantization section, e.g. llama.cpp's
    # q4_k_m GGUF); None: AWQ/GPTQ, the serving model's int4
    int4_format: str | None = None
    # named formats it reads on that same 4-bit path, each at its own bits per quantised
    # weight (llama.cpp: a model's MXFP4 release, through its Q4 types' integer-dot kernels)
    int4_reads: tuple[str, ...] = ()
    # host work per running sequence per step (request bookkeeping, sampler inputs and outputs)
    # that the runtime's overlap of host and GPU cannot hide once it outgrows the GPU's step
    step_overhead_per_seq_us: float = 0.0
    # host work per running sequence per step that a synchronous engine runs between two GPU
    # steps (vLLM without --async-scheduling): the GPU idles through it, so it adds to the step
    step_serial_per_seq_us: float = 0.0
    # host dispatch per kernel of a step that carries prompt tokens, where the runtime replays
    # CUDA graphs for decode-only steps alone (the same host thread dispatches it eagerly)
    mixed_step_host_us_per_kernel: float = 0.0
    # Scheduler limits the runtime picks on large GPUs (vLLM: at least 70 GiB, A100 excepted):
    # (least GiB, GPU names excepted, max_batch, chunk_tokens); None: max_batch and chunk_tokens
    # on every GPU
    large_gpu: tuple[float, tuple[str, ...], int, int] | None = None
    # FP4 checkpoints (NVFP4/MXFP4) run where the GPU has no FP4 tensor cores, weight-only:
    # dequantised to 16-bit inside the GEMM (vLLM's Marlin FP4 kernels), from this compute
    # capability; None: only on FP4 tensor cores
    fp4_weight_only_min_cc: str | None = None
    # the same on other vendors' architectures (lower case, as the catalog names them): AMD
    # Instinct CDNA 3/4 under vLLM, whose gpt-oss recipe serves the MXFP4 release there
    fp4_weight_only_archs: tuple[str, ...] = ()
    # FP8 checkpoints of dense models run where the GPU has no FP8 tensor cores, weight-only
    # (W8A16: vLLM's FP8 Marlin, 16-bit math), from this compute capability; None: FP8 tensor
    # cores only
    fp8_weight_only_min_cc: str | None = None
    # bytes per logit (max_num_seqs rows × vocabulary) its startup profiling pass measures as
    # peak activation memory and reserves per GPU (vLLM); None: no such pass (``profiling_peak_gb``)
    profile_bytes_per_logit: float | None = None
    # the share of the device claimed, computed from the GPU's memory and the tensor-parallel
    # size where the runtime does so (SGLang 0.5's mem_fraction_static, ``ReserveRule``);
    # None: ``memory_utilization`` on every GPU (``claimed_share``)
    reserve_rule: ReserveRule | None = None
    # where the activations the runtime reserves at startup live (``startup_activations_gb``):
    # "outside_claim" (SGLang: in the 1 - mem_fraction_static the claim leaves), "warmup_forward"
    # (TensorRT-LLM: one forward of max_num_tokens measured before its KV pool is sized); None:
    # vLLM's profiling peak where ``profile_bytes_per_logit`` is set, else no startup rule
    startup_activations: str | None = None
    # stores its KV cache in FP8 when asked (vLLM/SGLang --kv-cache-dtype fp8, TensorRT-LLM's
    # kv_cache_config dtype); False: no such format (llama.cpp's cache types are f16, q8_0,
    # q4_0...; mlx-lm and Transformers' generate keep the model's dtype)
    fp8_kv: bool = True
    # how it admits a request against its KV pool (app.vocab KvAdmission) and the share of a
    # request's output its cache is counted at while it runs (``KvAdmission``); None: the whole
    # prompt and output reserved up front
    kv_admission: KvAdmission | None = None
    # allocates the KV cache of all its slots whole when it starts (llama-server: -c tokens
    # over -np slots), so its memory is the slots' cache however few requests run; False: a
    # pool it fills as requests come (vLLM, SGLang, TensorRT-LLM, mlx-lm)
    kv_at_start: bool = False


# A request admitted on demand holds its prompt plus the output it has made so far: its cache
# grows one token a step from the prompt to the prompt + output, so over its life it holds the
# prompt and half its output on average, and the requests of a steady state (their ages spread
# evenly over the output) hold that on average between them. The runtime's rule, not a fit:
# vLLM V1 allocates a running request's blocks step by step (kv_cache_manager.allocate_slots)
# and admits a waiting one against its prompt alone (vllm-v1-preemption).
ON_DEMAND_OUTPUT_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class KvAdmission:
    """How a serving runtime admits requests against its KV pool: ``policy`` (app.vocab
    KV_ADMISSIONS) and, on demand, the share of a request's output tokens its cache is counted
    at while it runs (the concurrency the pool holds is pool ÷ (prompt + share × output);
    reserve_full counts the whole output, 1)."""

    policy: str
    output_share: float = 1.0

    @property
    def on_demand(self) -> bool:
        return self.policy == "on_demand"


RESERVE_FULL = KvAdmission("reserve_full", 1.0)

# TensorRT-LLM's capacity scheduler policies as admission rules (trtllm-capacity-scheduler):
# GUARANTEED_NO_EVICT, the LLM API's and trtllm-serve's default, admits a request only with room
# for its whole output ("a started request is never paused"); MAX_UTILIZATION packs requests "at
# the risk of having to pause requests if the KV cache size limit is reached", its blocks
# allocated as tokens arrive, as vLLM's are, and trtllm-bench runs it
# (trtllm-bench-scheduler-policy). A run that states its policy is priced by it.
TRTLLM_CAPACITY_POLICIES: dict[str, KvAdmission] = {
    "GUARANTEED_NO_EVICT": RESERVE_FULL,
    "MAX_UTILIZATION": KvAdmission("on_demand", ON_DEMAND_OUTPUT_SHARE),
}


def _kv_admission(name: str, raw: Any) -> KvAdmission | None:
    """``kv_admission: {policy: on_demand | reserve_full, output_share: s}``: on demand the
    share defaults to ON_DEMAND_OUTPUT_SHARE, reserve_full takes none."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("policy") not in KV_ADMISSIONS:
        raise ValueError(f"serving runtime {name!r}: kv_admission.policy not in {KV_ADMISSIONS}")
    unknown = set(raw) - {"policy", "output_share"}
    if unknown:
        raise ValueError(f"serving runtime {name!r}: kv_admission: unknown {sorted(unknown)}")
    if raw["policy"] == "reserve_full":
        if "output_share" in raw:
            raise ValueError(f"serving runtime {name!r}: reserve_full reserves the whole output")
        return RESERVE_FULL
    share = float(raw.get("output_share", ON_DEMAND_OUTPUT_SHARE))
    if not 0.0 < share <= 1.0:
        raise ValueError(f"serving runtime {name!r}: kv_admission.output_share not in (0, 1]")
    return KvAdmission("on_demand", share)


_SERVING_OPTIONAL = {
    "kv_admission",
    "kv_at_start",
    "fp8_kv",
    "fp4_weight_only_min_cc",
    "fp8_weight_only_min_cc",
    "fp4_weight_only_archs",
    "profile_bytes_per_logit",
    "reserve_rule",
    "startup_activations",
    "int4_format",
    "int4_reads",
    "step_overhead_per_seq_us",
    "step_serial_per_seq_us",
    "mixed_step_host_us_per_kernel",
    "large_gpu",
}
_SERVING_FIELDS = {f.name for f in fields(ServingRuntime)} - {"sources"} - _SERVING_OPTIONAL


@dataclass(frozen=True, slots=True)
class EfficiencyTable:
    rows: tuple[Row, ...] = ()
    bits_per_weight: dict[str, float] = field(default_factory=dict)
    default_runtime: dict[str, str] = field(default_factory=dict)
    # Calibrated throughput bands: (regime or "regime/runtime", vendor or "all") -> (low, high)
    # factors on the estimate, split-conformal on published results with each GPU and each
    # workload held out (benchmarks/accuracy.py).
    bands: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    # the same keys -> the band's centre: the median measured ÷ predicted (the regime's bias),
    # about which app/domain/bands.py widens a row that extrapolates
    centres: dict[tuple[str, str], float] = field(default_factory=dict)
    # regime -> (runtimes, architectures) the calibration set has results for (the file states
    # them as its ``pairs``, below: parse_table reads them off those)
    covered: dict[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)
    # regime -> the (runtime, architecture) pairs the calibration set has results for: a row
    # whose runtime and architecture are each covered but never together is widened
    # (app/domain/bands.py); a regime absent here: no pair is judged
    covered_pairs: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)
    # regimes whose calibration set holds multi-GPU results (no multi-GPU widening there)
    multi_gpu: frozenset[str] = frozenset()
    # regime -> how its multi-GPU LLM inference results spanned their GPUs (the runtimes'
    # ``span``: tensor, layers); a row spanning its GPUs another way is widened
    # (app/domain/bands.py). A regime of ``multi_gpu`` absent here: any span counts as measured
    multi_gpu_spans: dict[str, frozenset[str]] = field(default_factory=dict)
    # extrapolation ("runtime", "architecture", "runtime_architecture", "moe", "four_bit",
    # "span") -> (low, high): the term,
    # added in quadrature in log space, that rows the tuning sets held out that way needed
    # (benchmarks/accuracy.py, leave-one-unit-out; app/domain/bands.py)
    extrapolation: dict[str, tuple[float, float]] = field(default_factory=dict)
    # regime, or "all" (regimes pooled) -> (low, high): the term a source the tuning sets never
    # measured needed, added in quadrature to every row (benchmarks/accuracy.py,
    # leave-one-source-out; app/domain/bands.py)
    new_source: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Task 'serving'': each serving runtime's defaults, by runtime name.
    serving: dict[str, ServingRuntime] = field(default_factory=dict)
    # GPU slug -> datapath (SUSTAINED_DTYPES) -> TFLOPS a large dense GEMM holds over a long
    # run at the board's power limit (the ``sustained_gemm_tflops`` section): training steps
    # price their GEMMs at no more than it (perf._sustained_shares)
    sustained_gemm: dict[str, dict[str, float]] = field(default_factory=dict)
    # Every profile by the values the rows name, and each runtime's GPU-independent values:
    # built from the rows with the table (see ProfileTable)
    profiles: ProfileTable = field(init=False, compare=False, repr=False, hash=False)
    # Values worked out from the table alone, kept with it (app/domain/bands.py: a row's band
    # by its inputs): the table is frozen, so they hold as long as it does.
    derived: dict[object, Any] = field(init=False, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "profiles", ProfileTable(self.rows))
        object.__setattr__(self, "derived", {})

    def band(
        self, regime: str, vendor: str, runtime: str = "", kind: str = "", bits: str = ""
    ) -> tuple[float, float] | None:
        """The workload kind's own band in the regime ("train-llm/fine-tuning") where the
        tuning sets had enough of it, else the runtime's precision class's
        ("infer-cnn/tensorflow/16-bit": bands.PRECISION_BANDS), else the runtime's
        ("decode/llama.cpp"), else the regime's; the vendor's where calibrated, else all
        vendors'."""
        key = self._band_key(regime, vendor, runtime, kind, bits)
        return self.bands[key] if key is not None else None

    def centre(
        self, regime: str, vendor: str, runtime: str = "", kind: str = "", bits: str = ""
    ) -> float:
        """The centre (median measured ÷ predicted) of the band ``band`` gives; 1 without."""
        key = self._band_key(regime, vendor, runtime, kind, bits)
        return self.centres.get(key, 1.0) if key is not None else 1.0

    def _band_key(
        self, regime: str, vendor: str, runtime: str, kind: str = "", bits: str = ""
    ) -> tuple[str, str] | None:
        keys = (
            ([f"{regime}/{kind}"] if kind else [])
            + ([f"{regime}/{runtime}/{bits}"] if runtime and bits else [])
            + ([f"{regime}/{runtime}"] if runtime else [])
            + [regime]
        )
        for key in keys:
            for v in (vendor, "all"):
                if (key, v) in self.bands:
                    return key, v
        return None

    def band_of_kind(self, regime: str, kind: str) -> bool:
        """Whether the tuning sets gave the workload kind a band of its own in the regime."""
        return bool(kind) and any(k == f"{regime}/{kind}" for k, _ in self.bands)

    def band_of_precision(self, regime: str, runtime: str, bits: str) -> bool:
        """Whether the tuning sets gave the runtime's precision class a band of its own."""
        return bool(bits) and any(k == f"{regime}/{runtime}/{bits}" for k, _ in self.bands)

    def source_term(self, family: str) -> tuple[float, float] | None:
        """The band family's own new-source term where it had enough sources, else the pooled
        one. A family is a regime ("train"), or a workload kind the tuning sets band apart
        ("train-llm/fine-tuning", bands.term_family): a kind's sources are not its regime's,
        so without a term of its own it takes the pooled one, never its regime's."""
        return self.new_source.get(family) or self.new_source.get("all")

    def profile(
        self,
        gpu: GpuSpec,
        backend: str,
        runtime: str,
        precision: str,
        regime: str,
        family: str = "",
    ) -> RuntimeProfile:
        """``family``: the model's ("": none named, so no family row applies)."""
        return self.profiles.get(gpu, backend, runtime, precision, regime, family)

    def runtime_value(self, runtime: str, name: str) -> Any:
        """A field set by the runtime's GPU-independent rows (e.g. its context size)."""
        return self.profiles.runtime_values(runtime).get(name)

    def sustained_gemm_tflops(self, slug: str, dtype: str) -> float | None:
        """The TFLOPS a dense GEMM on ``dtype``'s datapath holds on this GPU over a long run,
        where the table has a measurement of it; None otherwise."""
        return self.sustained_gemm.get(slug, {}).get(dtype)


_FIELDS = {f.name for f in fields(RuntimeProfile)} - {"runtime", "regime", "sources"}


# 32-bit floating-point FMA lanes per SM by compute capability (CUDA C++ Programming Guide,
# "Throughput of Native Arithmetic Instructions", results per clock cycle per multiprocessor):
# 64 on Volta, Turing and GA100, 128 on GA10x, Ada, Hopper and Blackwell. Only the parts whose
# llama.cpp prompt path is the int8-MMA MMQ kernel (Turing and later) are listed.
FP32_LANES_PER_SM = {
    "7.5": 64,
    "8.0": 64,
    "8.6": 128,
    "8.7": 128,
    "8.9": 128,
    "9.0": 128,
    "10.0": 128,
    "10.3": 128,
    "12.0": 128,
    "12.1": 128,
}


# Dense 16-bit tensor-core FLOP per SM per clock at the die's own full rate (FP16 accumulate),
# by compute capability: 8 Turing tensor cores × 64 FMA, 4 GA10x / AD10x / GB20x ones × 128
# (1024), 4 GA100 ones × 256 (2048; h100-mma-rate-forum in data/efficiency.yaml). GeForce
# parts (and the L40's datasheet) list half of it, their FP32-accumulate rate, a product limit
# on the same silicon; workstation datasheets list it (RTX 6000 Ada: 142 SMs × 2.505 GHz ×
# 1024 = 364 TFLOPS). Hopper is left out: its per-watt figure is wgmma's, which MMQ's mma.sync
# does not run.
DENSE16_FLOP_PER_SM_CLOCK = {"7.5": 1024, "8.0": 2048, "8.6": 1024, "8.9": 1024, "12.0": 1024}


def die_tensor16_tflops(gpu: GpuSpec) -> float | None:
    """The die's dense 16-bit tensor peak at its full rate: SMs × boost clock × the per-SM
    rate above (the ``sm`` basis, FP32 peak × 128 ÷ lanes per SM, is SMs × clock × 256 FLOP),
    whatever accumulate mode the datasheet's figure is for; None outside the tables."""
    lanes = FP32_LANES_PER_SM.get(gpu.compute_capability or "")
    per_sm = DENSE16_FLOP_PER_SM_CLOCK.get(gpu.compute_capability or "")
    if not (gpu.fp32_tflops and lanes and per_sm):
        return None
    return gpu.fp32_tflops * 128 / lanes * per_sm / 256


# NVIDIA GeForce generations whose tensor cores run FP16 with FP32 accumulate at half the
# FP16-accumulate rate (Turing, GA10x, AD10x, GB20x whitepapers; data/gpus/nvidia-geforce.yaml's
# header): where the die table does not reach a part, its consumer and laptop boards are taken
# to list that half rate
HALF_RATE_FP32_ACCUMULATE = ("7.5", "8.6", "8.9", "12.0")
# A listed 16-bit figure at or under this share of the die's full rate is the half (FP32-
# accumulate) one: the two sit at 0.5 and 1.0 of it, whatever the board's clock
HALF_RATE_SHARE = 0.75
# Achieved ÷ peak of a good 16-bit (or TF32) GEMM on a half-rate figure: the tensor cores run
# FP32 accumulate at half the rate the SM's operand path was built to feed, and a GeForce board
# boosts past the clock its figure is quoted at, so cuBLAS holds the whole figure: MAMF's RTX
# 3090 Ti ≈ 100 % (docs/methodology.md [BM]); PyTorch fp16 torch.matmul on 4096²-10240²
# matrices (zzc0721/torch-performance-test-data database.md) reads 75.5-75.9 TFLOPS on three
# RTX 3090s (1.06 of 71.2), 75.6 on an RTX 3080 Ti, 75-76 on RTX 4070 SUPERs, 0.96-1.04 of
# 165.2 on RTX 4090s, 1.07-1.13 of 209.5 on RTX 5090s, 39.0 on an RTX 2080 (0.97 of 40.3).
# Full-rate figures keep perf's 0.80 (A100 0.87, H100 0.80; the same database: RTX A6000 0.78,
# L40S 0.73, V100S 0.68)
HALF_RATE_GEMM_SHARE = 1.0
# The share of the FP16-accumulate full rate a GeForce GEMM accumulating in FP16 (TensorRT's
# FP16 tactics, llama.cpp's cuBLAS path) holds: a full-rate path, priced at the 0.90 such
# paths had before the half-rate share above (llamacpp_cublas_prompt's tuning rows were read
# at it), not at the half rate's 1.0
FP16_ACCUMULATE_GEMM_SHARE = 0.90


def half_rate_fp16(gpu: GpuSpec) -> bool:
    """Whether the catalog's 16-bit tensor figure is the die's FP32-accumulate half rate (a
    product limit: GeForce boards, the L40) rather than its full rate (TITAN RTX, workstation and
    datacenter boards), read off the die table, not the segment: the TITAN RTX is a consumer
    board whose 130 TFLOPS is TU102's full rate with FP32 accumulate, the L40 a datacenter one
    whose 181 is AD102's half. Outside the die table, a consumer or laptop board of a
    half-rate generation."""
    if gpu.vendor != "nvidia":
        return False
    full, listed = die_tensor16_tflops(gpu), gpu.peak_tflops("fp16")
    if full and listed:
        return listed <= HALF_RATE_SHARE * full
    return (
        gpu.segment in ("consumer", "laptop")
        and gpu.compute_capability in HALF_RATE_FP32_ACCUMULATE
    )


def sm_clock_share(gpu: GpuSpec, profile: RuntimeProfile) -> float:
    """The share of its boost clock a power-capped board holds under a kernel that keeps every
    SM busy per SM-clock, not per datasheet datapath (llama.cpp's MMQ): min(1, TDP × the
    profile's ``tensor_tflops_per_watt`` ÷ the die's full-rate 16-bit tensor peak). The board
    draws for its SMs whatever accumulate mode its datasheet quotes, so two boards of one die
    and one TDP hold the same SM-clocks (L40 and RTX 6000 Ada; A40 and RTX A6000). Outside
    the die table, the catalog's fp16 peak stands in. 1 without a figure or TDP."""
    per_watt = profile.tensor_tflops_per_watt
    full = die_tensor16_tflops(gpu) or gpu.peak_tflops("fp16")
    if not (per_watt and gpu.tdp_w and full):
        return 1.0
    return min(1.0, gpu.tdp_w * per_watt / full)


def basis_tflops(gpu: GpuSpec, basis: str, profile: RuntimeProfile) -> float | None:
    """The rate a ``compute_basis`` names, in TFLOPS, before the profile's ``compute`` factor.

    ``sm``: the SM's own issue rate, SMs × sustained clock, counted in units of a 128-lane SM's
    FP32 FMA rate — the catalog's FP32 peak × 128 ÷ the part's FP32 lanes per SM. A kernel bound
    by per-SM instruction issue and shared-memory traffic rather than by the tensor or FP32
    peak (llama.cpp's MMQ) runs at the same rate per SM-clock on a GA100 (64 FP32 lanes) as on
    a GA102 (128); the FP32 peak alone would halve the GA100. On a power-capped board
    (``tensor_tflops_per_watt``) the clock is the one it holds under that load
    (``sm_clock_share``). Parts without a listed compute capability take the FP32 peak. Any
    other basis: that datapath's dense peak."""
    if basis == "fp32" or basis == "sm":
        fp32 = gpu.fp32_tflops
        if basis == "fp32" or not fp32:
            return fp32
        lanes = FP32_LANES_PER_SM.get(gpu.compute_capability or "")
        if lanes is None:
            return fp32
        return fp32 * 128 / lanes * sm_clock_share(gpu, profile)
    return gpu.peak_tflops(basis)


def tensor_share(profile: RuntimeProfile, mode: str) -> float:
    """The runtime's 16-bit GEMMs' and fused attention's rate ÷ the full GEMM rate
    (``gemm_peak_share``: TensorRT's own Ampere-built tactics on Hopper, half its dense peak)
    for a 16-bit job where its row sets one, else 1: an 8-bit engine is a later TensorRT with
    Hopper-native tactics (FP8 has no Ampere form), which the share does not describe."""
    share = profile.gemm_peak_share
    return share if share and mode in AMP_PRECISIONS else 1.0


def memory_class(gpu: GpuSpec) -> str:
    """hbm | gddr | lpddr (unified SoC memory) from the catalog's memory type."""
    return gpu.memory_kind


def _keys(
    gpu: GpuSpec, backend: str, runtime: str, precision: str, regime: str, family: str = ""
) -> dict[str, str]:
    return {
        "family": family,
        "runtime": runtime,
        "regime": regime,
        "vendor": gpu.vendor,
        "architecture": gpu.architecture.lower(),
        "backend": backend,
        "memory_kind": memory_class(gpu),
        "compute_capability": gpu.compute_capability or "",
        "precision": precision,
    }


def _matches(row: Row, keys: dict[str, str]) -> bool:
    for k, want in row.match.items():
        options = [w.strip().lower() for w in want.split("|")]
        if keys.get(k, "").lower() not in options:
            return False
    return True


def resolve(
    table: EfficiencyTable,
    gpu: GpuSpec,
    backend: str,
    runtime: str,
    precision: str,
    regime: str,
    family: str = "",
) -> RuntimeProfile:
    """The profile worked out afresh from the rows (``ProfileTable.get`` looks it up)."""
    keys = _keys(gpu, backend, runtime, precision, regime, family)
    return _resolve(table.rows, keys, runtime, regime)


def _resolve(
    rows: tuple[Row, ...], keys: dict[str, str], runtime: str, regime: str
) -> RuntimeProfile:
    chosen: dict[str, tuple[int, int, Any, str | None]] = {}
    for i, row in enumerate(rows):
        if not _matches(row, keys):
            continue
        spec = len(row.match)
        for name, value in row.values.items():
            old = chosen.get(name)
            if old is None or (spec, i) >= (old[0], old[1]):
                chosen[name] = (spec, i, value, row.source)
    values = {k: v[2] for k, v in chosen.items()}
    for name in ("native", "fuse"):
        if name in values:
            values[name] = tuple(values[name] or ())
    sources = tuple(sorted({v[3] for v in chosen.values() if v[3]}))
    return RuntimeProfile(runtime=runtime, regime=regime, sources=sources, **values)


# Stands for every value no row names: such a value matches exactly the rows that do not name
# its key, like every other one
_UNNAMED = "\x00"
_GPU_KEYS = ("vendor", "architecture", "memory_kind", "compute_capability")
_LOOKUP_KEYS = (*_GPU_KEYS, "backend", "runtime", "precision", "regime", "family")


class ProfileTable:
    """Every runtime profile the rows can resolve to, by the values the rows name.

    The rows name few values (two vendors, a few architectures, memory kinds, backends,
    runtimes and regimes; no compute capability or precision yet), so a lookup projects
    (GPU, backend, runtime, precision, regime) onto them — a value no row names becomes
    ``_UNNAMED`` — and reads one profile per projected tuple. A GPU's part (vendor,
    architecture, memory kind, compute capability: the shipped 107 cards make ~30 tuples) is
    worked out once per spec (``GpuSpec.profile_keys``), and each pair of a GPU part and a
    request's (backend, runtime, precision, regime) is projected once. A profile is resolved
    from the rows the first time its tuple is asked for: the table holds at most one profile
    per tuple the rows can tell apart, a number the rows fix whatever the catalog or the
    requests. ``tests/domain/test_profile_table.py`` holds every lookup equal to ``resolve``
    (the rows read afresh)."""

    __slots__ = ("_by_part", "_named", "_profiles", "_rows", "_runtime_values")

    def __init__(self, rows: tuple[Row, ...]) -> None:
        self._rows = rows
        named: dict[str, set[str]] = {k: set() for k in MATCH_KEYS}
        for row in rows:
            for k, want in row.match.items():
                named[k].update(w.strip().lower() for w in want.split("|"))
        self._named = {k: frozenset(v) for k, v in named.items()}
        self._profiles: dict[tuple[str, ...], RuntimeProfile] = {}
        self._by_part: dict[tuple[str, ...], dict[tuple[str, ...], RuntimeProfile]] = {}
        self._runtime_values: dict[str, dict[str, Any]] = {}

    def _project(self, key: str, value: str) -> str:
        value = value.lower()
        return value if value in self._named[key] else _UNNAMED

    def get(
        self,
        gpu: GpuSpec,
        backend: str,
        runtime: str,
        precision: str,
        regime: str,
        family: str = "",
    ) -> RuntimeProfile:
        # by the GPU's values and the request's as given (a handful of each), each pair
        # projected once onto the rows' values
        part = gpu.profile_keys
        by_request = self._by_part.get(part)
        if by_request is None:
            by_request = self._by_part[part] = {}
        asked = (backend, runtime, precision, regime, family)
        hit = by_request.get(asked)
        if hit is None:
            hit = by_request[asked] = self._projected(part, asked)
        return hit

    def _projected(
        self, part: tuple[str, str, str, str], asked: tuple[str, str, str, str, str]
    ) -> RuntimeProfile:
        values = (*part, *asked)
        key = tuple(self._project(k, v) for k, v in zip(_LOOKUP_KEYS, values, strict=True))
        runtime, regime = asked[1], asked[3]
        key += (runtime, regime)  # a profile names the runtime and regime it was asked for
        hit = self._profiles.get(key)
        if hit is None:
            keys = dict(zip(_LOOKUP_KEYS, key[: len(_LOOKUP_KEYS)], strict=True))
            hit = self._profiles[key] = _resolve(self._rows, keys, runtime, regime)
        return hit

    def runtime_values(self, runtime: str) -> dict[str, Any]:
        """The fields the runtime's GPU-independent rows set (the later row wins)."""
        hit = self._runtime_values.get(runtime)
        if hit is None:
            hit = {}
            for row in self._rows:
                if set(row.match) <= {"runtime"} and _matches(row, {"runtime": runtime}):
                    hit.update(row.values)
            self._runtime_values[runtime] = hit
        return hit


def parse_table(doc: dict[str, Any]) -> EfficiencyTable:
    """Build the table from the parsed YAML document; unknown fields are an error."""
    rows: list[Row] = []
    for raw in doc.get("rows") or []:
        match = {k: str(raw[k]) for k in MATCH_KEYS if raw.get(k) is not None}
        values = {k: raw[k] for k in raw if k in _FIELDS}
        unknown = set(raw) - set(MATCH_KEYS) - _FIELDS - {"source", "note"}
        if unknown:
            raise ValueError(f"efficiency row {raw!r}: unknown fields {sorted(unknown)}")
        if values.get("span", "tensor") not in MULTI_GPU_MODES:
            raise ValueError(f"efficiency row {raw!r}: span must be one of {MULTI_GPU_MODES}")
        rows.append(Row(match=match, values=values, source=raw.get("source")))
    bits = {
        str(k): float(v["bits"])
        for k, v in (doc.get("quantization") or {}).items()
        if isinstance(v, dict) and v.get("bits") is not None
    }
    defaults = {str(k): str(v) for k, v in (doc.get("default_runtime") or {}).items()}
    bands: dict[tuple[str, str], tuple[float, float]] = {}
    centres: dict[tuple[str, str], float] = {}
    for regime, by_vendor in ((doc.get("bands") or {}).get("regimes") or {}).items():
        for vendor, pair in (by_vendor or {}).items():
            lo, hi = float(pair[0]), float(pair[1])
            if not 0 < lo <= 1 <= hi:
                raise ValueError(f"band {regime}/{vendor} must bracket 1: {pair}")
            bands[(str(regime), str(vendor))] = (lo, hi)
            if len(pair) > 2:  # [low, high, centre]
                centres[(str(regime), str(vendor))] = float(pair[2])
    blocks = {
        str(regime): c or {}
        for regime, c in ((doc.get("bands") or {}).get("covered") or {}).items()
    }
    # `pairs: {vllm: [Ada Lovelace, Hopper]}`: each runtime's architectures measured together
    covered_pairs = {
        regime: frozenset(
            (str(rt), str(a)) for rt, archs in c["pairs"].items() for a in archs or ()
        )
        for regime, c in blocks.items()
        if isinstance(c.get("pairs"), dict)
    }
    covered = {regime: _covered(c) for regime, c in blocks.items()}
    multi_gpu = frozenset(regime for regime, c in blocks.items() if c.get("multi_gpu"))
    # `multi_gpu_spans: [tensor]`: the spans its multi-GPU inference results ran
    multi_gpu_spans = {
        regime: frozenset(str(x) for x in c["multi_gpu_spans"])
        for regime, c in blocks.items()
        if c.get("multi_gpu_spans")
    }
    extrapolation: dict[str, tuple[float, float]] = {}
    for name, pair in ((doc.get("bands") or {}).get("extrapolation") or {}).items():
        lo, hi = float(pair[0]), float(pair[1])
        if not 0 < lo <= 1 <= hi:
            raise ValueError(f"extrapolation term {name} must bracket 1: {pair}")
        extrapolation[str(name)] = (lo, hi)
    new_source: dict[str, tuple[float, float]] = {}
    for name, pair in ((doc.get("bands") or {}).get("new_source") or {}).items():
        lo, hi = float(pair[0]), float(pair[1])
        if not 0 < lo <= 1 <= hi:
            raise ValueError(f"new-source term {name} must bracket 1: {pair}")
        new_source[str(name)] = (lo, hi)
    return EfficiencyTable(
        rows=tuple(rows),
        bits_per_weight=bits,
        default_runtime=defaults,
        bands=bands,
        centres=centres,
        covered=covered,
        covered_pairs=covered_pairs,
        multi_gpu=multi_gpu,
        multi_gpu_spans=multi_gpu_spans,
        extrapolation=extrapolation,
        new_source=new_source,
        serving=_serving_runtimes(doc.get("serving_runtimes") or {}),
        sustained_gemm=_sustained_gemm(doc.get("sustained_gemm_tflops") or {}),
    )


def covered_sets(
    pairs: Mapping[str, Iterable[str] | None],
) -> tuple[frozenset[str], frozenset[str]]:
    """The (runtimes, architectures) a regime's runtime → architectures ``pairs`` cover: the
    one reading of them, the file's reader's and benchmarks/accuracy.py's alike."""
    archs = (a for by_rt in pairs.values() for a in by_rt or ())
    return frozenset(str(r) for r in pairs), frozenset(str(a) for a in archs)


def _covered(block: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """A regime's covered (runtimes, architectures): the runtimes its ``pairs`` name and the
    architectures they ran on, which benchmarks/accuracy.py writes alone (each fact once); a
    block that lists them (written before the pairs, or without them) as it lists them."""
    pairs = block.get("pairs")
    if isinstance(pairs, dict) and "runtimes" not in block and "architectures" not in block:
        return covered_sets(pairs)
    return (
        frozenset(str(r) for r in block.get("runtimes") or ()),
        frozenset(str(a) for a in block.get("architectures") or ()),
    )


# The datapaths a sustained GEMM figure may be given for (the job modes perf prices GEMMs at)
SUSTAINED_DTYPES = frozenset(SUSTAINED_GEMM_PRECISIONS)


def _sustained_gemm(raw: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Every entry names its source; a datapath outside SUSTAINED_DTYPES is an error."""
    out: dict[str, dict[str, float]] = {}
    for slug, values in raw.items():
        values = dict(values or {})
        if not values.get("source"):
            raise ValueError(f"sustained_gemm_tflops {slug!r}: no source")
        rates = {k: v for k, v in values.items() if k not in ("source", "note")}
        unknown = set(rates) - SUSTAINED_DTYPES
        if unknown:
            raise ValueError(f"sustained_gemm_tflops {slug!r}: unknown datapaths {sorted(unknown)}")
        if any(float(v) <= 0 for v in rates.values()):
            raise ValueError(f"sustained_gemm_tflops {slug!r}: rates must be positive")
        out[str(slug)] = {str(k): float(v) for k, v in rates.items()}
    return out


def _large_gpu(name: str, raw: Any) -> tuple[float, tuple[str, ...], int, int] | None:
    if raw is None:
        return None
    want = {"min_gib", "except", "max_batch", "chunk_tokens"}
    if not isinstance(raw, dict) or set(raw) != want:
        raise ValueError(f"serving runtime {name!r}: large_gpu needs exactly {sorted(want)}")
    return (
        float(raw["min_gib"]),
        tuple(str(x).lower() for x in raw["except"] or ()),
        int(raw["max_batch"]),
        int(raw["chunk_tokens"]),
    )


_RESERVE_KEYS = {
    "buckets",
    "graph_tp",
    "base_mib",
    "mib_per_chunk_token",
    "least_chunk_tokens",
    "mib_per_graph_seq",
    "mib_per_tp",
    "floor_mib",
    "floor_above_mib",
}


def _reserve_rule(name: str, raw: Any) -> ReserveRule | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != _RESERVE_KEYS:
        raise ValueError(f"serving runtime {name!r}: reserve_rule needs {sorted(_RESERVE_KEYS)}")
    buckets = tuple(
        (None if b is None else float(b), int(c), int(lo), int(hi))
        for b, c, lo, hi in raw["buckets"]
    )
    if not buckets or buckets[-1][0] is not None:
        raise ValueError(f"serving runtime {name!r}: reserve_rule's last bucket needs below: null")
    return ReserveRule(
        buckets=buckets,
        graph_tp=int(raw["graph_tp"]),
        base_mib=float(raw["base_mib"]),
        mib_per_chunk_token=float(raw["mib_per_chunk_token"]),
        least_chunk_tokens=int(raw["least_chunk_tokens"]),
        mib_per_graph_seq=float(raw["mib_per_graph_seq"]),
        mib_per_tp=float(raw["mib_per_tp"]),
        floor_mib=float(raw["floor_mib"]),
        floor_above_mib=float(raw["floor_above_mib"]),
    )


def _serving_runtimes(raw: dict[str, Any]) -> dict[str, ServingRuntime]:
    """Every field is required (a serving runtime has no GPU-specific refinements to fall back
    on); unknown fields are an error, as in rows."""
    out: dict[str, ServingRuntime] = {}
    for name, values in raw.items():
        given = set(values or {}) - {"source", "note"} - _SERVING_OPTIONAL
        if given != _SERVING_FIELDS:
            missing, unknown = _SERVING_FIELDS - given, given - _SERVING_FIELDS
            raise ValueError(
                f"serving runtime {name!r}: missing {sorted(missing)}, unknown {sorted(unknown)}"
            )
        src = values.get("source") or ()
        sources = (src,) if isinstance(src, str) else tuple(str(x) for x in src)
        out[str(name)] = ServingRuntime(
            version=str(values["version"]),
            continuous_batching=bool(values["continuous_batching"]),
            memory_utilization=float(values["memory_utilization"]),
            of_free=bool(values["of_free"]),
            max_batch=int(values["max_batch"]),
            chunk_tokens=int(values["chunk_tokens"]),
            step_overhead_ms=float(values["step_overhead_ms"]),
            sources=sources,
            int4_format=str(values["int4_format"]) if values.get("int4_format") else None,
            int4_reads=tuple(str(x) for x in values.get("int4_reads") or ()),
            step_overhead_per_seq_us=float(values.get("step_overhead_per_seq_us") or 0.0),
            step_serial_per_seq_us=float(values.get("step_serial_per_seq_us") or 0.0),
            mixed_step_host_us_per_kernel=float(values.get("mixed_step_host_us_per_kernel") or 0.0),
            large_gpu=_large_gpu(name, values.get("large_gpu")),
            fp4_weight_only_min_cc=(
                str(values["fp4_weight_only_min_cc"])
                if values.get("fp4_weight_only_min_cc")
                else None
            ),
            fp8_weight_only_min_cc=(
                str(values["fp8_weight_only_min_cc"])
                if values.get("fp8_weight_only_min_cc")
                else None
            ),
            fp4_weight_only_archs=tuple(
                str(a).lower() for a in values.get("fp4_weight_only_archs") or ()
            ),
            profile_bytes_per_logit=(
                float(values["profile_bytes_per_logit"])
                if values.get("profile_bytes_per_logit") is not None
                else None
            ),
            reserve_rule=_reserve_rule(name, values.get("reserve_rule")),
            startup_activations=_startup_activations(name, values.get("startup_activations")),
            fp8_kv=bool(values.get("fp8_kv", True)),
            kv_admission=_kv_admission(name, values.get("kv_admission")),
            kv_at_start=bool(values.get("kv_at_start", False)),
        )
    return out


STARTUP_ACTIVATIONS = ("outside_claim", "warmup_forward")


def _startup_activations(name: str, raw: Any) -> str | None:
    if raw is None:
        return None
    if raw not in STARTUP_ACTIVATIONS:
        raise ValueError(
            f"serving runtime {name!r}: startup_activations {raw!r} not in {STARTUP_ACTIVATIONS}"
        )
    return str(raw)


# Vendors size HBM and GDDR in binary units: an "80 GB" H100 holds 80 GiB (85.9 × 10^9 bytes),
# a "24 GB" RTX 4090 24 GiB; Apple's unified memory likewise. A process does not see all of it:
# CUDA reports as total what is left after the driver's own reserve (the GSP firmware's
# carve-out among it) and, on GDDR parts with ECC on (the datacenter default), after the ECC
# check bits, so a "16 GB" T4 shows 14.74 GiB and an "80 GB" H100 79.11 GiB (PyTorch's "total
# capacity", which is cudaMemGetInfo's total; the catalog's ``visible_memory_mib``, sources in
# data/gpus; nvidia-smi's larger "total" counts the reserve). Where the catalog has that figure
# the rule starts from it, else from the vendor's GiB. The engine counts in 10^9 bytes, and this
# is the ONE usable-memory rule: training, inference and serving all read ``usable_gb`` (serving
# then applies its runtime's own share in its memory plan). vLLM's gpu_memory_utilization is a
# share of this same CUDA total, SGLang's mem_fraction_static of the memory free within it.
# macOS lets the GPU wire a share of unified memory by default (Metal's
# recommendedMaxWorkingSetSize; data/efficiency.yaml ``apple-working-set``): two thirds on a Mac
# of 32 GB or less, three quarters above. llama.cpp logs it at start-up: 16 GB -> 10,922.67 MiB
# (2/3: llama.cpp #2209, llama-cpp-python #687), 32 GB -> 21,845.34 MiB (2/3: ollama #434,
# llama.cpp PR #2011; 22,906.50 MB of 10^6 bytes in later builds' logs), 36 GB (M4 Max) ->
# 28,991.03 MB (3/4 of 36 GiB), 64 GB -> 49,152 MiB (3/4: llama.cpp #1870). ``wired_share``.
UNIFIED_MEMORY_USABLE = 0.75
UNIFIED_MEMORY_USABLE_SMALL = 2.0 / 3.0
UNIFIED_SMALL_MAX_GB = 32.0
BYTES_PER_MIB = float(1 << 20)


def device_memory_gb(gpu: GpuSpec) -> float:
    """The device memory a process can address, in 10^9 bytes: what CUDA reports as total
    (``visible_memory_mib``) where the catalog has it, else the vendor's figure as GiB."""
    if gpu.visible_memory_mib is not None:
        return gpu.visible_memory_mib * BYTES_PER_MIB / 1e9
    return gpu.memory_gb * GIB_PER_GB


def usable_gb(gpu: GpuSpec, share: float = 1.0) -> float:
    """Device memory a job may use, in 10^9 bytes: the memory CUDA reports (else the vendor's
    GiB, ``device_memory_gb``), less what the OS keeps back (unified memory), times the
    ``share`` a runtime claims up front (vLLM's gpu_memory_utilization: ``runtime_share``).
    Inference and serving both read it."""
    return device_memory_gb(gpu) * wired_share(gpu) * share


def wired_share(gpu: GpuSpec) -> float:
    """The share of its memory the GPU may use before a runtime claims any: all of it on a
    discrete card; on unified memory the share the OS lets the GPU wire by default, macOS's
    recommendedMaxWorkingSetSize: 2/3 on a Mac of at most ``UNIFIED_SMALL_MAX_GB`` (16, 24,
    32 GB), 3/4 on a larger one (36 GB and up). Another vendor's SoC keeps 3/4 (no source
    for its OS's share). macOS 26 logs show higher figures on some machines (a 128 GB Mac
    107.52 GiB, 0.84: antirez/ds4 #893) that are not modelled."""
    if not unified(gpu):
        return 1.0
    if gpu.vendor == "apple" and gpu.memory_gb and gpu.memory_gb <= UNIFIED_SMALL_MAX_GB:
        return UNIFIED_MEMORY_USABLE_SMALL
    return UNIFIED_MEMORY_USABLE


def unified(gpu: GpuSpec) -> bool:
    """Whether the GPU shares the machine's memory (Apple silicon, other SoCs): its usable
    memory is the share the OS lets the GPU wire, not the whole."""
    return gpu.vendor == "apple" or gpu.segment == "soc"


def serving_spec(table: EfficiencyTable | None, runtime: str) -> ServingRuntime | None:
    """The runtime's ``serving_runtimes`` row, where the table has one."""
    return table.serving.get(runtime) if table is not None else None


def runtime_share(
    table: EfficiencyTable | None, runtime: str, tp: int = 1, gpu: GpuSpec | None = None
) -> tuple[float, bool]:
    """(share, of_free): the memory a runtime claims up front, from its ``serving_runtimes``
    row, the one datum inference and serving read, at ``tp`` GPUs per replica on ``gpu``
    (``claimed_share``; without a GPU, the runtime's own figure for an unknown one). ``of_free``:
    a share of what is free after the weights and activations (TensorRT-LLM's
    free_gpu_memory_fraction), which only sizes the KV cache; otherwise a share of the device
    (vLLM gpu_memory_utilization, SGLang mem_fraction_static) that weights and KV cache live
    in. (1.0, False): a runtime that allocates as it goes (eager PyTorch, llama.cpp, MLX) or
    none listed."""
    spec = serving_spec(table, runtime)
    if spec is None:
        return 1.0, False
    return claimed_share(spec.memory_utilization, spec.reserve_rule, tp, gpu), spec.of_free


def device_mib(gpu: GpuSpec) -> float:
    """The device's memory in MiB, the unit SGLang reads it in (nvidia-smi's memory.total):
    what CUDA reports where the catalog has it, else the vendor's GB as GiB."""
    return device_memory_gb(gpu) * 1e9 / BYTES_PER_MIB


def claimed_share(
    share: float, rule: ReserveRule | None, tp: int, gpu: GpuSpec | None = None
) -> float:
    """The share a runtime claims at ``tp`` GPUs per replica on ``gpu``: its ``rule`` on the
    GPU's memory where it has one (SGLang 0.5's mem_fraction_static: 0.835 on an 80 GB H100
    at tp 1), else ``share`` (and ``share`` where the GPU is not known: SGLang's own
    fallback, 0.88)."""
    if rule is not None and gpu is not None:
        return rule.share(device_mib(gpu), tp)
    return share


def device_share(
    table: EfficiencyTable | None, runtime: str, tp: int = 1, gpu: GpuSpec | None = None
) -> float:
    """The share of the device ``usable_gb`` applies for the runtime (``claim_on_device``)."""
    return claim_on_device(*runtime_share(table, runtime, tp, gpu))


def claim_on_device(share: float, of_free: bool) -> float:
    """A runtime's claim as a share of the device: itself, or 1 where it is a share of the
    memory left free (its KV pool, ``kv_pool_gb``)."""
    return 1.0 if of_free else share


def fp8_weight_only_min_cc(table: EfficiencyTable | None, runtime: str) -> str | None:
    """The compute capability from which ``runtime`` runs a dense model's FP8 weights without
    FP8 tensor cores (W8A16, 16-bit math), from its ``serving_runtimes`` row; None: it does not
    (llm_step.fp8_weight_only)."""
    spec = serving_spec(table, runtime)
    return spec.fp8_weight_only_min_cc if spec is not None else None


def fp4_weight_only_min_cc(table: EfficiencyTable | None, runtime: str) -> str | None:
    """The compute capability from which ``runtime`` runs FP4 weights without FP4 tensor
    cores (weight-only, 16-bit math), from its ``serving_runtimes`` row; None: it does not.
    Inference and serving read it (llm_step.fp4_weight_only)."""
    spec = serving_spec(table, runtime)
    return spec.fp4_weight_only_min_cc if spec is not None else None


def fp4_weight_only_archs(table: EfficiencyTable | None, runtime: str) -> tuple[str, ...]:
    """Other vendors' architectures on which ``runtime`` runs FP4 weights weight-only."""
    spec = serving_spec(table, runtime)
    return spec.fp4_weight_only_archs if spec is not None else ()


def large_gpu_applies(
    large_gpu: tuple[float, tuple[str, ...], int, int] | None, gpu: GpuSpec
) -> bool:
    """Whether a runtime's large-GPU scheduler limits (``ServingRuntime.large_gpu``) hold on
    ``gpu``: at least their GiB and not a GPU they except (vLLM: 70 GiB, A100 excepted)."""
    if large_gpu is None:
        return False
    min_gib, excepted, _, _ = large_gpu
    name = f"{gpu.name} {gpu.slug}".lower()
    return gpu.memory_gb >= min_gib and not any(x in name for x in excepted)


def scheduler_limits(
    max_batch: int,
    chunk_tokens: int,
    large_gpu: tuple[float, tuple[str, ...], int, int] | None,
    gpu: GpuSpec,
    rule: ReserveRule | None = None,
) -> tuple[int, int]:
    """(most running sequences, most tokens in one step) a runtime picks by default on
    ``gpu``: its large-GPU limits where they hold (``large_gpu_applies``), else its own; a
    runtime with a ``rule`` takes its chunked_prefill_size from the GPU's memory bucket
    (SGLang 0.5: 2,048 below 35 GiB, 4,096 below 60, 8,192 below 160, 16,384 above)."""
    if large_gpu is not None and large_gpu_applies(large_gpu, gpu):
        return large_gpu[2], large_gpu[3]
    if rule is not None:
        return max_batch, rule.bucket(device_mib(gpu), 1)[0]
    return max_batch, chunk_tokens


def spec_limits(spec: ServingRuntime, gpu: GpuSpec) -> tuple[int, int]:
    """``scheduler_limits`` of a serving runtime's row on ``gpu``."""
    return scheduler_limits(
        spec.max_batch, spec.chunk_tokens, spec.large_gpu, gpu, spec.reserve_rule
    )


def default_max_seqs(spec: ServingRuntime, gpu: GpuSpec) -> int:
    """The runtime's default most running sequences on ``gpu`` (vLLM's max_num_seqs: 1024 on
    a large GPU, else 256; vllm-batch-defaults)."""
    return spec_limits(spec, gpu)[0]


def profiling_peak_gb(per_logit: float | None, rows: int, vocab: int | None) -> float:
    """Per GPU, in GB: the activation memory a runtime's startup profiling pass reserves
    before it sizes the KV cache; 0 for a runtime without one (``per_logit`` None). vLLM V1's
    ``profile_run`` runs one step of max_num_batched_tokens through the layers, then the
    sampler over max_num_seqs rows of logits, and ``determine_available_memory`` keeps that
    peak out of the KV cache. The measured peak follows the sampler, not the layers:
    ``per_logit`` bytes (``ServingRuntime.profile_bytes_per_logit``) × ``rows`` (the default
    max_num_seqs on the GPU) × vocabulary, the same at TP 1 and 2 (the sampler's logits are
    whole on every GPU). The one rule inference (``runtime_profiling_peak_gb``, read by
    evaluate.usable_gb) and serving (serving.memory_plan) read."""
    if per_logit is None or not vocab:
        return 0.0
    return per_logit * rows * vocab / 1e9


def seqs_for_room(per_logit: float | None, vocab: int | None, room_gb: float) -> int:
    """The most sampler rows (max_num_seqs) whose profiling peak fits ``room_gb`` (0: none)."""
    if per_logit is None or not vocab or room_gb <= 0:
        return 0
    return int(room_gb * 1e9 // (per_logit * vocab))


def fewer_seqs_hint(
    per_logit: float | None, vocab: int | None, default_rows: int, room_gb: float, least: int = 1
) -> str:
    """What would fit when a profiling runtime's peak is what leaves no room: the max_num_seqs
    (vLLM serve's --max-num-seqs) whose peak fits ``room_gb``, the memory left once everything
    else is placed; "" when none from ``least`` below the default does."""
    rows = min(seqs_for_room(per_logit, vocab, room_gb), default_rows - 1)
    if rows < max(1, least):
        return ""
    peak = profiling_peak_gb(per_logit, default_rows, vocab)
    return (
        f"; vLLM's startup profiling keeps {vram(peak):.1f} GiB for its sampler over max_num_seqs "
        f"{default_rows}: --max-num-seqs {rows} (at most {rows} running requests) leaves room"
    )


def runtime_profiling_peak_gb(
    table: EfficiencyTable | None, runtime: str, gpu: GpuSpec, vocab: int | None
) -> float:
    """``profiling_peak_gb`` for ``runtime`` on ``gpu`` at its default max_num_seqs there."""
    spec = serving_spec(table, runtime)
    if spec is None:
        return 0.0
    return profiling_peak_gb(spec.profile_bytes_per_logit, default_max_seqs(spec, gpu), vocab)


def has_startup_rule(spec: ServingRuntime | None) -> bool:
    """Whether the runtime sizes its KV pool at startup around activations it reserves by a
    rule of its own (``startup_activations_gb``): vLLM, SGLang, TensorRT-LLM."""
    return spec is not None and (
        spec.profile_bytes_per_logit is not None or spec.startup_activations is not None
    )


def warmup_forward_gb(tokens: int, hidden: float, intermediate: float, tp: int) -> float:
    """Per GPU, in GB: the 16-bit activations of one forward over ``tokens`` tokens — hidden
    states, QKV and attention output (4 × hidden, whole on each GPU) and the MLP's gate/up
    intermediates (2 × intermediate, split over ``tp`` tensor-parallel GPUs)."""
    return tokens * (4.0 * hidden + 2.0 * intermediate / max(1, tp)) * 2.0 / 1e9


def startup_activations_gb(
    *,
    per_logit: float | None,
    rows: int,
    mode: str | None,
    tokens: int,
    vocab: int | None,
    hidden: float,
    intermediate: float,
    tp: int = 1,
) -> float | None:
    """Per GPU, in GB: the activation memory a runtime keeps out of its KV pool when it sizes
    that pool at startup; the one rule LLM inference (``runtime_startup_activations_gb``, read
    by evaluate.usable_gb) and serving (serving.memory_plan) read. None: the runtime has no
    such rule (it allocates as it goes; the caller keeps its own estimate).

    * vLLM (``per_logit`` set): its profiling pass's peak, the sampler over ``rows``
      (max_num_seqs) of logits (``profiling_peak_gb``), whole on every tensor-parallel GPU.
    * SGLang (``mode`` "outside_claim"): none. ``model_runner.profile_max_num_token`` makes
      the KV pool mem_fraction_static × the memory free before the weights load, less the
      weights; the chunked-prefill activations, CUDA graph buffers and sampler live in the
      remainder (server_args: "the fraction of the memory used for static allocation (model
      weights and KV cache memory pool)"), whose share ``claimed_share`` sets from the GPU.
    * TensorRT-LLM ("warmup_forward"): the PyTorch backend's KvCacheCreator runs dummy context
      requests of max_num_tokens (``tokens``) in all, each asking one output token, and sizes
      the pool as free_gpu_memory_fraction of the device less that pass's peak (weights,
      activations, non-torch memory): one forward of ``tokens`` (``warmup_forward_gb``); its
      logits are those requests' last tokens alone, a handful of rows.
    """
    if per_logit is not None:
        return profiling_peak_gb(per_logit, rows, vocab)
    if mode == "outside_claim":
        return 0.0
    if mode == "warmup_forward":
        return warmup_forward_gb(tokens, hidden, intermediate, tp)
    return None


def runtime_startup_activations_gb(
    table: EfficiencyTable | None,
    runtime: str,
    gpu: GpuSpec,
    *,
    vocab: int | None,
    hidden: float,
    intermediate: float,
    tp: int = 1,
    rows: int | None = None,
) -> float | None:
    """``startup_activations_gb`` for ``runtime`` at its defaults on ``gpu`` (max_num_seqs,
    max_num_tokens), ``tp`` GPUs per replica; None where it has no startup rule. ``rows``: the
    max_num_seqs a plan deploys where it sets fewer than the default (a batch of ``rows``
    sequences needs no more)."""
    spec = serving_spec(table, runtime)
    if not has_startup_rule(spec):
        return None  # as startup_activations_gb says, without its scheduler limits
    assert spec is not None
    # both defaults at once (default_max_seqs, default_max_tokens): read for every configuration
    seqs, tokens = spec_limits(spec, gpu)
    if rows is not None:
        seqs = max(1, min(seqs, rows))
    return startup_activations_gb(
        per_logit=spec.profile_bytes_per_logit,
        rows=seqs,
        mode=spec.startup_activations,
        tokens=tokens,
        vocab=vocab,
        hidden=hidden,
        intermediate=intermediate,
        tp=tp,
    )


def startup_reserve_note(
    runtime: str,
    *,
    per_logit: float | None,
    mode: str | None,
    seqs: int,
    tokens: int,
    gb: float,
) -> str:
    """What a row's workspace is where its runtime sets it aside by its own startup rule, in
    the words inference and serving rows both give: a reader who sees it knows it is the same
    reserve (vLLM's sampler peak over the --max-num-seqs deployed, TensorRT-LLM's warm-up
    forward). ``gb`` per GPU, in the vendors' GB."""
    if per_logit is not None:
        what = f"its sampler's startup profiling pass over --max-num-seqs {seqs}"
    elif mode == "warmup_forward":
        what = f"its warm-up forward of {tokens:,} tokens at startup"
    else:
        what = "its startup activations"
    return (
        f"workspace: {gb:.{1 if gb >= 1 else 2}f} GiB per GPU that {runtime_name(runtime)} "
        f"keeps out of the KV cache for {what}"
    )


def runtime_reserve_note(
    table: EfficiencyTable | None, runtime: str, gpu: GpuSpec, gb: float, rows: int | None
) -> str | None:
    """``startup_reserve_note`` for ``runtime`` at its defaults on ``gpu``, its max_num_seqs cut
    to ``rows`` as ``runtime_startup_activations_gb`` cuts it; None without a startup rule."""
    spec = serving_spec(table, runtime)
    if not has_startup_rule(spec):
        return None
    assert spec is not None
    seqs, tokens = spec_limits(spec, gpu)
    if rows is not None:
        seqs = max(1, min(seqs, rows))
    return startup_reserve_note(
        runtime,
        per_logit=spec.profile_bytes_per_logit,
        mode=spec.startup_activations,
        seqs=seqs,
        tokens=tokens,
        gb=gb,
    )


def default_max_tokens(spec: ServingRuntime, gpu: GpuSpec) -> int:
    """The runtime's default most tokens in one step on ``gpu`` (max_num_batched_tokens,
    max_num_tokens, chunked_prefill_size)."""
    return spec_limits(spec, gpu)[1]


def kv_pool_gb(usable: float, fixed: float, share: float, of_free: bool) -> float:
    """The KV cache a runtime allocates once ``fixed`` GB (weights, activations, context,
    allocator slack) is placed on a GPU of ``usable`` GB (``usable_gb`` at share 1): a share
    of the device less ``fixed``, or (``of_free``) a share of what ``fixed`` leaves."""
    if of_free:
        return share * (usable - fixed)
    return usable * share - fixed


EAGER = RuntimeProfile()

"""One LLM step: a prefill chunk and a decode step on one replica, the function both LLM
inference (perf) and the serving scheduler (serving.py) call.

A step runs ``decode`` sequences at a mean ``context`` plus ``prefill`` prompt tokens of
prompts of length ``prompt`` (a prefill alone: decode 0; a decode step alone: prefill 0;
continuous batching mixes them). Its time, term by term (docs/methodology.md §6):

* linear layers: max(weights read ÷ bandwidth, 2 × active params × tokens ÷ GEMM rate); MoE
  reads only the experts the step's tokens route to, each active expert's weights in full;
  where the runtime's profile models grouped GEMMs (``moe_tile_*``), the routed experts are
  their own kernels, max(their weights, their FLOPs) beside the dense layers' max: each
  touched expert's rows padded to the kernel's token tile, at the rate a GEMM of the experts'
  shallow K reaches (``routed_gemm``);
* attention: max(KV cache read ÷ bandwidth, 4·L·h FLOPs per (query, key) pair ÷ 16-bit rate);
  under latent attention every tensor-parallel GPU reads the whole latent cache (``kv_copies``);
  a prompt's pairs run the runtime's fused attention kernel, priced as the operator path
  prices that op (``prompt_attention_seconds``: its rate × kernels.shape_efficiency), or at
  the 16-bit rate where the runtime's attention is batched GEMMs (llama.cpp without -fa);
* the kernels' GPU-side gaps: layers × kernels per layer × the runtime's gap per kernel (2 µs
  under CUDA graphs, 4 µs eager). A one-token MoE step runs ~17 kernels per layer (router GEMM,
  top-k, permute, two grouped GEMMs, activation, combine besides the attention block's; 5 more
  under latent attention), each reading a few MB;
* each kernel's floor: the GEMMs and attention take at least layers × their kernels × the
  runtime's ``gemm_min_us`` / ``attention_min_us``, which replaces their bytes where larger — a
  large model split over 8 GPUs at one token is bound by its kernels, not its bytes; an MoE
  layer's routed block adds ``moe_block_us`` of small kernels (routing, quantisation, permute,
  finalize) to its experts' bytes or FLOPs, at any token count;
* GPU-to-GPU traffic of the replica's layout: two all-reduces per layer under tensor
  parallelism; one activation hand-off per stage boundary on a layer split;
* eager runtimes dispatch every op from the host, which a one-token step cannot hide: the
  step takes max(GPU time, host time);
* a serving scheduler's fixed cost per step (scheduling, sampling), zero outside a server,
  and its host work per running sequence, which the server overlaps with the GPU's step: a
  small model at a large batch waits on the host (max(GPU time, host time) again). A runtime
  that replays CUDA graphs only for steps without prompt tokens (TensorRT-LLM's PyTorch
  backend) dispatches a step that carries a prompt eagerly, from the same host thread:
  ``mixed_host_s`` more host time, weighted by the chance that the step carries one.

How one replica spans GPUs, the datapath a weight format runs on, the bandwidth and GEMM
efficiencies and the per-kernel and per-op costs are the runtime's policy (its rows in
data/efficiency.yaml, resolved into ``efficiency.RuntimeProfile``); weight and KV bytes come
from the one format table (formats.py). Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from operator import attrgetter, sub
from typing import NamedTuple, TypeVar

import numpy as np
from numpy.typing import NDArray

from app.domain import activations, compat, formats, peaks, topology
from app.domain.efficiency import (
    EAGER,
    FP16_ACCUMULATE_GEMM_SHARE,
    HALF_RATE_GEMM_SHARE,
    RuntimeProfile,
    basis_tflops,
    half_rate_fp16,
    sm_clock_share,
    tensor_share,
)
from app.domain.gpu import GpuSpec
from app.domain.kernels import CLASS_INDEX, class_rates, op_time
from app.domain.operators import ATTN_FLASH
from app.domain.operators import attention as attention_ops
from app.domain.workload import ModelSpec, kv_copies, replicated_params
from app.vocab import AMP_PRECISIONS, SDPA_RUNTIMES, runtime_name

# Kernels one decoder layer launches per forward pass: RMSNorm ×2, QKV GEMM, rotary, KV-cache
# write, attention, output GEMM, gate/up GEMM, activation, down GEMM (fused residual adds).
KERNELS_PER_LAYER = 10
# An MoE layer adds the routed experts' kernels: router GEMM, top-k softmax, token permute
# (vLLM moe_align_block_size), the grouped up and down GEMMs, the activation and the weighted
# combine (vLLM fused_moe: topk_softmax, moe_align_block_size, fused_moe_kernel ×2,
# silu_and_mul, moe_sum; TensorRT-LLM's min-latency DeepSeek-R1 path lists RouterGEMM, TopK,
# the grouped GEMMs and finalize alike — tech blog "Pushing Latency Boundaries").
MOE_KERNELS_PER_LAYER = 7
# Bytes of 16-bit activations an MoE layer moves per token beyond its GEMMs' operands: each
# token's k expert copies write and re-read the gate/up output (2I), the activation's output
# (I) and the down projection's output (h) — vLLM fused_moe's fused_moe_kernel → silu_and_mul →
# fused_moe_kernel → moe_sum chain: k × (2·2I + 2·I + 2·h) values. Memory-bound kernels
# between the grouped GEMMs, so their time adds to the GEMMs'.
MOE_ACT_BYTES = 2.0
# Under tensor parallelism only the I-wide buffers split: each GPU holds every expert's slice of
# I ÷ tp columns (w1 is E × 2I/tp × h, w2 E × h × I/tp), so its gate/up and activation outputs
# are I ÷ tp wide, but its down projection still writes a full h-wide partial row for every
# routed copy (vLLM fused_experts_impl: ``K = w2.shape[1]``, the hidden size;
# ``intermediate_cache3`` is (M, top_k, K) on every rank) and moe_sum reads all of it back
# before the all-reduce (SGLang's Triton fused MoE is adapted from it: the same (M, top_k, N)
# output cache). Per GPU k × (6·I/tp + 2·h) values a token: over the tp GPUs of a replica,
# k × (6·I + 2·h·tp) (``moe_activation_bytes``).
# https://github.com/vllm-project/vllm/blob/000d1458098ebf47491dad470d164d443ab18a9c/vllm/model_executor/layers/fused_moe/fused_moe.py
# https://github.com/sgl-project/sglang/blob/006fc20223af95669cb7284d2a210d412443a2b4/python/sglang/srt/layers/moe/fused_moe_triton/fused_moe.py
# Of a layer's kernels, the GEMMs, each of which takes at least the runtime's ``gemm_min_us``
# however few bytes it reads: QKV, output, the MLP's gate/up and down (a shared expert's in an
# MoE layer). An MoE layer's routed block adds ``moe_block_us`` (its small kernels) to the step.
GEMMS_PER_LAYER = 4
# An MoE layer without a shared expert has no dense MLP: its gate/up, activation and down
# kernels (two of them GEMMs) are not run (Qwen3-MoE, Mixtral, gpt-oss).
DENSE_MLP_KERNELS, DENSE_MLP_GEMMS = 3, 2
# Multi-head latent attention decodes with absorbed weights (DeepSeek-V2/V3: SGLang
# deepseek_v2.py forward_absorb, vLLM MLA backends): besides one fused q_a/kv_a projection and
# the output projection it runs the query up-projection and two batched GEMMs (q_nope × W_UK,
# the latent output × W_UV) — 3 more GEMMs — and RMSNorms on the two latents: 5 more kernels.
MLA_KERNELS, MLA_GEMMS = 5, 3
# Of MLA's three, the two absorbed batched GEMMs multiply 16-bit copies of kv_b_proj's halves
# (W_UK, W_UV), not FP8 linears: no activation quantisation before them (``quant_linears``).
MLA_BMM_GEMMS = 2
# An MLA decode kernel runs a sequence's query heads (× its query tokens) as the rows of one
# tile of 64 against the shared latent: FlashMLA's decode kernel "targets ... settings where
# the number of q heads × the number of q tokens per request ≥ 64" (README, 2025-04-22 update)
# and its packed sparse path takes H in {64, 128}. A GPU holding fewer heads (DeepSeek-V3's
# 128 split 4 or 8 ways: 32 or 16) pads the tile to 64 rows, so its QKᵀ and AV math is that
# of 64 heads while its bytes (the latent) are unchanged (``mla_head_padding``).
# https://github.com/deepseek-ai/FlashMLA/blob/066b5ba6f63d9d0840eac008fe58a1f70acfac78/README.md
MLA_HEAD_TILE = 64
# A latent-attention prompt runs the "compute friendly approach": the latent up-projected to
# every head's K (qk_nope + qk_rope wide) and V (v_head_dim), then multi-head attention over
# them (vLLM's MLA common module, its docstring and _flash_attn_varlen_diff_headdims;
# ``prompt_attention_width``).
MLA_PREFILL_SOURCE = (
    "https://github.com/vllm-project/vllm/blob/main/vllm/v1/attention/backends/mla/common.py"
)
# The query and KV latents' down-projection (q_a_proj and kv_a_proj_with_mqa, fused) is not
# split over tensor-parallel ranks: vLLM's MergedColumnParallelLinear(..., disable_tp=True),
# SGLang's ReplicatedLinear (each models/deepseek_v2.py; ``replicated_params``).
MLA_REPLICATED_SOURCE = (
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/deepseek_v2.py",
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/models/deepseek_v2.py",
)
# Bytes per value of a datapath's GEMM operands: a K tile holds a fixed number of bytes
# (TensorRT-LLM's CtaShape…x128B), so its fixed cost per output tile is counted in bytes of K
OPERAND_BYTES = {"fp4": 0.5, "fp8": 1.0, "int8": 1.0, "tf32": 4.0, "fp32": 4.0}
_SQRT2 = math.sqrt(2.0)
# PyTorch's CUDA torch.cat reads 16-bit inputs with vector loads only since pytorch PR #150233
# ("8 bytes aligned vector loads for bf16 and fp16 dtypes in torch.cat", 2025-03-28; fp32 and
# fp64 had them from PR #102815, June 2023): taken as from release 2.8, the first cut after it.
# Before, a 16-bit cat moves elements at the 32-bit cat's rate, half its bytes per second: the
# PR's own "before" table times a bf16 cat of 10,000 × (30108 + 624 + 772) at 1.304 ms against
# 1.327 ms for the same cat in fp32, twice the bytes (20,000 rows: 2.668 vs 2.745 ms), i.e.
# 0.51 of the fp32 cat's bytes per second. The fp32 (vectorised) cat is taken at the streaming
# bandwidth the engine prices everything at (an assumption: the PR states no bandwidth).
# https://github.com/pytorch/pytorch/pull/150233, https://github.com/pytorch/pytorch/pull/102815
CAT_16BIT_VECTORISED = (2, 8)
UNVECTORISED_CAT_RATE = 0.5
# transformers' attention implementations and when they materialise grouped-query K/V
# (repeat_kv: expand + reshape, a copy of the cache for every query head of a group) before
# attending: eager attention always (models/llama/modeling_llama.py LlamaAttention.forward,
# v4.31 onwards; integrations/sdpa_attention.py's eager twin); SDPA, the default from v4.36,
# until transformers PR #39412 (merged 2025-07, v4.54) passes enable_gqa=True instead where
# torch >= 2.5 and no mask is given (use_gqa_in_sdpa), as an unpadded decode step has none
# (masking_utils._ignore_causal_mask_sdpa: query length 1, no padding); flash-attention-2 reads
# the grouped heads itself. Before v4.36 the default implementation was eager.
# https://github.com/huggingface/transformers/blob/v4.35.2/src/transformers/models/llama/modeling_llama.py
# https://github.com/huggingface/transformers/pull/39412 (integrations/sdpa_attention.py)
# Its host cost: repeat_kv runs twice per layer (K, V), each a Python call, an unsqueeze
# (x[:, :, None]), an expand and a reshape that cannot view and copies (clone): ~4
# op-equivalents each at the transformers decode row's per-op cost, on top of that row's 81
# (counted on Llama 2, whose repeat_kv returns at n_rep == 1 before any op).
REPEAT_KV_HOST_OPS = 8
# A quantised linear's Python wrapper dispatches more than nn.Linear's one F.linear: AutoGPTQ's
# exllama (and exllamav2) QuantLinear.forward views the input flat, allocates the output
# (torch.empty), calls the kernel and views the output back (qlinear_exllama.py ext_q4_matmul);
# AutoAWQ's WQLinear_GEMM.forward enters and leaves torch.no_grad, reshapes the input, calls
# the kernel and reshapes back (awq/modules/linear/gemm.py): ~3 more op-equivalents each, on
# the seven linears of a dense decoder layer (q, k, v, o, gate, up, down), at the eager row's
# per-op cost. Only where the runtime dispatches from the host (transformers, a bare loop).
# https://github.com/AutoGPTQ/AutoGPTQ/blob/main/auto_gptq/nn_modules/qlinear/qlinear_exllama.py
# https://github.com/casper-hansen/AutoAWQ/blob/main/awq/modules/linear/gemm.py
QUANT_LINEAR_HOST_OPS = {"gptq": 3.0, "awq": 3.0}
LINEARS_PER_LAYER = 7
SDPA_DEFAULT_FROM = (4, 36)
SDPA_GQA_FROM = (4, 54)
SDPA_GQA_TORCH_FROM = (2, 5)
T = TypeVar("T", float, NDArray[np.float64])
# A step samples every running sequence's next token on the GPU, over the whole vocabulary, on
# every tensor-parallel GPU: vLLM's LogitsProcessor all-gathers the
# vocabulary-parallel LM head's output (``_gather_logits``; all_gather on CUDA and ROCm), so each
# rank holds the full [sequences, vocabulary] logits and runs the V1 Sampler over them:
# ``logits.to(torch.float32)``, then, where every request is greedy (temperature 0, ``vllm bench
# serve``'s default), ``argmax`` before any temperature (vllm/v1/sample/sampler.py). Bytes per
# logit on one GPU: the gathered bf16 logits written (2), read and written as fp32 (2 + 4), the
# argmax's read (4), memory-bound passes at the card's streaming bandwidth. Random sampling adds
# the temperature division, a softmax, the exponential draw and the division by it (~44 B),
# top-k/top-p a sort over the vocabulary: a request's sampling is not asked, so the greedy floor
# is priced (docs/methodology.md §6.7j).
# https://github.com/vllm-project/vllm/blob/3e342658b2e9c85a30a54d19e64e5ad77b8a26a6/vllm/v1/sample/sampler.py
SAMPLER_BYTES_PER_LOGIT = 12.0
# The runtime that samples on the host: llama.cpp copies the last token's fp32 logits to host
# memory and runs its sampler chain on the CPU (llama_sampler_sample over llama_get_logits_ith),
# so no GPU pass over the vocabulary is priced for it (a vocabulary of fp32 logits over the link
# is ~0.5 MB a token for Llama 3: within its per-token host figures)
HOST_SAMPLING_RUNTIME = "llama.cpp"
# An inference prompt pass multiplies the LM head only by the rows it samples, each prompt's
# last token: vLLM's and SGLang's logits processors gather those rows before the head,
# TensorRT-LLM keeps the last token unless gather_context_logits is built in, llama.cpp's
# llama_decode keeps "the last output only" of a batch without a logits array (llama-bench's
# test_prompt passes llama_batch_get_one's, which has none), and mlx-lm evaluates the prompt's
# cache and then steps the last token alone. The exception, by the runtime's first release that
# keeps only the last position: transformers' generate() computed the head over every prompt
# position until ``num_logits_to_keep`` (PR #31292, merged 2024-08-23, first in v4.45; issue
# #34796 dates generate()'s change to v4.45.0). Training computes every position's logits.
# https://github.com/huggingface/transformers/pull/31292
# https://github.com/ggml-org/llama.cpp/blob/0104b151c56d54143e2e3554aabe9e2b2b8dbdba/tools/llama-bench/llama-bench.cpp
ALL_PROMPT_LOGITS_BEFORE = {"transformers": (4, 45)}


def _release(version: str) -> tuple[int, int] | None:
    """(major, minor) of a version string ("2.1.0+cu118", "4.35.0.dev0"); None if none."""
    m = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def all_prompt_logits(runtime: str, release: str = "") -> bool:
    """Whether ``runtime`` at ``release`` computes the LM head over every prompt position of an
    inference prompt pass (``ALL_PROMPT_LOGITS_BEFORE``); otherwise each prompt's last token
    only. An unstated release is a current one."""
    return _all_prompt_logits(runtime, _release(release))


def _all_prompt_logits(runtime: str, stated: tuple[int, int] | None) -> bool:
    """``all_prompt_logits`` at the release ``stated`` (``_release`` of the job's: parsed once
    per job, not once per card)."""
    before = ALL_PROMPT_LOGITS_BEFORE.get(runtime)
    return before is not None and stated is not None and stated < before


def logit_rows(decode: float, prefill: float, prompt: float, every_prompt_token: bool) -> float:
    """Rows the LM head multiplies in a step: every decode, and each prompt's last token (the
    prefill ÷ prompt prompts a step completes on average, as the sampler counts them), or every
    prompt token where the runtime computes them all (``all_prompt_logits``)."""
    if every_prompt_token:
        return decode + prefill
    return decode + (prefill / prompt if prefill and prompt else 0.0)


def cat_rate(torch_version: str, kv_bytes: float) -> float:
    """The bytes per second of the job's torch.cat of its KV cache relative to a vectorised
    cat: ``UNVECTORISED_CAT_RATE`` for a 16-bit cache under a PyTorch release before 2.8
    (``CAT_16BIT_VECTORISED``), else 1 (a current or unstated release; 32-bit caches)."""
    release = _release(torch_version)
    if release is None or kv_bytes != 2.0 or release >= CAT_16BIT_VECTORISED:
        return 1.0
    return UNVECTORISED_CAT_RATE


def transformers_repeats_kv(
    transformers_version: str, attn_implementation: str = "", torch_version: str = ""
) -> bool:
    """Whether transformers' decode attention materialises grouped-query K/V (repeat_kv) on
    this stack: eager attention always; SDPA (the default from v4.36) before v4.54 or under a
    PyTorch before 2.5; flash-attention-2 never. An unstated transformers release is a
    current one (SDPA with enable_gqa: no copy)."""
    release = _release(transformers_version)
    if release is None:
        return attn_implementation == "eager"
    impl = attn_implementation or ("sdpa" if release >= SDPA_DEFAULT_FROM else "eager")
    if impl == "eager":
        return True
    if impl != "sdpa":
        return False
    torch_release = _release(torch_version)
    old_torch = torch_release is not None and torch_release < SDPA_GQA_TORCH_FROM
    return release < SDPA_GQA_FROM or old_torch


@dataclass(frozen=True, slots=True)
class StepTime:
    seconds: float
    bound: str  # memory bandwidth | compute | interconnect | host overhead
    gpu_s: float  # the GPU's part: math or bytes, kernel gaps, links
    compute_s: float  # linear + attention math, whether or not it bounds
    memory_s: float  # weights + KV cache read, likewise
    launch_s: float
    host_s: float
    comm_s: float


# Built for every LLM configuration a request estimates: a plain slotted dataclass, as a
# frozen one costs several times as much to build (object.__setattr__ per field). Nothing
# changes a replica once built.
def _kv_values(model: ModelSpec, memo: dict[float, float], context: float) -> float:
    """KV values per sequence at a mean context, kept in ``memo``: a load is solved at one
    context, over and over."""
    hit = memo.get(context)
    if hit is None:
        values = model.kv_values(context)
        if values is None:
            raise ValueError("the model needs layers and hidden_size (or a config.json)")
        hit = memo[context] = values
    return hit


@dataclass(slots=True)
class Replica:
    """One replica's per-step constants (built by ``replica``)."""

    model: ModelSpec
    tp: int  # GPUs that share every token's work (tensor parallel)
    stages: int  # GPUs a token passes through in turn (layer split, pipeline), else 1
    # weights every step reads, whole replica: all but the routed experts and an untied input
    # embedding table, of which a step gathers its tokens' rows alone (``row_bytes``)
    dense_bytes: float
    expert_bytes: float  # all routed experts' weights
    experts: int
    topk: int
    # bytes a decode step moves per cached K/V value: the format's bytes × the runtime's
    # kv_traffic (a cache regrown by torch.cat each step is read and written besides)
    kv_b: float
    # 2 × the active params a token multiplies by, less the LM head (``head_flops``) and an
    # input embedding (a lookup)
    flops_per_token: float
    moe_act_bytes: float  # per token: the routed copies' intermediate activations (all layers)
    bw: float  # bytes/s of one tensor-parallel group
    flops: float  # FLOP/s of the linear layers, likewise
    attn_flops: float  # FLOP/s of attention (16-bit), likewise
    compute_precision: str
    layers: int
    hidden: int
    # Q·K and A·V width per layer: heads × head size (an explicit head_dim can differ from
    # hidden ÷ heads); a decode step under latent attention attends over the latent per head
    attn_width: float
    attn_width_decode: float
    launch_s: float  # GPU-side kernel gaps of one pass over every layer
    gemm_floor_s: float  # the linear layers' kernels at their floor duration, one pass
    attn_floor_s: float  # the attention kernels at their floor duration, one pass
    host_s: float  # eager host dispatch of one pass (0 under CUDA graphs)
    scheduler_s: float  # a server's fixed cost per step
    host_per_seq_s: float  # a server's host work per running sequence, overlapped with the GPU
    microbatch_tokens: int  # a layer split's overlapping micro-batch (llama.cpp -ub)
    tp_link: topology.Link
    hop_link: topology.Link
    # the routed experts' grouped GEMMs (``routed_gemm``): FLOPs per routed row (one token at
    # one expert, all layers), the time their FLOPs take relative to the dense rate (shallow
    # K), and the kernel's token tile range; tile_max 0: not modelled
    routed_flops_per_row: float = 0.0
    routed_slowdown: float = 1.0
    # the time of the other (dense) GEMMs' FLOPs relative to the prior's rate: the same K-depth
    # rule at their own K (``dense_slowdown``); 1 where not modelled or every K is deep enough
    dense_slowdown: float = 1.0
    tile_min: int = 0
    tile_max: int = 0
    # 1: a step's prompt and decode attention are two kernels in turn, their times add
    # (``RuntimeProfile.split_attention``); 0: one kernel over the mixed batch
    split_attention: float = 0.0
    # a quantised model dequantised to FP16 before each GEMM (a cuBLAS prompt path): seconds of
    # that pass over the weights, paid by every pass of more than ``dequant_min_tokens`` tokens
    # (``RuntimeProfile.dequantize_min_tokens``); 0: no such pass
    dequant_s: float = 0.0
    dequant_min_tokens: float = 0.0
    # in such a pass the GEMM then reads the FP16 copy, not the stored weights: its weight
    # bytes × this (2 bytes ÷ the stored bytes per weight, ``dequant_read_scale``); 1: none
    dequant_read_scale: float = 1.0
    # a server that replays CUDA graphs only for decode-only steps: the eager host dispatch of
    # one pass, paid by a step that carries prompt tokens (``mixed_share``); 0: none
    mixed_host_s: float = 0.0
    # a runtime that replays CUDA graphs only for passes of at most ``graph_max_tokens`` tokens
    # (``RuntimeProfile.graph_max_tokens``; llama.cpp's CUDA backend: 1): the longer kernel gaps
    # of one eager pass over every layer beyond ``launch_s``, paid by a pass of more tokens;
    # 0: one launch policy at every step size
    eager_launch_s: float = 0.0
    graph_max_tokens: float = 0.0
    # a context pass's fixed time beyond its math and bytes (``RuntimeProfile.context_layer_us``
    # × layers), paid by a step that carries prompt tokens and no decodes; 0: none
    context_s: float = 0.0
    # how much longer a decode step's attention math takes than at ``attn_flops``: the job's
    # decode attention on the CUDA cores (``CardTerms.mmha_slowdown``, a ``ReplicaJob.mmha``
    # job); 1: at the 16-bit tensor rate, as every other kernel's
    decode_attn_slowdown: float = 1.0
    # the dense GEMMs' fp4 rate by the step's M (``fp4_m_gain``; CardTerms.fp4_rel, fp4_m0):
    # rel 0 where one rate holds at every M
    fp4_rel: float = 0.0
    fp4_m0: float = 1.0
    # how many times over the replica's GPUs read the KV cache a decode step attends over, as
    # a share of one copy: 1 where tensor parallelism splits it by KV head; the tensor-parallel
    # degree under latent attention, whose one latent per token every GPU holds and reads whole
    # (``kv_copies``)
    kv_copies: float = 1.0
    # bytes per hidden value a layer split hands to the next stage
    # (``RuntimeProfile.handoff_bytes``)
    handoff_bytes: float = 2.0
    # the scheduler's ring of graph-input copies a layer split's micro-batches cycle through
    # (``RuntimeProfile.microbatch_copies``; ``pipeline_passes``); 0: no bound
    microbatch_copies: int = 0
    # the share of a pass's layers the busiest stage of a pipelined layer split runs, which
    # paces its micro-batches (``busiest_stage_share``; ``pipeline_passes``); 0: 1 ÷ stages
    stage_share: float = 0.0
    # the sampler: seconds per sequence sampled in a step, the vocabulary's logits at
    # ``SAMPLER_BYTES_PER_LOGIT`` on one GPU (every tensor-parallel GPU samples the whole
    # vocabulary; ``sampler_seconds``); 0 where the vocabulary is unknown
    sampler_s: float = 0.0
    # a synchronous server's host work per running sequence between two GPU steps (schedule,
    # input preparation, output update): the GPU waits through it, so it adds to the step
    serial_per_seq_s: float = 0.0
    # the LM head's FLOPs per row it multiplies (2 × vocabulary × hidden; ``logit_rows``), at the
    # linear layers' rate; 0 where the vocabulary is unknown
    head_flops: float = 0.0
    # 1: the runtime's prompt pass computes every prompt position's logits; 0: each prompt's
    # last token only (``all_prompt_logits``)
    prompt_logits: float = 0.0
    # bytes per token of the input embedding row its lookup gathers
    row_bytes: float = 0.0
    # the prompt's attention as the operator path prices a fused attention forward
    # (``FusedAttention``, ``prompt_attention_seconds``): one GPU's kernel and the model's
    # query heads, which tensor parallelism splits; None: at ``attn_flops``, as the GEMMs
    fused: FusedAttention | None = None
    attn_heads: float = 0.0
    # KV values per sequence by mean context: a load is solved at one context, over and over
    kv_memo: dict[float, float] = field(default_factory=dict, compare=False, repr=False)

    def kv_at(self, context: float) -> float:
        return _kv_values(self.model, self.kv_memo, context)

    def prompt_attention_s(self, prefill: float, prompt: float) -> float:
        """Seconds of the attention of ``prefill`` prompt tokens from prompts of length
        ``prompt`` (``prompt_attention_seconds``)."""
        return prompt_attention_seconds(
            self.layers, self.attn_width, self.attn_flops, self.fused, self.attn_heads,
            self.tp, prefill, prompt,
        )  # fmt: skip

    def rows(self, decode: float, prefill: float, prompt: float) -> float:
        """``logit_rows`` of a step under this replica's runtime."""
        return logit_rows(decode, prefill, prompt, bool(self.prompt_logits))

    def weights_read(self, tokens: float) -> float:
        if not self.expert_bytes:
            return self.dense_bytes
        k, e = self.topk, self.experts
        if e == 0:
            # an MoE whose expert count is unknown: the active share per token, up to all
            share = self.model.params_per_token / self.model.params
            return self.dense_bytes + self.expert_bytes * min(1.0, share * max(tokens, 1.0))
        touched = 1.0 - (1.0 - k / e) ** max(tokens, 1.0)
        return self.dense_bytes + self.expert_bytes * touched

    def linear(self, tokens: float, rows: float | None = None) -> tuple[float, float, float]:
        """(weights read, linear math, the linear layers' time) of a step of ``tokens``
        tokens whose LM head multiplies ``rows`` of them (all of them, as in a decode step,
        where not given), each in seconds: max(bytes, math) over the whole model, or, where
        the grouped GEMMs are modelled, the dense layers' max plus the routed experts' own."""
        head = (tokens if rows is None else rows) * self.head_flops
        t_w = self.weights_read(tokens) / self.bw
        # a pass that dequantises first multiplies the FP16 copy: 2 bytes a weight read
        fp16 = self.dequant_s > 0.0 and tokens > self.dequant_min_tokens
        if fp16:
            t_w = t_w * self.dequant_read_scale
        gain = fp4_m_gain(tokens, self.fp4_rel, self.fp4_m0)
        t_lin = (tokens * self.flops_per_token + head) * self.dense_slowdown / self.flops / gain
        if not (self.tile_max and self.expert_bytes and self.experts):
            return t_w, t_lin, max(t_w, t_lin)
        tiles, tile = expert_tiles(tokens, self.topk, self.experts, self.tile_min, self.tile_max)
        routed_rows = self.experts * tile * tiles  # padded rows, per layer
        routed_fpt = self.topk * self.routed_flops_per_row
        dense_w = self.dense_bytes / self.bw
        if fp16:
            dense_w = dense_w * self.dequant_read_scale
        # the dense GEMMs run at M = the step's tokens; an expert's at its own few rows, where
        # the small-M share holds (a grouped kernel's M is the expert's rows, not the step's)
        dense_l = (
            (tokens * (self.flops_per_token - routed_fpt) + head)
            * self.dense_slowdown
            / self.flops
            / gain
        )
        routed_w = t_w - dense_w
        routed_l = routed_rows * self.routed_flops_per_row * self.routed_slowdown / self.flops
        return t_w, dense_l + routed_l, max(dense_w, dense_l) + max(routed_w, routed_l)

    def linear_step(
        self, decode: float, prefill: float, prompt: float, with_prompt: bool = False
    ) -> tuple[float, float, float]:
        """``linear`` of a step of ``decode`` sequences and ``prefill`` prompt tokens. A
        server's average step (not ``with_prompt``) of an MoE is the mix of the steps it
        stands for: prompts arrive whole (Poisson, ``mixed_share``), so a share q of steps
        carries prefill ÷ q prompt tokens and the rest none, and the experts a step touches
        (1 − (1 − k/E)^T, concave in T) are priced per kind of step, not at the mean
        tokens — a few decodes plus a sliver of prompt would otherwise touch as many experts
        as twice the decodes, every step. A dense model's weights do not depend on the
        tokens: unchanged (as is a step known to carry a prompt)."""
        tokens = decode + prefill
        q = mixed_share(prefill, prompt) if self.expert_bytes else 0.0
        if with_prompt or not decode or not 0.0 < q < 1.0:
            return self.linear(tokens, self.rows(decode, prefill, prompt))
        plain = self.linear(decode)
        mixed = self.linear(decode + prefill / q, self.rows(decode, prefill / q, prompt))
        w, lin, mm = ((1.0 - q) * a + q * b for a, b in zip(plain, mixed, strict=True))
        return w, lin, mm

    def gemm_time(
        self, t_mm: float, decode: float, prefill: float, prompt: float, with_prompt: bool = False
    ) -> float:
        """The linear layers' time with their kernels' floors, from ``linear_step``'s ``t_mm``:
        max(t_mm, the GEMM floors) where one max covers them; where the routed experts are
        their own grouped kernels, the dense GEMMs' floors stand beside the routed experts'
        time, not under it — kernels of one stream run one after another, so the small dense
        GEMMs (attention projections, a shared expert) of a 64-token DeepSeek step take their
        ~7 µs each however many experts' bytes the grouped GEMMs stream (InferenceX #863's
        B200 profile: 424 of them, 3.0 ms, besides 7.6 ms of routed GEMMs)."""
        floor = self.gemm_floor_s
        if not (self.tile_max and self.expert_bytes and self.experts):
            return max(t_mm, floor)
        dense = self._dense_mm(decode + prefill, self.rows(decode, prefill, prompt))
        q = mixed_share(prefill, prompt)
        if not with_prompt and decode and 0.0 < q < 1.0:
            mixed = self._dense_mm(decode + prefill / q, self.rows(decode, prefill / q, prompt))
            dense = (1.0 - q) * self._dense_mm(decode) + q * mixed
        return max(t_mm, floor, t_mm - dense + floor)

    def _dense_mm(self, tokens: float, rows: float | None = None) -> float:
        """max(bytes, FLOPs) of the GEMMs every token runs (all but the routed experts), the
        LM head over ``rows`` of them (all, where not given: ``linear``)."""
        routed_fpt = self.topk * self.routed_flops_per_row
        gain = fp4_m_gain(tokens, self.fp4_rel, self.fp4_m0)
        head = (tokens if rows is None else rows) * self.head_flops
        dense_l = (
            (tokens * (self.flops_per_token - routed_fpt) + head)
            * self.dense_slowdown
            / self.flops
            / gain
        )
        return max(self.dense_bytes / self.bw, dense_l)

    def comm(self, tokens: float, rows: float = 0.0) -> float:
        """GPU-to-GPU seconds of a step of ``tokens`` tokens whose LM head multiplies ``rows``
        of them (``step_comm``)."""
        return step_comm(
            tokens, self.hidden, self.layers, self.tp, self.stages, self.tp_link, self.hop_link,
            self.handoff_bytes, rows, float(self.model.vocab_size or 0),
        )  # fmt: skip

    def parts(
        self,
        decode: float,
        context: float,
        prefill: float,
        prompt: float,
        with_prompt: bool = False,
    ) -> StepTime:
        """One step: ``decode`` sequences at mean ``context``, ``prefill`` prompt tokens from
        prompts of length ``prompt``. ``with_prompt``: the step is known to carry a prompt (a
        chunk, a prefill); otherwise it is a server's average step, which carries one with
        probability ``mixed_share``."""
        tokens = decode + prefill
        # a runtime that computes in micro-batches (llama.cpp's -ub) runs the step as u pieces,
        # each reading the weights; on a layer split of S GPUs they overlap, (u + S − 1) stage
        # times of one piece while the scheduler's input copies allow (``pipeline_passes``);
        # u = 1 and S = 1 is one pass over the step's tokens
        mb = self.microbatch_tokens
        u = math.ceil(tokens / mb) if mb and tokens > mb else 1
        d, f = decode / u, prefill / u
        t_w, t_lin, t_mm = self.linear_step(d, f, prompt, with_prompt)
        t_moe = (d + f) * (self.moe_act_bytes + self.row_bytes) / self.bw
        t_kv = d * self.kv_at(context) * self.kv_b * self.kv_copies / self.bw if d else 0.0
        # QKᵀ and AV: 4·h FLOPs per layer per (query, key) pair; a decode's at its kernel's
        # own rate (``decode_attn_slowdown``); a prompt's as the operator path prices its
        # fused kernel (``prompt_attention_seconds``)
        att_p = self.prompt_attention_s(f, prompt)
        t_att = (
            4.0 * self.layers * self.attn_width_decode * d * context * self.decode_attn_slowdown
        ) / self.attn_flops + att_p
        if self.split_attention and d and f:
            # the prompts' attention kernel, then the decodes' (bound by the KV cache it reads
            # or by its own FLOPs): one after the other
            att_d = 4.0 * self.layers * (self.attn_width_decode * d * context) / self.attn_flops
            t_a = max(t_kv, att_d) + att_p
            kv_bound = t_kv >= att_d
            att_comp = att_p + (0.0 if kv_bound else att_d)
        else:
            t_a = max(t_kv, t_att)
            kv_bound = t_kv >= t_att
            att_comp = 0.0 if kv_bound else t_att
        # every kernel takes at least its floor duration: a step whose per-GPU bytes are tiny
        # (one token of a large MoE over 8 GPUs) is bound by its kernels' count, not its bytes
        t_gemm = self.gemm_time(t_mm, d, f, prompt, with_prompt)
        t_attn = max(t_a, self.attn_floor_s)
        floors = t_gemm - t_mm + t_attn - t_a
        t_deq = self.dequant_s if d + f > self.dequant_min_tokens else 0.0
        t_ctx = self.context_s if f and not d else 0.0
        # a pass longer than the runtime's CUDA graphs cover launches its kernels eagerly
        eager = self.graph_max_tokens and d + f > self.graph_max_tokens
        launch = self.launch_s + (self.eager_launch_s if eager else 0.0)
        work = t_gemm + t_deq + t_moe + t_attn + launch + t_ctx
        passes = pipeline_passes(u, self.stages, self.microbatch_copies, self.stage_share)
        work *= passes
        comm = self.comm(tokens, self.rows(decode, prefill, prompt))
        # the sampler, once per step over the sequences it samples: every decode and, on
        # average, each prompt the step's chunk completes
        # (GPU time beside the step's weights and KV reads, as the links' is: not in memory_s)
        t_smp = (decode + (prefill / prompt if prefill and prompt else 0.0)) * self.sampler_s
        gpu = work + comm + t_smp
        # a server's per-sequence host work runs beside the GPU's step (the runtime overlaps
        # them) and bounds it only once it is the longer; a prefill's prompts count once each
        seqs = decode + (math.ceil(prefill / prompt) if prefill and prompt else 0.0)
        mixed = 1.0 if with_prompt and prefill else mixed_share(prefill, prompt)
        host = max(self.host_s * u, seqs * self.host_per_seq_s + mixed * self.mixed_host_s)
        mem = (t_w if t_w >= t_lin else 0.0) + t_deq + t_moe + (t_kv if kv_bound else 0.0)
        mem += t_smp / passes
        comp = (t_lin if t_lin > t_w else 0.0) + att_comp
        bound = "memory bandwidth" if mem >= comp else "compute"
        # the kernels' gaps and floors, when they outweigh the math and the bytes: a one-token
        # step of a small or widely split model waits on its kernels' count
        kernels = launch + floors + t_ctx
        if kernels > max(mem, comp):
            bound = "kernel launches"
        if comm > max(mem, comp, kernels) * passes:
            bound = "interconnect"
        if host > gpu:
            bound = "host overhead"
        return StepTime(
            max(gpu, host) + self.scheduler_s + seqs * self.serial_per_seq_s,
            bound,
            gpu,
            (t_lin + t_att) * passes,
            (t_w + t_deq + t_moe + t_kv) * passes,
            (launch + floors + t_ctx) * passes,
            host,
            comm,
        )

    def step(
        self,
        decode: float,
        context: float,
        prefill: float,
        prompt: float,
        with_prompt: bool = False,
    ) -> tuple[float, str]:
        """(seconds, what bounds it) of ``parts``."""
        p = self.parts(decode, context, prefill, prompt, with_prompt)
        return p.seconds, p.bound


def stage_link(gpu: GpuSpec, n: int, stages: int, profile: RuntimeProfile) -> topology.Link:
    """The hop a replica of ``n`` GPUs hands its hidden state over between ``stages`` (none on
    one stage): the GPUs' link, or host memory inside a server where the runtime copies
    without peer access (``RuntimeProfile.handoff_peer``: llama.cpp's layer split)."""
    if stages <= 1:
        return topology.link(gpu, 1)
    if not profile.handoff_peer and n <= topology.node_size(gpu):
        return topology.host_staged_link(gpu, n)
    return topology.link(gpu, n)


def pipeline_passes(u: float, stages: float, copies: float = 0, share: float = 0.0) -> float:
    """Whole-model passes of one micro-batch that ``u`` micro-batches take through a layer
    split of ``stages`` GPUs (each GPU a 1 ÷ stages share of a pass): (u + S − 1) ÷ S where
    they flow freely. A scheduler with a ring of ``copies`` graph-input copies (llama.cpp's
    ggml_backend_sched: GGML_SCHED_MAX_COPIES, 4 by default) bounds that: before it copies a
    micro-batch's user inputs (positions, KQ mask) to a stage, ggml_backend_sched_compute_splits
    blocks the host on the event of the micro-batch that used the same copy at that stage
    (ggml_backend_event_synchronize), so at most copies + 1 micro-batches are in flight. With
    stage time 1, waves of w = copies + 1 micro-batches then start max(S, w) apart: a last
    wave of r micro-batches after q full ones ends at q · max(S, w) + S + r − 1, which is
    u + S − 1 wherever S ≤ w (no bound reached: two to five GPUs at the default) and at
    8 GPUs keeps 5 of 8 stages busy on a long prompt. ``copies`` 0: no bound.

    ``share``: the busiest stage's share m of a pass where the stages are unequal
    (``busiest_stage_share``; 0: 1 ÷ stages). Micro-batches then follow one another at the
    busiest stage's pace: q · max(1, w · m) + 1 + (r − 1) · m passes, the form above with
    1 ÷ S read as m (a flow line's makespan: every stage once, then the slowest once per
    further micro-batch; the same event schedule as the scheduler's, for any stage times)."""
    if u <= 1 and stages <= 1:
        return 1.0
    w = copies + 1 if copies > 0 else max(u, 1.0)
    q = math.ceil(u / w) - 1
    r = u - q * w
    if share <= 0.0:
        return (q * max(stages, w) + stages + r - 1) / stages
    return q * max(1.0, w * share) + 1.0 + (r - 1) * share


def pipeline_passes_array(
    u: NDArray[np.float64],
    stages: NDArray[np.float64],
    copies: NDArray[np.float64],
    share: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """``pipeline_passes`` elementwise."""
    w = np.where(copies > 0.0, copies + 1.0, np.maximum(u, 1.0))
    q = np.ceil(u / w) - 1.0
    r = u - q * w
    even = (q * np.maximum(stages, w) + stages + r - 1.0) / stages
    if share is None or not share.any():
        return even
    return np.where(share > 0.0, q * np.maximum(1.0, w * share) + 1.0 + (r - 1.0) * share, even)


def busiest_stage_share(layers: int, stages: int, output_unit: bool) -> float:
    """The share of a pass's layers that the busiest of ``stages`` GPUs runs under a layer
    split of equal cards (0: one stage). llama.cpp places the split points over n_layer + 1
    units, the output layer counted as the last (load_tensors: act_gpu_layers = min(n_gpu_layers,
    n_layer + 1); layer i goes to the first GPU whose cumulative split, by free memory, exceeds
    i ÷ act_gpu_layers), so the extra unit pushes whole layers onto the first GPUs: 32 layers on
    4 GPUs run as 9, 8, 8, 7 (+ the output), on 8 GPUs as 5, 4, 4, 4, 4, 4, 4, 3. The output
    layer's own time is not counted: a prompt pass computes one token's logits
    (``ALL_PROMPT_LOGITS_BEFORE``). ``output_unit`` False: split points over the layers alone."""
    if stages <= 1 or layers <= 0:
        return 0.0
    units = layers + (1 if output_unit else 0)
    # layer i goes to GPU i·stages // units, so GPU k holds the layers from ⌈k·units/stages⌉
    # up to the next GPU's first (the last GPU: up to the layer count): counted per GPU, not
    # placed one layer at a time (Llama 3.1 405B's 126 layers had been a loop of 126)
    firsts = [min(layers, -(-k * units // stages)) for k in range(stages + 1)]
    return max(map(sub, firsts[1:], firsts[:-1])) / layers


# Beyond its layers a tensor-parallel step runs two more collectives (``step_comm``): the
# vocabulary-parallel input embedding's all-reduce (each GPU looks up its shard of the vocabulary,
# zeroes the other tokens' rows and sums: vLLM VocabParallelEmbedding.forward, "Reduce across all
# the model parallel GPUs"; SGLang's layer is adapted from it) and the gather of the LM head's
# logits, each GPU computing one vocabulary shard's, before sampling (vLLM
# LogitsProcessor._gather_logits: tensor_model_parallel_gather to rank 0 on CUDA, an all-gather
# where a platform needs its ranks in lockstep). Each pays the link's latency, like a layer's.
STEP_COLLECTIVES_SOURCE = (
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/vocab_parallel_embedding.py",
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/logits_processor.py",
)


def step_comm(
    tokens: float,
    hidden: int,
    layers: int,
    tp: int,
    stages: int,
    tp_link: topology.Link,
    hop_link: topology.Link,
    handoff_bytes: float = 2.0,
    rows: float = 0.0,
    vocab: float = 0.0,
) -> float:
    """GPU-to-GPU seconds of a step of ``tokens`` tokens on a replica spanning ``tp`` × ``stages``
    GPUs (``Replica.comm``): two all-reduces of the 16-bit activations per layer under tensor
    parallelism, and the step's two beyond its layers (``STEP_COLLECTIVES_SOURCE``): the
    vocabulary-parallel input embedding's all-reduce of the same activations, and the gather of
    the LM head's ``rows`` × ``vocab`` 16-bit logits, of which each GPU computed a 1 ÷ tp
    share; one hand-off per stage boundary on a layer split (``handoff_bytes`` per hidden
    value: 4 for llama.cpp's F32 residual stream)."""
    size = tokens * hidden * 2.0
    t = 0.0
    if tp > 1:
        # the layers' two all-reduces each and the input embedding's one
        n_ar = 2 * layers + 1
        # a fabric with a published all-reduce curve at this GPU count: its time by size
        measured = topology.measured_allreduce_s(tp_link, tp, size)
        if measured is not None:
            t += n_ar * measured
        else:
            moved = topology.ring_allreduce_bytes(tp, size) * n_ar
            t += topology.comm_seconds(tp_link, moved, collectives=n_ar)
        if rows and vocab:
            # the LM head's logits, gathered from the vocabulary shards
            t += topology.comm_seconds(tp_link, topology.allgather_bytes(tp, rows * vocab * 2.0))
    if stages > 1:
        t += (stages - 1) * topology.comm_seconds(hop_link, tokens * hidden * handoff_bytes)
    return t


def span(prof: RuntimeProfile, n: int) -> tuple[int, int]:
    """(tensor-parallel degree, stages a token passes through in turn) of one replica on ``n``
    GPUs, as the runtime's ``span`` has it (data/efficiency.yaml). Tensor parallel inside one
    server, pipeline stages beyond it; a layer split (llama.cpp, Accelerate's device_map) is n
    stages of whole layers: a decode step is the sum of each GPU's share, one card's speed."""
    if n <= 1:
        return 1, 1
    if prof.span != "tensor":
        return 1, n
    tp = min(n, topology.NODE_GPUS)
    return tp, max(1, n // tp)


def head_split_error(m: ModelSpec, tp: int) -> str | None:
    """Why ``tp`` tensor-parallel GPUs cannot split the model's attention (None: they can).
    The serving runtimes give every rank the same number of query heads, and the KV heads either
    split evenly or each sits on tp ÷ kv ranks whole: vLLM's ModelConfig refuses a tensor-parallel
    size that does not divide the attention heads, and its QKVParallelLinear divides the KV heads
    by it where tp < kv and replicates them where tp ≥ kv, which needs tp % kv == 0. Latent
    attention (MLA) keeps one latent cache every rank holds whole: only its query heads split."""
    if tp <= 1 or not m.num_heads:
        return None
    if m.num_heads % tp:
        return f"its {m.num_heads} attention heads do not split evenly over {tp} GPUs"
    kv = m.num_kv_heads or m.num_heads
    if m.attention != "mla" and kv % tp and tp % kv:
        return f"its {kv} KV heads neither split evenly over {tp} GPUs nor repeat evenly on them"
    return None


def replica_split_error(m: ModelSpec, prof: RuntimeProfile, n: int) -> str | None:
    """``head_split_error`` for one replica on ``n`` GPUs at the tensor-parallel degree the
    runtime's ``span`` runs it at (a layer split has no such rule)."""
    return head_split_error(m, span(prof, n)[0])


def expert_split(m: ModelSpec) -> tuple[float, float]:
    """(parameters every token uses, parameters of all routed experts)."""
    e, k = m.experts or 0, m.active_experts or 0
    if not m.active_params or e <= 1 or not 0 < k < e or m.active_params >= m.params:
        return m.params, 0.0
    experts = (m.params - m.active_params) * e / (e - k)
    return m.params - experts, experts


def mixed_share(prefill: float, prompt: float) -> float:
    """The share of a server's steps that carry prompt tokens when the average step carries
    ``prefill`` tokens of prompts ``prompt`` long: prompts arrive as requests finish, about
    independently, so a step's new prompts are Poisson with mean prefill ÷ prompt and it
    carries one with probability 1 − e^(−mean) (1 once several arrive per step)."""
    if not (prefill > 0.0 and prompt > 0.0):
        return 0.0
    return -math.expm1(-prefill / prompt)


def native_fp4(gpu: GpuSpec) -> bool:
    """FP4 matrix math: NVIDIA Blackwell and AMD CDNA 4 (compat.fp4_matrix_cores)."""
    return compat.fp4_matrix_cores(gpu)


def fp4_weight_only(gpu: GpuSpec, min_cc: str | None, archs: tuple[str, ...] = ()) -> bool:
    """FP4 weights run on a GPU without FP4 tensor cores under a runtime whose weight-only
    FP4 kernels need compute capability ``min_cc`` (efficiency.fp4_weight_only_min_cc; vLLM's
    Marlin FP4: 16-bit activations, the 4-bit weights dequantised in the GEMM), or on one of
    its ``archs`` of other vendors (vLLM on AMD CDNA 3/4). The one rule inference's gate and
    serving's format check share."""
    if native_fp4(gpu):
        return False
    if gpu.vendor != "nvidia":
        return gpu.architecture.lower() in archs
    return min_cc is not None and compat.cc_at_least(gpu, min_cc)


def weight_only_note(gpu: GpuSpec, fmt: str, runtime: str) -> str:
    """What a row says where its ``fmt`` ("FP8", "FP4") weights run through the runtime's
    weight-only kernels: the GPU has no such tensor (matrix) cores."""
    cores = "tensor" if gpu.vendor == "nvidia" else "matrix"
    return (
        # the runtime in words, not as a possessive of its id ("transformers's")
        f"{gpu.name} has no {fmt} {cores} cores: {runtime_name(runtime)} runs {fmt} weights "
        "through weight-only kernels, in 16-bit math"
    )


def fp8_weight_only(gpu: GpuSpec, model: ModelSpec, min_cc: str | None) -> bool:
    """A dense model's FP8 weights run on a GPU without FP8 tensor cores under a runtime whose
    weight-only FP8 kernels need compute capability ``min_cc`` (vLLM's FP8 Marlin, W8A16: the
    weights dequantised to 16-bit in the GEMM). Mixture-of-experts models are not: vLLM's
    fused MoE kernel has no FP8 Marlin path (Red Hat AI on its FP8 MoE checkpoints: "FP8 MoE
    models only on Ada Lovelace or Hopper"). The one rule inference and serving share."""
    if min_cc is None or gpu.fp8_tflops or gpu.vendor != "nvidia":
        return False
    if (model.experts or 0) > 1:
        return False
    return compat.cc_at_least(gpu, min_cc)


def fp16_accumulate_gain(gpu: GpuSpec) -> float:
    """How much faster a GEMM accumulating in FP16 runs than the catalog's fp16 peak: 2 where
    that peak is the die's FP32-accumulate half rate (GeForce boards, the L40:
    ``efficiency.half_rate_fp16``), 1 where it is already the full rate (the TITAN RTX,
    workstation and datacenter boards)."""
    return 2.0 if half_rate_fp16(gpu) else 1.0


def fp16_accumulate_rate_gain(gpu: GpuSpec) -> float:
    """``fp16_accumulate_gain`` for a rate already priced at the prior's share of the fp16
    figure (perf.prior_compute_efficiency): the FP16-accumulate path is the die's full rate,
    fed at FP16_ACCUMULATE_GEMM_SHARE, not at the half-rate figure's HALF_RATE_GEMM_SHARE."""
    gain = fp16_accumulate_gain(gpu)
    return gain * FP16_ACCUMULATE_GEMM_SHARE / HALF_RATE_GEMM_SHARE if gain > 1.0 else 1.0


def sustained_clock(gpu: GpuSpec, prof: RuntimeProfile) -> float:
    """The share of its boost clock a power-capped board holds under a prompt pass's tensor
    load: its 16-bit tensor math runs at most TDP × the profile's ``tensor_tflops_per_watt``
    (an architecture's sustained TFLOPS per board watt, data/efficiency.yaml), against the
    16-bit tensor peak the runtime's GEMMs run at (FP16-accumulate's where the profile
    accumulates in FP16: ``fp16_accumulate_gain``). 1 without such a figure, TDP or peak."""
    per_watt = prof.tensor_tflops_per_watt
    if not per_watt or not gpu.tdp_w:
        return 1.0
    if prof.compute_basis == "sm":
        # the MMQ path: one clock for its GEMMs (basis_tflops) and its attention alike
        return sm_clock_share(gpu, prof)
    full, mode = datapath(gpu, "fp16")
    if not full or mode == "fp32":
        return 1.0
    if prof.fp16_accumulate:
        full *= fp16_accumulate_gain(gpu)
    return min(1.0, gpu.tdp_w * per_watt / full)


def datapath(gpu: GpuSpec, precision: str, prof: RuntimeProfile = EAGER) -> tuple[float, str]:
    """(dense TFLOPS, datapath) the linear layers of a ``precision`` checkpoint run at under
    the runtime: fp8 on fp8 tensor cores where the GPU has them; int8 and fp4 on their own
    where the runtime has such kernels (``native``); weight-only formats (int4) and everything
    else on the 16-bit peak (fp32 for fp32 jobs, and where a 16-bit datapath is missing or
    slower than fp32, as on Pascal GeForce)."""
    if precision == "fp4" and "fp4" in prof.native and native_fp4(gpu) and gpu.fp8_tflops:
        # Blackwell and CDNA 4 double the fp8 rate for fp4 (B200: 9 vs 4.5 dense PFLOPS;
        # MI355X: 16384 vs 8192 FLOPS/clock/CU)
        return 2.0 * gpu.fp8_tflops, "fp4"
    if precision == "fp8" and gpu.fp8_tflops:
        return gpu.fp8_tflops, "fp8"
    if precision == "int8" and "int8" in prof.native and gpu.int8_tops:
        return gpu.int8_tops, "int8"
    if precision in ("fp32", "tf32"):
        tf32 = gpu.peak_tflops("tf32") if precision == "tf32" else None
        return (tf32, "tf32") if tf32 else (gpu.fp32_tflops or 0.0, "fp32")
    # bf16 checkpoints (and fp8 ones falling back, and fp4 ones without FP4 kernels: vLLM's
    # Marlin FP4 takes 16-bit activations only) compute in bf16; fp16 and weight-only
    # formats (GPTQ/AWQ, GGUF) dequantise to fp16 — half bf16's rate on some parts (MI100)
    order = ("bf16", "fp16") if precision in ("bf16", "fp8", "fp4") else ("fp16", "bf16")
    for p in order:
        # the catalog's figure, else the one derived from FP32 by generation (peaks): the same
        # 16-bit peak the operator path prices (RTX 4000/5000 Ada publish no tensor figure)
        value = peaks.peak_tflops(gpu, p)[0]
        if value:
            if gpu.fp32_tflops and value < gpu.fp32_tflops:
                return gpu.fp32_tflops, "fp32"
            return value, p
    return gpu.fp32_tflops or 0.0, "fp32"


def softmax_balance(gpu: GpuSpec, mode: str, accumulate: float = 1.0) -> float | None:
    """The attention softmax's balance (kernels.softmax_fill): the rate the attention matmuls
    run at ÷ the FP32 peak its vector work runs at. The matmuls run at the 16-bit tensor peak
    for a 16-bit, fp8, int8 or int4 job (its attention stays in 16 bits: perf._flash_cap)
    times ``accumulate``, any FP16-accumulate gain (``fp16_accumulate_gain``) and the runtime's
    tensor share (efficiency.tensor_share), which make the softmax's vector work that much
    dearer per score; at the TF32 peak for a TF32 job. None for an FP32 job, whose attention
    matmuls run on the CUDA cores beside its softmax, and without an FP32 figure. The one rule
    the operator path (perf._build_on_gpu) and the LLM step's prompt attention
    (``fused_attention``) read."""
    if not gpu.fp32_tflops:
        return None
    if mode in AMP_PRECISIONS or mode.startswith(("fp8", "int8", "int4")):
        peak, half_mode = datapath(gpu, "fp16")
        if half_mode == "fp32":
            # no 16-bit math faster than FP32 (Pascal GeForce): the matmuls run on the CUDA
            # cores beside the softmax, an FP32 job's case. No catalog part reaches this with a
            # 16-bit or 8-bit mode: each such job's own datapath falls back to fp32 first
            return None
        peak *= accumulate
    elif mode == "tf32":
        peak = peaks.peak_tflops(gpu, "tf32")[0] or 0.0
    else:
        return None
    return peak / gpu.fp32_tflops if peak else None


def expert_tile(rows: float, lo: int, hi: int) -> int:
    """The grouped kernel's token tile for an expert of typically ``rows`` rows: the smallest
    power of two from ``lo`` to ``hi`` that holds them (vLLM's tuned fused_moe tables)."""
    tile = lo
    while tile < rows and tile < hi:
        tile *= 2
    return min(tile, hi)


def expert_tiles(tokens: float, topk: int, experts: int, lo: int, hi: int) -> tuple[float, int]:
    """(expected token tiles of one expert's grouped GEMM, the tile's rows) at a step of
    ``tokens`` tokens each routed to ``topk`` of ``experts`` experts, uniformly (a balanced
    router): an expert's rows X ~ Binomial(tokens, k/E), padded to the tile T, so its tiles
    are E[ceil(X/T)] = Σ_j≥0 P(X > jT) — P(X ≥ 1) exactly (the share of experts touched,
    1 − (1 − k/E)^tokens), the rest by the normal approximation. An untouched expert costs
    no tile; a touched one at least one however few its rows."""
    p = topk / experts
    n = max(tokens, 1.0)
    touched = 1.0 - (1.0 - p) ** n
    mu = n * p
    sd = math.sqrt(n * p * (1.0 - p))
    # a touched expert's typical rows, at most the step's tokens (a token picks k distinct
    # experts: at one token every touched expert has exactly one row)
    tile = expert_tile(min(mu / touched + sd, n), lo, hi)
    # P(X > jT) is 1 for jT below μ − 6σ and 0 above μ + 6σ: only the few tiles between
    # need the normal tail
    first = max(1, math.ceil((mu - 6.0 * sd) / tile))
    tiles = touched + (first - 1)
    j = first
    while j * tile < mu + 6.0 * sd:
        tiles += 0.5 * math.erfc((j * tile + 0.5 - mu) / (sd * _SQRT2))
        j += 1
    return tiles, tile


def k_depth_rate(k_bytes: float, overhead_bytes: float, ref_bytes: float) -> float:
    """A GEMM's rate at a K of ``k_bytes`` relative to one ``ref_bytes`` deep (at most 1):
    each output tile runs its K loop plus a fixed cost worth ``overhead_bytes`` of K (pipeline
    fill, epilogue), so its rate goes as K / (K + overhead) (DeepGEMM's dense H800 table)."""
    at_ref = ref_bytes / (ref_bytes + overhead_bytes)
    return min(1.0, k_bytes / (k_bytes + overhead_bytes) / at_ref)


def routed_slowdown(m: ModelSpec, tp: int, mode: str, prof: RuntimeProfile) -> float:
    """Time of the routed experts' FLOPs relative to the dense GEMM rate (≥ 1): an output
    tile's fixed cost (``gemm_k_overhead_bytes`` of K) weighs on the experts' shallow K — gate
    and up (2/3 of an expert's FLOPs) at K = hidden, down at K = expert FFN ÷ tensor-parallel
    GPUs — against the ``gemm_k_ref_bytes``-deep GEMMs the dense prior stands for (DeepGEMM's
    H800 table). 1 where not modelled."""
    k0, ref = prof.gemm_k_overhead_bytes, prof.gemm_k_ref_bytes
    if not (k0 and ref and m.hidden_size):
        return 1.0
    b = OPERAND_BYTES.get(mode, 2.0)

    def rate(k: float) -> float:  # of the dense rate, at K = k values
        return k_depth_rate(k * b, k0, ref)

    if not m.intermediate_size:
        return 1.0 / rate(m.hidden_size)
    return (2.0 / 3.0) / rate(m.hidden_size) + (1.0 / 3.0) / rate(m.intermediate_size / tp)


def dense_slowdown(m: ModelSpec, tp: int, mode: str, prof: RuntimeProfile) -> float:
    """Time of the FLOPs of the GEMMs every token runs (all but the routed experts) relative to
    the dense GEMM rate (≥ 1): the routed experts' K-depth rule (``k_depth_rate``, DeepGEMM's
    dense table) at each GEMM's own K, weighted by its FLOPs — QKV and an MLP's gate/up at
    K = hidden, the attention output at K = heads × head size ÷ tensor-parallel GPUs, the MLP's
    down at K = FFN ÷ tensor-parallel GPUs, the rest of a token's dense FLOPs (shared experts,
    router, LM head) at K = hidden. 1 where not modelled; deep GEMMs (a 70B model's 8192-wide
    K in fp8) keep the prior; fp4 halves K's bytes, so the same shapes run shallower."""
    k0, ref = prof.gemm_k_overhead_bytes, prof.gemm_k_ref_bytes
    h, layers = float(m.hidden_size or 0), float(m.layers or 0)
    routed = expert_split(m)[1]
    e, k = m.experts or 0, m.active_experts or 0
    dense = m.params_per_token - (routed * k / e if routed and e else 0.0)
    if not (k0 and ref and h and layers and dense > 0):
        return 1.0
    b = OPERAND_BYTES.get(mode, 2.0)

    def cost(depth: float) -> float:  # time per FLOP against the prior's, at K = depth values
        return 1.0 / k_depth_rate(depth * b, k0, ref)

    width = attention_width(m)
    kv_width = (m.kv_heads or m.num_heads or 0) * (width / m.num_heads if m.num_heads else 0.0)
    qkv, out = h * (width + 2.0 * kv_width), width * h
    mlp = 0.0 if _is_moe(m) or not m.intermediate_size else 3.0 * h * m.intermediate_size
    shaped = layers * (qkv + out + mlp)
    if shaped > dense:  # a shape that does not add up to the model's parameters: keep the prior
        return 1.0
    t = layers * (qkv * cost(h) + out * cost(width / tp))
    if mlp:
        inter = float(m.intermediate_size or 0)
        t += layers * h * inter * (2.0 * cost(h) + cost(inter / tp))
    t += (dense - shaped) * cost(h)
    return t / dense


def moe_activation_bytes(m: ModelSpec, tp: int = 1) -> float:
    """Per token, over all layers and the ``tp`` tensor-parallel GPUs of a replica: the MoE
    layers' intermediate activation traffic (0 for a dense model or an MoE without its expert
    FFN size). The I-wide buffers split over the GPUs; the down projection's h-wide output of
    every routed copy, and moe_sum's read of it, are on each GPU whole (``MOE_ACT_BYTES``)."""
    if expert_split(m)[1] <= 0 or not m.intermediate_size or not m.hidden_size:
        return 0.0
    k, i, h = m.active_experts or 1, m.intermediate_size, m.hidden_size
    return (m.layers or 1) * k * MOE_ACT_BYTES * (6.0 * i + 2.0 * h * max(1, tp))


def attention_width(m: ModelSpec, *, decode_step: bool = False) -> float:
    """Heads × head size one layer's Q·Kᵀ and A·V run over (4 × this FLOPs per query-key
    pair). The head size comes from the KV cache per token where the model gives it (a
    config.json's explicit head_dim: Qwen3-30B-A3B 32 × 128 = 4096 against hidden 2048),
    else hidden ÷ heads. Latent attention decodes with absorbed weights: every head attends
    over the cached latent (DeepSeek-V3: 128 heads × 576 values, FlashMLA); otherwise the
    hidden size, the width the K-depth rule shapes its projections by (``dense_slowdown``). A
    prompt's attention over MLA's up-projected 192/128-wide heads: ``prompt_attention_width``."""
    h = float(m.hidden_size or 1)
    layers, heads, kv_heads = m.layers or 0, m.num_heads or 0, m.kv_heads or 0
    per_token = (m.kv_elements_per_token or 0.0) + (m.kv_window_elements_per_token or 0.0)
    if not (layers and heads and per_token):
        return h
    if m.attention == "mla":
        return heads * per_token / layers if decode_step else h
    head = per_token / (2.0 * layers * kv_heads) if kv_heads else 0.0
    return heads * head if head else h


def prompt_attention_width(m: ModelSpec) -> float:
    """``attention_width`` of a prompt's tokens (4 × this FLOPs per query-key pair and layer).
    Latent attention prefills without absorbing: vLLM's MLA "compute friendly approach"
    up-projects the latent to every head's K and V and runs multi-head attention with a QK head
    of qk_nope + qk_rope values and a V head of v_head_dim (DeepSeek-V3: 128 heads × 192 and
    × 128), so a pair costs 2·heads·(nope + rope) + 2·heads·v FLOPs — heads × (nope + rope + v)
    ÷ 2 in this width, 20,480 against the hidden size's 7,168 (``MLA_PREFILL_SOURCE``). It is
    applied under every runtime; llama.cpp (PR #12801) runs MLA absorbed for every micro-batch,
    QK over the 576-value latent and V over its 512, about 3.4× this width, which is not priced
    apart (no llama.cpp DeepSeek row to check it). Every other model: ``attention_width``."""
    nope, rope = m.qk_nope_head_dim or 0, m.qk_rope_head_dim or 0
    if m.attention != "mla" or not (m.num_heads and nope and rope):
        return attention_width(m)
    v = m.v_head_dim or nope
    return m.num_heads * (nope + rope + v) / 2.0


def _is_moe(m: ModelSpec) -> bool:
    return expert_split(m)[1] > 0


def _layer_counts(m: ModelSpec) -> tuple[int, int]:
    """(kernels, GEMM kernels besides an MoE's routed block) one decoder layer launches."""
    kernels, gemms = KERNELS_PER_LAYER, GEMMS_PER_LAYER
    if _is_moe(m):
        kernels += MOE_KERNELS_PER_LAYER
        if m.shared_experts == 0:
            kernels, gemms = kernels - DENSE_MLP_KERNELS, gemms - DENSE_MLP_GEMMS
    if m.attention == "mla":
        kernels, gemms = kernels + MLA_KERNELS, gemms + MLA_GEMMS
    return kernels, gemms


def _kernels_per_layer(m: ModelSpec) -> int:
    return _layer_counts(m)[0]


def quant_linears(m: ModelSpec, weights: str) -> int:
    """The dense linears of one decoder layer whose FP8 weights are block-scaled, each of which
    a runtime may quantise its input for in a kernel of its own (``act_quant_kernels``): QKV
    (MLA: the fused q_a/kv_a and q_b), the output projection and a dense or shared-expert MLP's
    gate/up and down. Block scales are the FP8 mixture-of-experts checkpoints' (Qwen3-*-FP8,
    DeepSeek-V3/R1: ``serving_step.FP8_BLOCK``); a dense FP8 model is taken as per-tensor or
    per-channel, whose input quantisation the runtimes fuse. The routed experts' two are inside
    the measured ``moe_block_us``."""
    if weights != "fp8" or not _is_moe(m):
        return 0
    gemms = _layer_counts(m)[1]
    return gemms - MLA_BMM_GEMMS if m.attention == "mla" else gemms


@dataclass(slots=True)
class ReplicaJob:
    """The GPU-independent terms of ``replica`` for one model in one weight and KV format: the
    same for every card and count of a request, so worked out once per job (perf keeps it on
    the job's spec). ``replica`` and ``card_columns`` read it; its K-depth slowdowns are kept
    by (tensor-parallel degree, datapath, the profile's K constants), a few per request."""

    model: ModelSpec
    dense: float  # parameters every token reads (all of them for a dense model)
    experts: float  # all routed experts' parameters
    n_experts: int
    wb: float  # bytes per weight, the whole model's mean
    kv_b: float
    flops_per_token: float  # 2 × the active params a token multiplies by, head and lookup aside
    moe_act_bytes: float
    layers: int
    hidden: int
    attn_width: float
    attn_width_decode: float
    kernels: int  # per layer
    gemms: int  # per layer, besides an MoE's routed block
    moe: bool
    # block-FP8 dense linears per layer (``quant_linears``): the profile's
    # ``act_quant_kernels`` more kernels each (``layer_kernels``)
    quant_linears: int
    # how a torch.cat-regrown cache moves on the job's stack (``kv_traffic``): the rate of its
    # cat relative to a vectorised one (``cat_rate``), and the GQA groups its attention
    # materialises each step (``transformers_repeats_kv``; 1: none)
    cat_rate: float = 1.0
    repeat_groups: int = 1
    # the decode attention runs TensorRT-LLM's masked MHA kernel on the CUDA cores
    # (WorkloadSpec.mmha): its math at the card's ``mmha_slowdown``
    mmha: bool = False
    # the routed experts multiply at the card's 16-bit tensor rate, their weights read in the
    # job's 8-bit format (WorkloadSpec.experts_16bit: a weight-only FP8 MoE): their FLOPs take
    # ``expert_math_slowdown`` of the card's rate on its own datapath
    experts_16bit: bool = False
    # eager ops per layer the job's stack adds to the runtime's own (``host_ops``): repeat_kv's,
    # a quantised linear's Python wrapper
    extra_host_ops: float = 0.0
    # the LM head's FLOPs per logit row (2 × vocabulary × hidden; Replica.head_flops); the
    # bytes a token's embedding lookup gathers; 0 where the shape or vocabulary is unknown
    head_flops: float = 0.0
    row_bytes: float = 0.0
    # bytes of the weights every step reads (Replica.dense_bytes): all but the routed experts,
    # as stored (the 16-bit tables a quantised checkpoint keeps are among them, not spread over
    # the experts), less an untied input embedding, which no step reads whole; and bytes per
    # routed-expert weight, the format's own (``replica_job``)
    dense_read: float = 0.0
    expert_wb: float = 0.0
    # parameters every tensor-parallel GPU multiplies whole (``replicated_params``): a replica
    # of tp GPUs adds (tp − 1) × them to its FLOPs per token and its weights read
    replicated: float = 0.0
    # the job's runtime release where stated (transformers' for generate():
    # ``all_prompt_logits``); "" a current one
    runtime_release: str = ""
    # where the build replays its one-token CUDA graph (``GRAPH_BUILDS``, ``graph_launch``)
    graphs: str = ""
    # what is kept as it is worked out: two jobs with the same terms above compare equal
    # (``==``: the same replica terms, e.g. a model's BF16 and FP16 weights), whatever each kept
    slowdowns: dict[tuple[object, ...], float] = field(
        default_factory=dict, repr=False, compare=False
    )
    kv_memo: dict[float, float] = field(default_factory=dict, repr=False, compare=False)
    # the caller's per-card results for this job (perf: a card's one-GPU time), for the
    # request's life
    per_card: dict[tuple[object, ...], tuple[object, float]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def kv_at(self, context: float) -> float:
        return _kv_values(self.model, self.kv_memo, context)

    def kv_traffic(self, runtime: T) -> T:
        """Bytes a decode step moves per byte of KV cache it attends over, from the runtime's
        own ``kv_traffic`` (3 where generate() regrows the cache by torch.cat: the cat reads
        and writes it, attention reads it; 1 for a preallocated or paged cache): the cat's
        share at ``cat_rate`` (an older PyTorch's 16-bit cat at half the bytes per second
        costs as 4 ×), plus, where the attention materialises grouped-query K/V for all g
        query heads of a group (transformers' repeat_kv), the copy's read of the cache and
        its g-fold write, and attention reading the g-fold copy instead of the cache:
        1 + g + g − 1 = 2g more. A float, or each card's figure as an array."""
        if self.cat_rate == 1.0 and self.repeat_groups <= 1:
            return runtime
        extra = 2.0 * self.repeat_groups if self.repeat_groups > 1 else 0.0
        return 1.0 + (runtime - 1.0) / self.cat_rate + extra

    def host_ops(self, runtime: T) -> T:
        """Eager ops per layer a decode step dispatches: the runtime's ``ops_per_layer``, plus
        the job's ``extra_host_ops`` (``REPEAT_KV_HOST_OPS`` where the attention materialises
        grouped-query K/V, ``QUANT_LINEAR_HOST_OPS`` per linear of a GPTQ / AWQ model); 0 stays
        0 (a runtime without host dispatch). A float, or each card's figure as an array."""
        if not self.extra_host_ops:
            return runtime
        return runtime + self.extra_host_ops * (runtime > 0)

    def dense_slowdown(self, tp: int, mode: str, prof: RuntimeProfile) -> float:
        key = ("dense", tp, mode, prof.gemm_k_overhead_bytes, prof.gemm_k_ref_bytes)
        hit = self.slowdowns.get(key)
        if hit is None:
            hit = self.slowdowns[key] = dense_slowdown(self.model, tp, mode, prof)
        return hit

    def routed_slowdown(self, tp: int, mode: str, prof: RuntimeProfile) -> float:
        key = ("routed", tp, mode, prof.gemm_k_overhead_bytes, prof.gemm_k_ref_bytes)
        hit = self.slowdowns.get(key)
        if hit is None:
            hit = self.slowdowns[key] = routed_slowdown(self.model, tp, mode, prof)
        return hit


def replica_job(
    model: ModelSpec,
    *,
    weights: str,
    kv: str,
    own_bits: float | None = None,
    format_bits: float | None = None,
    torch_version: str = "",
    kv_repeat: bool = False,
    quantization: str = "",
    mmha: bool = False,
    experts_16bit: bool = False,
    runtime_release: str = "",
    graphs: str = "",
) -> ReplicaJob:
    """``model``'s GPU-independent replica terms in the ``weights`` and ``kv`` formats.
    ``torch_version``: the PyTorch release the job runs ("" = a current one: ``cat_rate``);
    ``kv_repeat``: its attention materialises grouped-query K/V each step (``kv_traffic``);
    ``quantization``: its weight format's kernels (``QUANT_LINEAR_HOST_OPS``); ``mmha``: its
    decode attention runs TensorRT-LLM's masked MHA kernel (``CardTerms.mmha_slowdown``);
    ``experts_16bit``: its routed experts multiply at the 16-bit rate (``expert_math_slowdown``);
    ``runtime_release``: its runtime's release, where stated (``all_prompt_logits``);
    ``graphs``: where its build replays a one-token CUDA graph (``GRAPH_BUILDS``)."""
    if graphs not in GRAPH_BUILDS:
        raise ValueError(f"unknown CUDA-graph build {graphs!r}")
    heads, kv_heads = model.num_heads or 0, model.kv_heads or 0
    groups = heads // kv_heads if kv_repeat and kv_heads and heads > kv_heads else 1
    extra = (REPEAT_KV_HOST_OPS if groups > 1 else 0.0) + LINEARS_PER_LAYER * (
        QUANT_LINEAR_HOST_OPS.get(quantization, 0.0)
    )
    dense, experts = expert_split(model)
    n_experts = model.experts or 1
    if not experts and model.params_per_token < model.params:
        dense, experts, n_experts = 0.0, model.params, 0  # routed, expert count unknown
    kernels, gemms = _layer_counts(model)
    table, untied = vocabulary_params(model)
    table_b = formats.table_value_bytes(weights, own_bits, format_bits=format_bits)
    stored = formats.weight_bytes(model, weights, own_bits, format_bits=format_bits)
    expert_wb = formats.quantised_value_bytes(weights, own_bits, format_bits=format_bits)
    if not n_experts:  # experts of unknown count: every weight at the mean
        expert_wb = stored / model.params
    layers_b = max(0.0, stored - experts * expert_wb)
    return ReplicaJob(
        model=model,
        dense=dense,
        experts=experts,
        n_experts=n_experts,
        wb=stored / model.params,
        kv_b=formats.kv_bytes(kv),
        flops_per_token=2.0 * max(0.0, model.params_per_token - table - untied),
        moe_act_bytes=moe_activation_bytes(model),
        layers=model.layers or 1,
        hidden=model.hidden_size or 1,
        attn_width=prompt_attention_width(model),
        attn_width_decode=attention_width(model, decode_step=True),
        kernels=kernels,
        gemms=gemms,
        moe=_is_moe(model),
        quant_linears=quant_linears(model, weights),
        cat_rate=cat_rate(torch_version, formats.kv_bytes(kv)),
        repeat_groups=groups,
        extra_host_ops=extra,
        mmha=mmha,
        experts_16bit=experts_16bit,
        head_flops=2.0 * table,
        row_bytes=float(model.hidden_size or 0) * table_b if table else 0.0,
        dense_read=max(0.0, layers_b - untied * table_b),
        expert_wb=expert_wb,
        replicated=replicated_params(model),
        runtime_release=runtime_release,
        graphs=graphs,
    )


def replicated_terms(job: ReplicaJob, tp: float) -> tuple[float, float]:
    """(weight bytes, FLOPs per token) that ``tp`` tensor-parallel GPUs add to a replica's
    step by each multiplying the job's ``replicated`` parameters whole, beyond the one copy
    ``dense_read`` and ``flops_per_token`` count: (tp − 1) copies, at the format's bytes per
    quantised weight."""
    extra = job.replicated * max(0.0, tp - 1.0)
    return extra * (job.expert_wb or job.wb), 2.0 * extra


def vocabulary_params(model: ModelSpec) -> tuple[float, float]:
    """(LM head, untied input embedding) parameters of a decoder: the head multiplies the
    vocabulary's table (vocabulary × hidden) into the rows it samples; an untied input table is
    a separate matrix a step only gathers rows of, a tied one is the head's own weight and is
    read as the head (activations.embedding_params: ``tied_embeddings``, else read off the
    parameter count). (0, 0) where the vocabulary or the shape is unknown."""
    if model.family != "decoder":
        return 0.0, 0.0
    return activations.embedding_params(model)


# A runtime row whose attention is its own two batched GEMMs around the whole score matrix,
# not a fused kernel (efficiency.RuntimeProfile.attention; perf.UNFUSED_ATTENTION reads it)
UNFUSED_ATTENTION = "unfused"
# The key of ``compute_efficiency`` (perf.llm_efficiency) that holds the GPU's fused attention
# forward at its best shape as a share of its 16-bit peak: the kernel profile's attention
# ceiling (kernel_profiles.attention_efficiency), else the prior's share of the 16-bit GEMM's
# (kernels.FLASH_FWD_FACTOR), the operator path's flash forward before the runtime's own terms
ATTENTION_SHARE = "attention_prefill"


class FusedAttention(NamedTuple):
    """A runtime's fused attention forward on one GPU, as the operator path prices it: its
    FLOP/s at the best shape (kernels.class_rates' flash forward, at the clock the card's other
    rates hold) and what kernels.shape_efficiency reads of the GPU for a shape (SM count, its
    softmax's ``softmax_balance``). A tuple, not a frozen dataclass: it keys ``_fused_layer_s``'s
    cache, and a dataclass's hash is a Python call for every row of every prompt step (the
    same hash: a frozen dataclass hashes the tuple of its fields)."""

    flops: float
    sms: int | None
    balance: float | None


def sdpa_attention_kernel(gpu: GpuSpec, runtime: str, backend: str = "cuda") -> str:
    """The fused attention kernel PyTorch's SDPA picks for ``runtime`` (a key of
    kernels.ATTENTION_KERNEL_SLOWDOWN, "" for FlashAttention-2): "flash1" — a first-generation
    kernel (FlashAttention v1 or the CUTLASS memory-efficient kernel) — for an SDPA runtime on
    an NVIDIA GPU below sm80, where PyTorch's flash backend does not run ("Flash attention
    only supports gpu architectures in the range [sm80, ...]", aten/.../sdp_utils.cpp)."""
    if runtime not in SDPA_RUNTIMES or backend != "cuda" or gpu.vendor != "nvidia":
        return ""
    try:
        major = int((gpu.compute_capability or "0").split(".")[0])
    except ValueError:
        return ""
    return "flash1" if 0 < major < 8 else ""


def fused_attention(
    gpu: GpuSpec, prefill: RuntimeProfile, share: float | None, half: float, half_mode: str
) -> FusedAttention | None:
    """The runtime's prompt attention kernel on ``gpu`` where it is a fused one (its row's
    ``attention`` is not "unfused"), at the boost clock, priced as the operator path prices a
    job's flash forward (perf._build_on_gpu's kernels.class_rates): ``share`` (the best-shape
    rate ÷ the ``half`` TFLOPS 16-bit peak, ``ATTENTION_SHARE``) at the runtime's 16-bit tensor
    share (efficiency.tensor_share) and its FP16-accumulate gain (``attention_fp16_accumulate``),
    under its row's ceiling (``flash_peak_share``: FlashAttention-2 on Hopper), slowed for a
    first-generation kernel (``sdpa_attention_kernel``). None: no share, no 16-bit datapath, or
    an unfused runtime (priced at the card's ``attn_flops``, as its batched GEMMs)."""
    if not share or not half or half_mode == "fp32" or prefill.attention == UNFUSED_ATTENTION:
        return None
    peak = half * 1e12
    gain = (
        fp16_accumulate_gain(gpu)
        if half_mode == "fp16" and prefill.attention_fp16_accumulate
        else 1.0
    )
    tshare = tensor_share(prefill, half_mode)
    cap = peak * prefill.flash_peak_share if prefill.flash_peak_share else None
    kernel = sdpa_attention_kernel(gpu, prefill.runtime)
    rates = class_rates(peak * tshare, None, share, cap, kernel, attention_accumulate=gain)
    balance = softmax_balance(gpu, half_mode, gain * tshare)
    return FusedAttention(rates[CLASS_INDEX[ATTN_FLASH]], gpu.sm_count, balance)


def prompt_attention_seconds(
    layers: float,
    width: float,
    attn_flops: float,
    fused: FusedAttention | None,
    heads: float,
    tp: float,
    prefill: float,
    prompt: float,
) -> float:
    """Seconds of the attention of ``prefill`` prompt tokens from prompts of ``prompt`` tokens
    on one replica of ``tp`` tensor-parallel GPUs: 4 × ``width`` FLOPs per layer per (query,
    key) pair, each token seeing half its prompt's keys on average (causal). Without a fused
    kernel at ``attn_flops`` (the replica's 16-bit rate, as its GEMMs); with one, the operator
    path's own cost of that op (operators.attention: a fused causal forward of ``prefill``
    query tokens in ``prompt``-long sequences over one GPU's ``heads ÷ tp`` heads of
    ``width ÷ heads``; kernels.op_time: the kernel's rate × kernels.shape_efficiency, the wave
    fill of its 128-row query blocks over the SMs, its key loop's length, the head dim's
    padding and the softmax's vector time), once per layer."""
    if fused is None or not (prefill and prompt and heads):
        return 4.0 * layers * (width * prefill * prompt / 2.0) / attn_flops
    return layers * _fused_layer_s(fused, heads / tp, width / heads, prefill, prompt)


@lru_cache(maxsize=1 << 14)  # a pure function of the shape: a load is stepped at few shapes
def _fused_layer_s(
    fused: FusedAttention, heads: float, head_dim: float, prefill: float, prompt: float
) -> float:
    """One layer's ``prompt_attention_seconds`` on one GPU under a fused kernel."""
    (op,) = attention_ops(
        "attention", tokens_q=prefill, q_len=prompt, kv_len=prompt, heads=heads,
        head_dim=head_dim, kv_heads=heads, count=1.0, act_b=2.0, causal=True, flash=True,
    )  # fmt: skip
    return op_time(op, {ATTN_FLASH: fused.flops}, math.inf, 0.0, fused.sms, fused.balance)


@dataclass(frozen=True, slots=True)
class CardTerms:
    """What a replica reads of one GPU under a runtime for a weight format, whatever the model
    and the count: the linear layers' datapath and rates, the bandwidth, and the runtime's
    decode and prefill profiles on it (``card_terms``)."""

    bw: float  # bytes/s of one GPU: datasheet × the runtime's share
    flops: float  # FLOP/s of the linear layers on one GPU
    attn_flops: float
    mode: str  # the linear layers' datapath
    decode: RuntimeProfile
    prefill: RuntimeProfile
    # the arithmetic an answer names ("int8 math"): the mode, or where the mode is a rate
    # basis, the math its kernel does (llama.cpp's MMQ: q8_1 activations × int8 weights)
    math: str = ""
    # attn_flops ÷ the rate of a decode attention kernel on the CUDA cores (SMs × clock × the
    # decode profile's ``mmha_sm_share``): what a ``ReplicaJob.mmha`` job's decode attention
    # math takes relative to attn_flops; 1 where the profile or the catalog gives no such rate
    mmha_slowdown: float = 1.0
    # fp4 GEMMs' rate at a step of T tokens ÷ their rate at a small M: max(1, fp4_rel ×
    # T ÷ (T + fp4_m0)) (``fp4_m_terms``); fp4_rel 0: one rate at every M
    fp4_rel: float = 0.0
    fp4_m0: float = 1.0
    # the runtime's fused prompt attention kernel (``fused_attention``); None: at attn_flops
    fused: FusedAttention | None = None


def fp4_m_terms(small: float, large: float, m_small: float, m_large: float) -> tuple[float, float]:
    """(fp4_rel, fp4_m0) of an fp4 GEMM share that is ``small`` up to ``m_small`` rows and
    ``large`` at ``m_large``: a rate that saturates with M as s∞ × M ÷ (M + M₀) (each output
    tile's fixed cost spread over more rows, the K rule's form), through the two points, taken
    relative to ``small`` and never below it. (0, 1) where no large-M share is given."""
    if not (small > 0 and large > small and 0 < m_small < m_large):
        return 0.0, 1.0
    ratio = large / small
    m0 = m_large * m_small * (ratio - 1.0) / (m_large - ratio * m_small)
    return (m_small + m0) / m_small, m0


def fp4_m_gain(tokens: float, rel: float, m0: float) -> float:
    """How many times faster a step's fp4 GEMMs run at M = ``tokens`` than at a small M
    (``fp4_m_terms``); 1 where not modelled. Only +, ×, ÷ and max: ``Columns`` computes the
    same figure elementwise, to the last bit."""
    return max(1.0, rel * (tokens / (tokens + m0)))


def mmha_slowdown(gpu: GpuSpec, decode: RuntimeProfile, attn_flops: float) -> float:
    """How much longer a decode step's attention math takes on ``gpu`` in TensorRT-LLM's masked
    MHA kernel than at ``attn_flops`` (FLOP/s, the 16-bit tensor rate): that kernel runs one
    thread block per query head and sequence (decoderMaskedMultiheadAttentionTemplate.h:
    ``hi = blockIdx.x``, K/V head ``hi / qhead_per_kv``) and does its dot products on the CUDA
    cores (XQA, the grouped-query kernel that replaces it, is the one "using tensor cores"),
    converting every 16-bit or FP8 operand to float before its FP32 FMA. A mix of conversions,
    address arithmetic and FMAs is bound by the SM's issue rate, not by its FP32 lanes, so its
    rate is SMs × clock (``basis_tflops`` basis ``sm``: the FP32 peak × 128 ÷ FP32 lanes per SM,
    twice the FP32 peak on a GA100) × ``decode.mmha_sm_share``; 1 where either is unknown."""
    share = decode.mmha_sm_share
    rate = basis_tflops(gpu, "sm", decode) if share else None
    if not (share and rate and attn_flops > 0):
        return 1.0
    return attn_flops / (rate * 1e12 * share)


def card_terms(
    gpu: GpuSpec,
    *,
    weights: str,
    decode: RuntimeProfile,
    prefill: RuntimeProfile,
    memory_efficiency: float,
    compute_efficiency: Mapping[str, float],
) -> CardTerms:
    """One GPU's part of ``replica`` (before the count multiplies it)."""
    peak, mode = datapath(gpu, weights, prefill)
    math_shown = mode
    if prefill.compute_basis and prefill.compute:
        basis = prefill.compute_basis
        peak = basis_tflops(gpu, basis, prefill) or 0.0
        mode, rate = basis, prefill.compute
        math_shown = prefill.compute_math or basis
    else:
        rate = compute_efficiency.get(mode, 0.5) * prefill.compute_scale
        if prefill.fp16_accumulate and mode == "fp16":
            peak *= fp16_accumulate_rate_gain(gpu)
        if mode == "fp4":
            # fp4 GEMMs reach less of their doubled peak than fp8 ones do of theirs (B200)
            rate *= prefill.fp4_gemm_share
        # a power-capped board holds a lower clock under tensor load, whatever the job's
        # datapath, where its rows give a figure: data/efficiency.yaml keys them on the jobs
        # the figure binds (Ada and Ampere: bf16/fp16 jobs and weight-only int4/fp4 prompts,
        # whose math is fp16, not native fp8/int8; Turing: all). The ``sm`` basis takes it in
        # basis_tflops
        if mode != "fp32":
            peak *= sustained_clock(gpu, prefill)
    # attention runs in the 16-bit type the activations are kept in
    act16 = "bf16" if weights in ("bf16", "fp8", "fp4") else "fp16"
    half, half_mode = datapath(gpu, act16, prefill)
    if half_mode != "fp32":
        half *= sustained_clock(gpu, prefill)
    half_rate = compute_efficiency.get(half_mode, 0.5) * prefill.compute_scale
    mem = memory_efficiency * decode.memory / EAGER.memory
    attn_flops = (half or peak) * 1e12 * half_rate
    # the prompt's attention: the runtime's fused kernel as the operator path prices it, at
    # the clock the card holds under load (the boost-clock peak × sustained_clock above)
    boost, _ = datapath(gpu, act16, prefill)
    fused = fused_attention(gpu, prefill, compute_efficiency.get(ATTENTION_SHARE), boost, half_mode)
    if fused is not None and boost and half != boost:
        fused = fused._replace(flops=fused.flops * (half / boost))
    rel, m0 = (
        fp4_m_terms(
            prefill.fp4_gemm_share,
            prefill.fp4_gemm_share_large,
            prefill.fp4_gemm_small_tokens,
            prefill.fp4_gemm_large_tokens,
        )
        if mode == "fp4"
        else (0.0, 1.0)
    )
    return CardTerms(
        bw=gpu.memory_bandwidth_gbs * 1e9 * mem,
        flops=peak * 1e12 * rate,
        attn_flops=attn_flops,
        mode=mode,
        decode=decode,
        prefill=prefill,
        math=math_shown,
        mmha_slowdown=mmha_slowdown(gpu, decode, attn_flops),
        fp4_rel=rel,
        fp4_m0=m0,
        fused=fused,
    )


def replica(
    gpu: GpuSpec,
    model: ModelSpec,
    *,
    weights: str,
    kv: str,
    n: int,
    decode: RuntimeProfile,
    prefill: RuntimeProfile,
    memory_efficiency: float,
    compute_efficiency: Mapping[str, float],
    own_bits: float | None = None,
    format_bits: float | None = None,
    scheduler_s: float = 0.0,
    host_per_seq_s: float = 0.0,
    mixed_host_us_per_kernel: float = 0.0,
    serial_per_seq_s: float = 0.0,
    job: ReplicaJob | None = None,
    card: CardTerms | None = None,
    links: bool = True,
    session_context: bool = True,
    torch_version: str = "",
    kv_repeat: bool = False,
    quantization: str = "",
    mmha: bool = False,
    experts_16bit: bool = False,
) -> Replica:
    """One replica of ``model`` on ``n`` × ``gpu`` under a runtime (its decode and prefill
    profiles). ``memory_efficiency``: the GPU's achieved ÷ datasheet bandwidth under eager
    kernels (the prior, or a device report's); ``compute_efficiency``: whole-model GEMM
    efficiency by datapath (GEMM prior × model utilisation). The runtime's profile scales both.
    ``own_bits``: a runtime's own weight format (GGUF) in bits per weight over the whole file;
    ``format_bits``: a named format's bits per quantised weight (formats.weight_bytes). ``job`` and
    ``card``: the GPU-independent and the GPU's terms, where the caller has them (the same
    arguments' ``replica_job`` and ``card_terms``). ``links=False``: no GPU-to-GPU time.
    ``mixed_host_us_per_kernel``: a server's eager host dispatch per kernel of a step that
    carries prompt tokens (CUDA graphs replayed for decode-only steps alone); 0: none.
    ``session_context``: a pass without decodes pays the prefill profile's
    ``context_layer_us`` (a static session's context phase, TensorRT-LLM's gptSession); False
    for a server's executor, whose prompt steps the serving runtime prices itself.
    ``torch_version``, ``kv_repeat``, ``quantization``, ``mmha``, ``experts_16bit``: the job's
    stack where no ``job`` is given (replica_job)."""
    tp, stages = span(decode, n)
    if job is None:
        job = replica_job(
            model,
            weights=weights,
            kv=kv,
            own_bits=own_bits,
            format_bits=format_bits,
            torch_version=torch_version,
            kv_repeat=kv_repeat,
            quantization=quantization,
            mmha=mmha,
            experts_16bit=experts_16bit,
        )
    if card is None:
        card = card_terms(
            gpu,
            weights=weights,
            decode=decode,
            prefill=prefill,
            memory_efficiency=memory_efficiency,
            compute_efficiency=compute_efficiency,
        )
    experts, n_experts, mode = job.experts, job.n_experts, card.mode
    layers = job.layers
    grouped = bool(n_experts and experts and prefill.moe_tile_max)
    if links:
        tp_link = topology.link(gpu, tp)
        hop_link = stage_link(gpu, n, stages, decode)
    else:
        tp_link = hop_link = topology.link(gpu, 1)
    kernels = layer_kernels(job, decode)
    launch_s, eager_launch_s, graph_max = graph_launch(
        layers * (kernels * decode.kernel_us + decode.graph_split_us) * 1e-6
        + (layers * decode.moe_block_us * 1e-6 if job.moe else 0.0),
        eager_launch_seconds(layers, kernels, decode),
        float(decode.graph_max_tokens),
        job.graphs,
        stages,
    )
    rep_bytes, rep_flops = replicated_terms(job, tp)
    return Replica(
        model=model,
        tp=tp,
        stages=stages,
        dense_bytes=job.dense_read + rep_bytes,
        expert_bytes=experts * job.expert_wb,
        experts=n_experts,
        topk=model.active_experts or 1,
        kv_b=job.kv_b * job.kv_traffic(decode.kv_traffic),
        flops_per_token=job.flops_per_token + rep_flops,
        # the routed copies' h-wide outputs are whole on each tensor-parallel GPU
        moe_act_bytes=moe_activation_bytes(job.model, tp) if tp > 1 else job.moe_act_bytes,
        bw=card.bw * tp,
        flops=card.flops * tp,
        attn_flops=card.attn_flops * tp,
        compute_precision=card.math or mode,
        layers=layers,
        hidden=job.hidden,
        attn_width=job.attn_width,
        attn_width_decode=job.attn_width_decode * mla_head_padding(model, tp),
        # the kernels' gaps, and an MoE layer's routed block's small kernels beside them
        # (and a piecewise-graph runtime's cost per layer of its graph splits)
        launch_s=launch_s,
        gemm_floor_s=layers * job.gemms * decode.gemm_min_us * 1e-6,
        attn_floor_s=layers * decode.attention_min_us * 1e-6,
        host_s=layers * job.host_ops(decode.ops_per_layer) * decode.host_us_per_op * 1e-6,
        scheduler_s=scheduler_s,
        host_per_seq_s=host_per_seq_s,
        serial_per_seq_s=serial_per_seq_s,
        microbatch_tokens=decode.microbatch_tokens if stages > 1 else 0,
        tp_link=tp_link,
        hop_link=hop_link,
        routed_flops_per_row=2.0 * experts / n_experts if grouped else 0.0,
        routed_slowdown=job.routed_slowdown(tp, mode, prefill) * expert_math_slowdown(job, card)
        if grouped
        else 1.0,
        dense_slowdown=job.dense_slowdown(tp, mode, prefill),
        tile_min=max(1, prefill.moe_tile_min) if grouped else 0,
        tile_max=prefill.moe_tile_max if grouped else 0,
        split_attention=1.0 if decode.split_attention else 0.0,
        dequant_s=dequant_seconds(job, prefill, card.bw * tp),
        dequant_min_tokens=float(prefill.dequantize_min_tokens),
        dequant_read_scale=dequant_read_scale(job, prefill),
        mixed_host_s=layers * kernels * mixed_host_us_per_kernel * 1e-6,
        eager_launch_s=eager_launch_s,
        graph_max_tokens=graph_max,
        context_s=layers * prefill.context_layer_us * 1e-6 if session_context else 0.0,
        decode_attn_slowdown=card.mmha_slowdown if job.mmha else 1.0,
        fp4_rel=card.fp4_rel,
        fp4_m0=card.fp4_m0,
        kv_copies=kv_copies(model, tp),
        handoff_bytes=decode.handoff_bytes,
        microbatch_copies=decode.microbatch_copies if stages > 1 else 0,
        stage_share=busiest_stage_share(layers, stages, decode.split_output_unit)
        if decode.microbatch_tokens
        else 0.0,
        fused=card.fused,
        attn_heads=float(model.num_heads or 0),
        sampler_s=sampler_seconds(model, card.bw) * samples_on_gpu(card.decode),
        head_flops=job.head_flops,
        prompt_logits=1.0 if all_prompt_logits(card.prefill.runtime, job.runtime_release) else 0.0,
        row_bytes=job.row_bytes,
    )


def samples_on_gpu(profile: RuntimeProfile) -> float:
    """1 where the runtime samples on the GPU (vLLM, SGLang, TensorRT-LLM, Transformers'
    generate, MLX), 0 where it samples on the host (``HOST_SAMPLING_RUNTIME``)."""
    return 0.0 if profile.runtime == HOST_SAMPLING_RUNTIME else 1.0


def sampler_seconds(model: ModelSpec, bw: float) -> float:
    """The sampler's time per sampled sequence on one GPU of ``bw`` bytes/s: the whole
    vocabulary's logits at ``SAMPLER_BYTES_PER_LOGIT`` (0 where the vocabulary is unknown)."""
    vocab = float(model.vocab_size or 0)
    return vocab * SAMPLER_BYTES_PER_LOGIT / bw if vocab and bw > 0 else 0.0


def _kv_copies_column(model: ModelSpec, tp: NDArray[np.float64], rows: int) -> NDArray[np.float64]:
    """``kv_copies`` for every row's tensor-parallel degree at once."""
    if model.attention == "mla":
        return np.asarray(tp, dtype=np.float64) * np.ones(rows)
    kv = float(model.num_kv_heads or model.num_heads or 1)
    return np.maximum(1.0, np.asarray(tp, dtype=np.float64) / kv) * np.ones(rows)


def expert_math_slowdown(job: ReplicaJob, card: CardTerms) -> float:
    """How much longer the routed experts' GEMM math takes than at the card's rate on the
    weights' own datapath (``card.flops``): a job whose experts multiply at the 16-bit rate
    though stored in an 8-bit format (``ReplicaJob.experts_16bit``: a weight-only FP8 MoE, the
    weights dequantised in the GEMM's main loop and multiplied as FP16, so the FP8 tensor peak
    is never used) runs them at the card's 16-bit tensor rate, the one its attention runs at
    (``card.attn_flops``): twice as long on Hopper and Ada, whose FP8 peak is twice their
    16-bit one. 1 otherwise, and where the weights' datapath is no faster than 16-bit."""
    if not (job.experts_16bit and card.attn_flops > 0.0):
        return 1.0
    return max(1.0, card.flops / card.attn_flops)


def mla_head_padding(model: ModelSpec, tp: float) -> float:
    """How many times over a decode step's attention math runs on a tensor-parallel group of
    ``tp`` GPUs against its heads' own: under latent attention each GPU's share of the query
    heads is padded to ``MLA_HEAD_TILE`` rows (one query token per sequence), so 128 heads
    over 8 GPUs compute as 8 × 64 = 512; 1 for ordinary attention or where every GPU holds a
    full tile or more."""
    heads = model.num_heads or 0
    if model.attention != "mla" or not heads:
        return 1.0
    return max(1.0, MLA_HEAD_TILE * tp / heads)


def eager_gap_us(decode: RuntimeProfile) -> float:
    """What each kernel's gap grows by when a pass runs eagerly on a runtime that replays CUDA
    graphs only for passes of at most ``decode.graph_max_tokens`` tokens: ``eager_kernel_us``
    − ``kernel_us``; 0 where the runtime has one launch policy at every step size."""
    if not decode.graph_max_tokens:
        return 0.0
    return max(0.0, decode.eager_kernel_us - decode.kernel_us)


def layer_kernels(job: ReplicaJob, decode: RuntimeProfile) -> float:
    """The kernels one decoder layer launches on the job's runtime: the layer's own and, where
    the runtime quantises a block-FP8 linear's input apart, ``act_quant_kernels`` a linear."""
    return job.kernels + job.quant_linears * decode.act_quant_kernels


def eager_launch_seconds(layers: float, kernels: float, decode: RuntimeProfile) -> float:
    """The kernel gaps one eager pass over every layer adds (``eager_gap_us`` a kernel)."""
    return layers * kernels * eager_gap_us(decode) * 1e-6


# Where a llama.cpp build replays its one-token CUDA graph (WorkloadSpec.llamacpp_graphs): ""
# today's builds, on one GPU and on a layer split; "one-gpu" builds from PR #6766 (2024-05-08, CUDA
# graphs) to PR #13814 (in master 2025-05-30): with pipeline parallelism on (a layer split with
# every layer offloaded) ggml_backend_sched cycles its n_copies (4) of the split inputs at every
# evaluation, so each token's graph differed from the last and the backend stopped capturing after a
# few updates ("Due to changes in the graph in each evaluation when pipeline parallelism is enabled,
# CUDA graphs could not be used", PR #13814; issue #13751: -sm layer below -sm none until
# GGML_SCHED_MAX_COPIES=1); "none" builds before PR #6766
GRAPH_BUILDS = ("", "one-gpu", "none")


def graph_eager(graphs: str, stages: float) -> bool:
    """Whether a build (``GRAPH_BUILDS``) launches even a one-token pass eagerly on a replica
    of ``stages`` layer-split stages."""
    return graphs == "none" or (graphs == "one-gpu" and stages > 1)


def graph_launch(
    launch_s: float, eager_launch_s: float, graph_max_tokens: float, graphs: str, stages: float
) -> tuple[float, float, float]:
    """(launch_s, eager_launch_s, graph_max_tokens) of a replica whose runtime replays CUDA
    graphs for passes of at most ``graph_max_tokens`` tokens, on a build that replays none on
    this replica (``graph_eager``): every pass pays the eager gaps, one launch policy at every
    step size; unchanged otherwise (and where the runtime has no graph rule)."""
    if graph_max_tokens and graph_eager(graphs, stages):
        return launch_s + eager_launch_s, 0.0, 0.0
    return launch_s, eager_launch_s, graph_max_tokens


def dequant_seconds(job: ReplicaJob, prefill: RuntimeProfile, bw: float) -> float:
    """Seconds of one pass that dequantises a quantised model's weights to FP16 before its
    GEMMs (``RuntimeProfile.dequantize_min_tokens``): the stored weights read and 2 bytes per
    weight written, at the replica's bandwidth ``bw``; 0 for a 16-bit model or a profile
    without such a pass."""
    if not prefill.dequantize_min_tokens or job.wb >= 2.0:
        return 0.0
    return (job.dense + job.experts) * (job.wb + 2.0) / bw


def dequant_read_scale(job: ReplicaJob, prefill: RuntimeProfile) -> float:
    """How many times the stored weights' bytes the GEMMs of a dequantising pass read
    (``dequant_seconds``): they multiply the FP16 copy the pass wrote (llama.cpp's
    ``ggml_cuda_op_mul_mat_cublas`` hands cuBLAS the ``to_fp16_cuda`` buffer), 2 bytes a
    weight; 1 where there is no such pass."""
    if not prefill.dequantize_min_tokens or job.wb >= 2.0:
        return 1.0
    return 2.0 / job.wb


# ---------------------------------------------------------------- many replicas at once


# A column of ``Columns``, or the one value every row shares (``dense_columns``: the job's
# terms), which each array operation broadcasts: the same IEEE operation on every element
Col = NDArray[np.float64] | float


# not frozen: a frozen init sets each of its ~45 fields through object.__setattr__, and a
# request builds two sets (nothing changes one once built)
@dataclass(slots=True)
class Columns:
    """Many replicas' per-step constants as arrays, one element a replica: a request's
    configurations over the catalog stepped at once (``Columns.seconds``) where stepping each
    replica in turn cost most of an answer over a large catalog. Built by ``columns``."""

    reps: tuple[Replica, ...]
    tp: NDArray[np.float64]
    stages: NDArray[np.float64]
    dense_bytes: Col
    moe: NDArray[np.bool_]  # weights read depend on the step's tokens (routed experts)
    flops_per_token: Col
    dense_slowdown: NDArray[np.float64]
    moe_act_bytes: Col
    kv_b: NDArray[np.float64]
    bw: NDArray[np.float64]
    flops: NDArray[np.float64]
    attn_flops: NDArray[np.float64]
    layers: Col
    attn_width: Col
    attn_width_decode: Col
    launch_s: NDArray[np.float64]
    gemm_floor_s: NDArray[np.float64]
    attn_floor_s: NDArray[np.float64]
    host_s: NDArray[np.float64]
    scheduler_s: Col
    host_per_seq_s: Col
    serial_per_seq_s: Col
    mixed_host_s: Col
    eager_launch_s: NDArray[np.float64]
    graph_max_tokens: NDArray[np.float64]
    microbatch_tokens: NDArray[np.float64]
    microbatch_copies: NDArray[np.float64]
    stage_share: NDArray[np.float64]  # ``Replica.stage_share``
    dequant_s: NDArray[np.float64]
    dequant_min_tokens: NDArray[np.float64]
    dequant_read_scale: NDArray[np.float64]
    context_s: NDArray[np.float64]
    split_attention: NDArray[np.float64]
    decode_attn_slowdown: Col
    fp4_rel: NDArray[np.float64]
    fp4_m0: NDArray[np.float64]
    kv_copies: NDArray[np.float64]
    sampler_s: NDArray[np.float64]
    head_flops: Col
    prompt_logits: NDArray[np.float64]
    row_bytes: Col
    linked: NDArray[np.bool_]  # GPUs joined by links: the step moves bytes between them
    # every row's K+V values per sequence at a mean context
    kv_values: Callable[[float], Col]
    # a linked row's GPU-to-GPU seconds for a step of so many tokens whose LM head multiplies
    # so many rows (``Replica.comm``)
    comm_of: Callable[[int, float, float], float]
    # every row's prompt attention seconds for (prompt tokens, prompt length), the step's or
    # each row's own (``Replica.prompt_attention_s``)
    prompt_attn: Callable[[Col, float], NDArray[np.float64]]

    def seconds(
        self, decode: float, context: float, prefill: float, prompt: float
    ) -> NDArray[np.float64]:
        """Every replica's ``Replica.parts(...).seconds``, to the last bit: the same float64
        operations in the same order, elementwise (IEEE +, −, ×, ÷ and max are exact in
        numpy as in Python); the terms that need Python (a routed model's linear layers, the
        KV values by context, links) are each replica's own methods."""
        return self._step(decode, context, prefill, prompt).seconds

    def parts(self, decode: float, context: float, prefill: float, prompt: float) -> StepColumns:
        """Every replica's ``Replica.parts(...)`` (a step that is a server's average one), to
        the last bit as ``seconds``, but what bounds it: its times as columns."""
        t = self._step(decode, context, prefill, prompt)
        floors = t.t_gemm - t.t_mm + t.t_attn - t.t_a
        compute = t.t_lin + t.t_att
        memory = t.t_w + t.t_deq + t.t_moe + t.t_kv
        launch = t.launch + floors + t.t_ctx
        if not isinstance(t.passes, float):  # else 1.0: × 1.0 changes no value
            compute, memory, launch = compute * t.passes, memory * t.passes, launch * t.passes
        return StepColumns(
            seconds=t.seconds,
            gpu_s=t.gpu,
            compute_s=compute,
            memory_s=memory,
            launch_s=launch,
            host_s=t.host,
            comm_s=t.comm,
        )

    def _step(self, decode: float, context: float, prefill: float, prompt: float) -> _Terms:
        """``Replica.parts``'s terms, elementwise."""
        tokens = decode + prefill
        mb = self.microbatch_tokens
        # a row with micro-batches (a layer split's) splits a step of more tokens than they hold
        split = (mb > 0) & (tokens > mb) if mb.any() else None
        u: NDArray[np.float64] | float
        d: NDArray[np.float64] | float
        f: NDArray[np.float64] | float
        passes: NDArray[np.float64] | float
        if split is not None and split.any():
            u = np.where(split, np.ceil(tokens / np.where(split, mb, 1.0)), 1.0)
            d, f = decode / u, prefill / u
            passes = pipeline_passes_array(u, self.stages, self.microbatch_copies, self.stage_share)
        else:
            # no row splits its tokens into micro-batches (most: one stage): every row takes
            # the step's own tokens in one pass (u = 1, so decode ÷ u is decode and
            # pipeline_passes is 1.0 exactly), kept as Python floats that each array operation
            # below broadcasts, element by element the same IEEE operations
            u, d, f, passes = 1.0, decode, prefill, 1.0
        t_w = self.dense_bytes / self.bw
        # the terms a row rarely has (a dequantising pass, every prompt token's logits) are
        # worked out only where some row has them: 0 elsewhere, as their rules give it
        dequantises = bool(self.dequant_s.any())
        if dequantises:
            deq = (self.dequant_s != 0.0) & (d + f > self.dequant_min_tokens)
            if deq.any():  # a pass that dequantises reads the FP16 copy (``Replica.linear``)
                t_w = np.where(deq, t_w * self.dequant_read_scale, t_w)
        # the LM head's rows (``Replica.rows``): every decode, and every prompt token or each
        # prompt's last
        last = f / prompt if prefill and prompt else 0.0
        logits = self.prompt_logits
        rows = d + (np.where(logits != 0.0, f, last) if logits.any() else last)
        flops = (d + f) * self.flops_per_token + rows * self.head_flops
        t_lin = flops * self.dense_slowdown / self.flops
        if self.fp4_rel.any():  # the step's M lifts an fp4 GEMM's rate (fp4_m_gain): ÷ 1 else
            t_lin = t_lin / np.maximum(1.0, self.fp4_rel * ((d + f) / ((d + f) + self.fp4_m0)))
        t_mm = np.maximum(t_w, t_lin)
        routed = np.flatnonzero(self.moe).tolist() if self.moe.any() else []
        for i in routed:
            t_w[i], t_lin[i], t_mm[i] = self.reps[i].linear_step(_at(d, i), _at(f, i), prompt)
        t_moe = (d + f) * (self.moe_act_bytes + self.row_bytes) / self.bw
        if decode:
            kv = self.kv_values(context)
            t_kv = d * kv * self.kv_b * self.kv_copies / self.bw
        else:
            t_kv = np.zeros(len(self.bw))
        att_p = self.prompt_attn(f, prompt)
        t_att = (
            4.0 * self.layers * self.attn_width_decode * d * context * self.decode_attn_slowdown
        ) / self.attn_flops + att_p
        t_a = np.maximum(t_kv, t_att)
        if decode and prefill and self.split_attention.any():
            att_d = 4.0 * self.layers * (self.attn_width_decode * d * context) / self.attn_flops
            t_a = np.where(self.split_attention != 0.0, np.maximum(t_kv, att_d) + att_p, t_a)
        t_gemm = np.maximum(t_mm, self.gemm_floor_s)
        for i in routed:
            t_gemm[i] = self.reps[i].gemm_time(float(t_mm[i]), _at(d, i), _at(f, i), prompt)
        t_attn = np.maximum(t_a, self.attn_floor_s)
        t_deq = (
            np.where(d + f > self.dequant_min_tokens, self.dequant_s, 0.0) if dequantises else 0.0
        )
        t_ctx = self.context_s if prefill and not decode else np.zeros(len(self.context_s))
        launch = self.launch_s
        gmt = self.graph_max_tokens
        if gmt.any():  # a row whose runtime replays CUDA graphs only for short passes
            launch = launch + np.where((gmt > 0.0) & (d + f > gmt), self.eager_launch_s, 0.0)
        work = t_gemm + t_deq + t_moe + t_attn + launch + t_ctx
        if not isinstance(passes, float):
            work = work * passes
        comm = np.zeros(len(work))
        linked = np.flatnonzero(self.linked).tolist()
        if linked:
            # the LM head's rows of the whole step (``Replica.rows``), each row's runtime's
            every = self.prompt_logits.tolist()
            for k in linked:
                comm[k] = self.comm_of(
                    k, tokens, logit_rows(decode, prefill, prompt, bool(every[k]))
                )
        t_smp = (decode + (prefill / prompt if prefill and prompt else 0.0)) * self.sampler_s
        gpu = work + comm + t_smp
        seqs = decode + (math.ceil(prefill / prompt) if prefill and prompt else 0.0)
        host = np.maximum(
            self.host_s if isinstance(u, float) else self.host_s * u,
            seqs * self.host_per_seq_s + mixed_share(prefill, prompt) * self.mixed_host_s,
        )
        seconds = np.maximum(gpu, host) + self.scheduler_s + seqs * self.serial_per_seq_s
        return _Terms(
            t_w, t_lin, t_mm, t_moe, t_kv, t_att, t_a, t_gemm, t_attn, t_deq, t_ctx, passes,
            comm, gpu, host, seconds, launch, t_smp,
        )  # fmt: skip


def _at(x: NDArray[np.float64] | float, i: int) -> float:
    """Row ``i`` of a step's column, or the step's own value where every row shares it."""
    return float(x[i]) if isinstance(x, np.ndarray) else float(x)


class _Terms(NamedTuple):
    """A step's terms over many replicas (``Columns._step``), named as ``Replica.parts``
    names them."""

    t_w: NDArray[np.float64]
    t_lin: NDArray[np.float64]
    t_mm: NDArray[np.float64]
    t_moe: NDArray[np.float64]
    t_kv: NDArray[np.float64]
    t_att: NDArray[np.float64]
    t_a: NDArray[np.float64]
    t_gemm: NDArray[np.float64]
    t_attn: NDArray[np.float64]
    t_deq: NDArray[np.float64] | float
    t_ctx: NDArray[np.float64]
    passes: NDArray[np.float64] | float  # 1.0: no row splits its tokens into micro-batches
    comm: NDArray[np.float64]
    gpu: NDArray[np.float64]
    host: NDArray[np.float64]
    seconds: NDArray[np.float64]
    launch: NDArray[np.float64]  # the kernel gaps of one pass (eager where graphs do not cover it)
    t_smp: NDArray[np.float64]  # the sampler, once per step


class StepColumns(NamedTuple):
    """``StepTime`` of many replicas as columns (``Columns.parts``), without what bounds it."""

    seconds: NDArray[np.float64]
    gpu_s: NDArray[np.float64]
    compute_s: NDArray[np.float64]
    memory_s: NDArray[np.float64]
    launch_s: NDArray[np.float64]
    host_s: NDArray[np.float64]
    comm_s: NDArray[np.float64]


# The fields ``columns`` reads, in one C call per replica (a getattr per field and replica
# cost more than the step arithmetic it feeds)
_FIELDS = (
    "tp", "stages", "dense_bytes", "expert_bytes", "flops_per_token", "dense_slowdown",
    "moe_act_bytes", "kv_b",
    "bw", "flops", "attn_flops", "layers", "attn_width", "attn_width_decode", "launch_s",
    "gemm_floor_s", "attn_floor_s", "host_s", "scheduler_s", "host_per_seq_s", "serial_per_seq_s",
    "mixed_host_s",
    "eager_launch_s", "graph_max_tokens", "microbatch_tokens", "microbatch_copies", "stage_share",
    "dequant_s", "dequant_min_tokens",
    "dequant_read_scale", "context_s", "split_attention", "decode_attn_slowdown", "kv_copies",
    "fp4_rel", "fp4_m0", "sampler_s", "head_flops", "prompt_logits",
    "row_bytes",
)  # fmt: skip
_READ = attrgetter(*_FIELDS)


def columns(reps: Sequence[Replica]) -> Columns:
    """``reps`` as one ``Columns``."""
    flat = np.fromiter(chain.from_iterable(map(_READ, reps)), np.float64, len(reps) * len(_FIELDS))
    c = dict(zip(_FIELDS, flat.reshape(len(reps), len(_FIELDS)).T, strict=True))
    # a replica moves bytes between GPUs only over a link (the bound's replicas have none)
    linked = (c["tp"] > 1) | (c["stages"] > 1)
    for i in np.flatnonzero(linked).tolist():
        linked[i] = reps[i].tp_link.kind != "none" or reps[i].hop_link.kind != "none"
    return Columns(
        reps=tuple(reps),
        tp=c["tp"],
        stages=c["stages"],
        dense_bytes=c["dense_bytes"],
        moe=c["expert_bytes"] != 0.0,
        flops_per_token=c["flops_per_token"],
        dense_slowdown=c["dense_slowdown"],
        moe_act_bytes=c["moe_act_bytes"],
        kv_b=c["kv_b"],
        bw=c["bw"],
        flops=c["flops"],
        attn_flops=c["attn_flops"],
        layers=c["layers"],
        attn_width=c["attn_width"],
        attn_width_decode=c["attn_width_decode"],
        launch_s=c["launch_s"],
        gemm_floor_s=c["gemm_floor_s"],
        attn_floor_s=c["attn_floor_s"],
        host_s=c["host_s"],
        scheduler_s=c["scheduler_s"],
        host_per_seq_s=c["host_per_seq_s"],
        serial_per_seq_s=c["serial_per_seq_s"],
        mixed_host_s=c["mixed_host_s"],
        eager_launch_s=c["eager_launch_s"],
        graph_max_tokens=c["graph_max_tokens"],
        microbatch_tokens=c["microbatch_tokens"],
        microbatch_copies=c["microbatch_copies"],
        stage_share=c["stage_share"],
        dequant_s=c["dequant_s"],
        dequant_min_tokens=c["dequant_min_tokens"],
        dequant_read_scale=c["dequant_read_scale"],
        context_s=c["context_s"],
        split_attention=c["split_attention"],
        decode_attn_slowdown=c["decode_attn_slowdown"],
        fp4_rel=c["fp4_rel"],
        fp4_m0=c["fp4_m0"],
        kv_copies=c["kv_copies"],
        sampler_s=c["sampler_s"],
        head_flops=c["head_flops"],
        prompt_logits=c["prompt_logits"],
        row_bytes=c["row_bytes"],
        linked=linked,
        kv_values=lambda context: np.fromiter(
            (r.kv_at(context) for r in reps), np.float64, len(reps)
        ),
        comm_of=lambda i, tokens, rows: reps[i].comm(tokens, rows),
        prompt_attn=lambda f, prompt: np.fromiter(
            (r.prompt_attention_s(_at(f, i), prompt) for i, r in enumerate(reps)),
            np.float64,
            len(reps),
        ),
    )


@dataclass(frozen=True, slots=True)
class CardRows:
    """Cards' terms as one array, a row per card (``card_rows``): what ``dense_columns`` reads
    of each card, built once per catalog snapshot where a caller keeps it (app/domain/fleet.py)
    rather than card by card in every request."""

    terms: tuple[CardTerms, ...]
    values: NDArray[np.float64]  # (cards, 22): the terms card_rows reads, in its order
    k_rule: NDArray[np.bool_]  # the card's prefill has a GEMM K-depth rule (dense_slowdown)
    # each card's K-depth rule as an index into ``rules`` (-1: none): the (datapath, prefill
    # profile) dense_slowdown reads, one per distinct (datapath, K overhead, K reference)
    rule: NDArray[np.intp]
    rules: tuple[tuple[str, RuntimeProfile], ...]
    dequant_min_tokens: NDArray[np.float64]  # the prefill's dequantize_min_tokens
    dequantises: bool  # some card's prefill dequantises (dequant_seconds)
    context_layer_us: NDArray[np.float64]  # the prefill's context_layer_us


def _stage_share_column(
    layers: int,
    stages: NDArray[np.float64],
    microbatch: NDArray[np.float64],
    output_unit: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``busiest_stage_share`` per row: 0 where the row runs no pipelined micro-batches."""
    out = np.zeros(len(stages))
    piped = (stages > 1) & (microbatch > 0.0)
    if piped.any():
        idx = np.flatnonzero(piped).tolist()
        keys = list(zip(stages[idx].tolist(), output_unit[idx].tolist(), strict=True))
        got = {k: busiest_stage_share(layers, int(k[0]), k[1] > 0.0) for k in set(keys)}
        out[idx] = [got[k] for k in keys]
    return out


def card_rows(cards: Sequence[CardTerms]) -> CardRows:
    """``cards`` as one ``CardRows``."""
    values = np.array(
        [
            (
                t.bw, t.flops, t.attn_flops, t.decode.kernel_us, t.decode.gemm_min_us,
                t.decode.attention_min_us, t.decode.ops_per_layer, t.decode.span == "tensor",
                t.decode.microbatch_tokens, t.decode.host_us_per_op, t.decode.moe_block_us,
                t.decode.kv_traffic, 1.0 if t.decode.split_attention else 0.0, t.mmha_slowdown,
                float(t.decode.graph_max_tokens), eager_gap_us(t.decode),
                t.decode.graph_split_us, t.fp4_rel, t.fp4_m0, samples_on_gpu(t.decode),
                t.decode.microbatch_copies, 1.0 if t.decode.split_output_unit else 0.0,
                t.decode.act_quant_kernels,
            )
            for t in cards
        ],
        np.float64,
    ).reshape(len(cards), 23)  # fmt: skip
    k_rule = np.array(
        [bool(t.prefill.gemm_k_overhead_bytes and t.prefill.gemm_k_ref_bytes) for t in cards],
        bool,
    )
    groups: dict[tuple[str, float, float], int] = {}
    rules: list[tuple[str, RuntimeProfile]] = []
    rule = np.full(len(cards), -1, np.intp)
    for i in np.flatnonzero(k_rule).tolist():
        t = cards[i]
        key = (t.mode, t.prefill.gemm_k_overhead_bytes, t.prefill.gemm_k_ref_bytes)
        if key not in groups:
            groups[key] = len(rules)
            rules.append((t.mode, t.prefill))
        rule[i] = groups[key]
    return CardRows(
        tuple(cards),
        values,
        k_rule,
        rule,
        tuple(rules),
        np.array([float(t.prefill.dequantize_min_tokens) for t in cards], np.float64),
        any(t.prefill.dequantize_min_tokens for t in cards),
        np.array([t.prefill.context_layer_us for t in cards], np.float64),
    )


def _dequant_column(
    job: ReplicaJob, cards: CardRows, card: NDArray[np.intp], tp: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``dequant_seconds`` of each row (0 where no card dequantises)."""
    out = np.zeros(len(card))
    if not cards.dequantises:
        return out
    for i, (c, t) in enumerate(zip(card.tolist(), tp.tolist(), strict=True)):
        out[i] = dequant_seconds(job, cards.terms[c].prefill, cards.terms[c].bw * t)
    return out


def _dequant_scale_column(
    job: ReplicaJob, cards: CardRows, card: NDArray[np.intp]
) -> NDArray[np.float64]:
    """``dequant_read_scale`` of each row (1 where no card dequantises)."""
    if not cards.dequantises:
        return np.ones(len(card))
    scale = [dequant_read_scale(job, t.prefill) for t in cards.terms]
    return np.array([scale[c] for c in card.tolist()], np.float64)


def _prompt_logits_column(
    job: ReplicaJob, cards: CardRows, card: NDArray[np.intp]
) -> NDArray[np.float64]:
    """``all_prompt_logits`` of each row's card runtime at the job's release, 1.0 or 0.0: the
    release is the job's (a GPU-independent term), read once; an unstated one (most jobs) is
    a current release, which keeps each prompt's last token on every runtime."""
    stated = _release(job.runtime_release)
    if stated is None:
        return np.zeros(len(card))
    every = [_all_prompt_logits(t.prefill.runtime, stated) for t in cards.terms]
    return np.array(every, np.float64)[card]


def dense_columns(
    job: ReplicaJob,
    cards: CardRows,
    card: NDArray[np.intp],
    n: NDArray[np.float64],
    gpus: Sequence[GpuSpec] | None = None,
) -> Columns:
    """``columns`` of the replicas ``replica(..., job=job, card=cards.terms[c], links=False)``
    on ``n`` GPUs for each row's card ``c`` (a model without routed experts), built from the
    cards' terms and the counts as arrays instead of replica by replica: the same values,
    since every term is the same product in the same order (a count multiplies a card's
    rate last). No row moves bytes between GPUs, unless ``gpus`` names each row's GPU: then
    the replicas are ``replica(..., links=True)``'s, joined by that GPU's links."""
    if job.experts:
        raise ValueError("dense_columns: a model with routed experts steps replica by replica")
    per_card = cards.values[card]
    tensor = per_card[:, 7] != 0.0
    one = n <= 1
    # span(): tensor parallel inside a server, stages beyond it; a layer split is n stages
    tp = np.where(tensor & ~one, np.minimum(n, float(topology.NODE_GPUS)), 1.0)
    stages = np.where(one, 1.0, np.where(tensor, np.maximum(1.0, np.floor(n / tp)), n))
    rows = len(n)
    slow = np.ones(rows)
    ruled = np.flatnonzero(cards.k_rule[card])
    if len(ruled):
        # one dense_slowdown per distinct (K-depth rule, tensor-parallel GPUs) of the rows
        # (tp is a whole number of GPUs, at most NODE_GPUS); a dict, not np.unique's sort
        width = topology.NODE_GPUS + 1
        pairs = (cards.rule[card[ruled]] * width + tp[ruled].astype(np.intp)).tolist()
        got = {p: job.dense_slowdown(p % width, *cards.rules[p // width]) for p in set(pairs)}
        slow[ruled] = [got[p] for p in pairs]
    kv = job.kv_at
    linked = np.zeros(rows, bool)
    links: dict[int, tuple[int, int, topology.Link, topology.Link, float]] = {}
    if gpus is not None:
        # replica()'s links: the tensor-parallel group's, and the hop between stages
        linked = (tp > 1) | (stages > 1)
        # each row's terms read as Python numbers once (an array's element is a slow read)
        tps, sts, ns, on = tp.tolist(), stages.tolist(), n.tolist(), card.tolist()
        for i in np.flatnonzero(linked).tolist():
            g, t, st, dec = gpus[i], int(tps[i]), int(sts[i]), cards.terms[on[i]].decode
            hop = stage_link(g, int(ns[i]), st, dec)
            tp_link = topology.link(g, t)
            links[i] = (t, st, tp_link, hop, dec.handoff_bytes)
            if tp_link.kind == "none" and hop.kind == "none":
                linked[i] = False
    hidden, n_layers = job.hidden, job.layers
    # replica()'s replicated latent projections, per row's tensor-parallel GPUs (none: 0.0)
    rep_bytes: Col = 0.0
    rep_flops: Col = 0.0
    if job.replicated:
        copies = job.replicated * np.maximum(0.0, tp - 1.0)
        rep_bytes, rep_flops = copies * (job.expert_wb or job.wb), 2.0 * copies

    vocab = float(job.model.vocab_size or 0)

    def comm_of(i: int, tokens: float, rows: float) -> float:
        return step_comm(tokens, hidden, n_layers, *links[i], rows, vocab)

    # replica()'s prompt attention (``prompt_attention_seconds``): the unfused rows' as one
    # array expression, each fused row's by its card and tensor-parallel GPUs
    attn_col = per_card[:, 2] * tp
    q_heads, q_width, terms = float(job.model.num_heads or 0), float(job.attn_width), cards.terms
    # prompt_attention_seconds' fused branch with its per-row arguments (the row's heads per
    # GPU) worked out once, not once a step: a call per fused row and step had been a third
    # of the columns' step. Its unfused branch (no heads, or no prompt token on the row) is
    # the array expression's own value, so those rows keep it.
    fused_at = (
        [
            (i, fz, q_heads / t)
            for i, (c, t) in enumerate(zip(card.tolist(), tp.tolist(), strict=True))
            if (fz := terms[c].fused) is not None
        ]
        if q_heads
        else []
    )
    head_dim = q_width / q_heads if q_heads else 0.0
    n_layers = job.layers

    def prompt_attn(f: Col, prompt: float) -> NDArray[np.float64]:
        out = 4.0 * float(job.layers) * (q_width * f * prompt / 2.0) / attn_col
        if not (prompt and np.any(f)):
            return out  # no prompt token in the step: 0 on every row, fused or not
        if isinstance(f, np.ndarray):
            fs = f.tolist()
            for i, fz, heads in fused_at:
                if fs[i]:
                    out[i] = n_layers * _fused_layer_s(fz, heads, head_dim, fs[i], prompt)
            return out
        pf = float(f)  # every row's prompt tokens
        for i, fz, heads in fused_at:
            out[i] = n_layers * _fused_layer_s(fz, heads, head_dim, pf, prompt)
        return out

    # replica()'s per-pass costs, the same products in the same order
    layers = float(job.layers)
    kernels = job.kernels + job.quant_linears * per_card[:, 22]  # layer_kernels
    launch = layers * (kernels * per_card[:, 3] + per_card[:, 16]) * 1e-6
    eager_s = layers * kernels * per_card[:, 15] * 1e-6
    # graph_launch(): a build that replays no graph on these stages pays the eager gaps always
    off = np.full(rows, job.graphs == "none") | ((job.graphs == "one-gpu") & (stages > 1))
    eager = (per_card[:, 14] > 0.0) & off
    return Columns(
        reps=(),
        tp=tp,
        stages=stages,
        dense_bytes=float(job.dense_read) + rep_bytes,
        moe=np.zeros(rows, bool),
        flops_per_token=float(job.flops_per_token) + rep_flops,
        dense_slowdown=slow,
        moe_act_bytes=float(job.moe_act_bytes),
        kv_b=job.kv_b * job.kv_traffic(per_card[:, 11]),
        bw=per_card[:, 0] * tp,
        flops=per_card[:, 1] * tp,
        attn_flops=per_card[:, 2] * tp,
        layers=layers,
        attn_width=float(job.attn_width),
        attn_width_decode=job.attn_width_decode
        * np.maximum(1.0, MLA_HEAD_TILE * tp / (job.model.num_heads or 1))
        if job.model.attention == "mla" and job.model.num_heads
        else float(job.attn_width_decode),
        launch_s=launch + np.where(eager, eager_s, 0.0),
        gemm_floor_s=layers * job.gemms * per_card[:, 4] * 1e-6,
        attn_floor_s=layers * per_card[:, 5] * 1e-6,
        host_s=layers * job.host_ops(per_card[:, 6]) * per_card[:, 9] * 1e-6,
        scheduler_s=0.0,
        host_per_seq_s=0.0,
        serial_per_seq_s=0.0,
        mixed_host_s=0.0,
        eager_launch_s=np.where(eager, 0.0, eager_s),
        graph_max_tokens=np.where(eager, 0.0, per_card[:, 14]),
        microbatch_tokens=np.where(stages > 1, per_card[:, 8], 0.0),
        microbatch_copies=np.where(stages > 1, per_card[:, 20], 0.0),
        stage_share=_stage_share_column(job.layers, stages, per_card[:, 8], per_card[:, 21]),
        dequant_s=_dequant_column(job, cards, card, tp),
        dequant_min_tokens=cards.dequant_min_tokens[card],
        dequant_read_scale=_dequant_scale_column(job, cards, card),
        context_s=layers * cards.context_layer_us[card] * 1e-6,
        split_attention=per_card[:, 12],
        decode_attn_slowdown=per_card[:, 13] if job.mmha else 1.0,
        fp4_rel=per_card[:, 17],
        fp4_m0=per_card[:, 18],
        kv_copies=_kv_copies_column(job.model, tp, rows),
        sampler_s=float(job.model.vocab_size or 0)
        * SAMPLER_BYTES_PER_LOGIT
        / per_card[:, 0]
        * per_card[:, 19]
        if job.model.vocab_size
        else np.zeros(rows),
        head_flops=float(job.head_flops),
        prompt_logits=_prompt_logits_column(job, cards, card),
        row_bytes=float(job.row_bytes),
        linked=linked,
        kv_values=kv,  # the job's: every row's the same
        comm_of=comm_of,
        prompt_attn=prompt_attn,
    )

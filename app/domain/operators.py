"""A model as a table of operators: what one step runs, with shapes, FLOPs and bytes.

Transformers resolve from their config shape (``transformer_ops``); CNN and UNet presets from a
shipped per-sample forward table (``data/operators/<preset>.yaml``, read by ``parse_table`` and
scaled to a batch by ``table_ops``). Training adds each operator's backward (``backward_ops``)
and the optimizer update (``optimizer_op``). ``app.domain.kernels`` prices the table on a GPU.

Conventions: FLOPs are 2 × multiply-adds (torch.utils.flop_counter); bytes are what a kernel
reads from and writes to device memory when nothing is fused (a fusing runtime drops the ops
whose ``role`` it folds into a neighbour). Every count is for the whole batch; ``count`` is how
many times the op runs per step (layers × ...). Formulas and their sources:
docs/methodology.md §5.8.

Pure: no file access, no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from app.domain.activations import gated_mlp, mixed_bytes

if TYPE_CHECKING:  # workload.ModelSpec carries a ForwardTable: no import at run time
    from app.domain.workload import ModelSpec

# Kernel classes (app.domain.kernels prices each with its own efficiency curve).
GEMM = "gemm"
ATTN_FLASH = "attn_flash"
ATTN_FLASH_BWD = "attn_flash_bwd"
CONV = "conv"  # dense convolution as an implicit GEMM (cuDNN)
CONV_DW = "conv_dw"  # depthwise / narrow-group convolution: no tensor-core tile to fill
# dense 3×3 stride-1 convolution: an implicit GEMM, or Winograd where the runtime's cuDNN
# autotuner finds that faster (``kernels.class_rates``, ``winograd``)
CONV_3X3 = "conv_3x3"
CONVS = (CONV, CONV_3X3)
# a convolution of an NCHW network that cuDNN's autotuner runs on the CUDA cores over the tensors
# as they are (an implicit GEMM, FP32 math, no layout transforms) because the tensor-core kernel
# and its transforms would take longer (``perf._autotuned_nchw``)
CONV_NCHW = "conv_nchw"
MEMORY = "memory"  # element-wise, normalisation, pooling, softmax, embedding, optimizer

# Roles of memory-bound ops, the unit a runtime's fusion policy names (efficiency.yaml `fuse`).
# "bn": inference batch normalisation, an affine map an engine folds into the conv's weights.
# "layout": cuDNN's NCHW↔NHWC transforms around a tensor-core convolution (``nchw_transposes``);
# "layout_3x3" those around a 3×3 stride-1 one, which a Winograd algorithm on the CUDA cores
# reads in NCHW directly (no transforms where the autotuner picks it).
# "split": an element-wise op that eager code runs as two kernels and a fused kernel as one
# (SiLU before the gate product): a runtime with its own fused kernel (Megatron's bias-SwiGLU)
# drops the extra one and keeps the fused op, whose role is "act".
# "fp8": Transformer Engine's FP8 cast(-transpose) passes (``fp8_cast_ops``): no runtime fuses
# them away.
# "relayout": eager PyTorch's CUDA group norm on a channels-last tensor: the NCHW copy of its
# input it makes and the channels-last copy of its (NCHW) output the next convolution makes
# (``table_ops``, ``group_norm_relayout``); no runtime's fusion names it.
ROLES = (
    "norm", "bn", "act", "residual", "dropout", "softmax", "copy", "cast", "pool", "embed", "loss",
    "layout", "layout_3x3", "split", "fp8", "relayout",
)  # fmt: skip
LAYOUT_ROLES = ("layout", "layout_3x3")

# FlashAttention-2's backward runs five matmuls to the forward's two, recomputing the scores:
# 2.5 × the forward FLOPs (Dao 2023, §3.1-3.2).
FLASH_BWD_FLOPS = 2.5
DROPOUT_MASK_BYTES = 1.0  # PyTorch keeps dropout masks as bool tensors (1 byte per element)


# The phase of a diffusion pipeline's VAE decode ops: run once after the denoising loop, bound
# by their own GPU time or host dispatch (perf.phased_step)
DECODE_PHASE = "decode"
# A float32 decode's convolutions (perf._decode_ops) in the two forms cuDNN runs them, one
# dropped per GPU: on TF32 tensor cores where the part has them (PyTorch's default
# torch.backends.cudnn.allow_tf32 = True), at half the 16-bit rate (every NVIDIA part's
# catalog tf32 figure is half its fp16 one: TF32_PER_16BIT), else (Volta, Turing) on the
# CUDA cores at the FP32 rate (class CONV_NCHW)
UPCAST_TF32 = "upcast_tf32"
UPCAST_FP32 = "upcast_fp32"
TF32_PER_16BIT = 2.0


# Plain, not frozen: a step builds hundreds per job variant, and a frozen dataclass costs several
# times as much to build (object.__setattr__ per field). Nothing changes an op once built.
@dataclass(slots=True)
class Op:
    """One operator of a step. ``flops`` and bytes are per run; the step runs it ``count``
    times. GEMM ops carry (m, n, k) and ``batch`` (independent GEMMs in one launch, e.g. heads);
    attention ops carry their heads and lengths; convolutions their implicit-GEMM (m, n, k)
    and ``in_channels`` (the stem's 3 channels pad the tensor-core tile)."""

    kind: str  # gemm | attention | conv | norm | elementwise | pool | softmax | embedding | ...
    name: str
    klass: str  # kernel class, above
    count: float
    flops: float
    bytes_read: float
    bytes_written: float
    dtype: str = "bf16"
    role: str = ""  # for memory-bound ops: which fusion removes it ("" = never fused)
    phase: str = "fwd"  # fwd | bwd | opt | decode (DECODE_PHASE)
    m: float = 0.0
    n: float = 0.0
    k: float = 0.0
    batch: float = 1.0
    in_channels: float = 0.0

    @property
    def bytes(self) -> float:
        return self.bytes_read + self.bytes_written

    @property
    def total_flops(self) -> float:
        return self.flops * self.count


_OP_FIELDS = (
    "kind", "name", "klass", "count", "flops", "bytes_read", "bytes_written", "dtype", "role",
    "phase", "m", "n", "k", "batch", "in_channels",
)  # fmt: skip


_OP_VALUES = attrgetter(*_OP_FIELDS)
_OP_INDEX = {f: i for i, f in enumerate(_OP_FIELDS)}


def derive(op: Op, **changes: Any) -> Op:
    """``op`` with ``changes``: dataclasses.replace without its per-call field introspection
    (a step's backward derives hundreds of ops, once per job variant of every request)."""
    values = list(_OP_VALUES(op))
    for f, v in changes.items():
        values[_OP_INDEX[f]] = v
    return Op(*values)


def gemm(
    name: str,
    m: float,
    n: float,
    k: float,
    *,
    count: float = 1.0,
    act_b: float = 2.0,
    w_b: float | None = None,
    batch: float = 1.0,
    dtype: str = "bf16",
    phase: str = "fwd",
) -> Op:
    """C[m,n] = A[m,k] · B[k,n]: 2mnk FLOPs; A and C at the activation width, B at ``w_b``
    (a weight's stored bytes; ``None`` = the activation width, for activation × activation)."""
    wb = act_b if w_b is None else w_b
    return Op(
        "gemm",
        name,
        GEMM,
        count,
        2.0 * m * n * k * batch,
        batch * (m * k * act_b + k * n * wb),
        batch * m * n * act_b,
        dtype,
        "",
        phase,
        m,
        n,
        k,
        batch,
    )


def memory_op(
    kind: str,
    name: str,
    role: str,
    elements_in: float,
    elements_out: float,
    *,
    count: float = 1.0,
    act_b: float = 2.0,
    extra_write: float = 0.0,
    flops_per_element: float = 0.0,
    dtype: str = "bf16",
) -> Op:
    return Op(
        kind,
        name,
        MEMORY,
        count,
        flops_per_element * elements_in,
        elements_in * act_b,
        elements_out * act_b + extra_write,
        dtype,
        role,
    )


def attention(
    name: str,
    *,
    tokens_q: float,
    q_len: float,
    kv_len: float,
    heads: float,
    head_dim: float,
    kv_heads: float,
    count: float,
    act_b: float,
    causal: bool,
    flash: bool,
    dtype: str = "bf16",
    dropout: bool = False,
    softmax_b: float | None = None,
    fused_softmax: bool = False,
) -> list[Op]:
    """Scaled dot-product attention for ``tokens_q`` query tokens in sequences of ``q_len``.

    FLOPs: QKᵀ and AV, 2 · 2 · q · kv · d per head (halved when causal for a fused kernel,
    which skips the masked blocks). Flash (fused) kernels read Q, K, V and write O once, and
    apply the probability dropout inside. The math path is what eager PyTorch runs for
    ``softmax(QKᵀ/√d + mask) · V`` (DeepLearningExamples' and Hugging Face's BERT): copies of
    the permuted heads, two batched GEMMs, and a chain of element-wise passes over the score
    matrix (scale, mask, softmax, dropout, and a cast back when the softmax ran in fp32).
    ``fused_softmax``: Megatron-LM's attention before Transformer Engine (``CoreAttention``,
    megatron/model/transformer.py): ``baddbmm`` on strided views of the [s, b, np, hn] heads (no
    copy in), the whole score matrix, Megatron's fused scale-mask-softmax kernel (one pass,
    16-bit in and out), the attention-probability dropout as a kernel of its own (role "",
    which no runtime's fusion removes; ``dropout``), ``bmm`` with V and the context permuted
    back to [s, b, h] (a copy)."""
    seqs = tokens_q / max(q_len, 1.0)
    frac = 0.5 if causal and q_len == kv_len else 1.0
    core = 4.0 * q_len * kv_len * head_dim * heads * seqs * frac
    q_el = tokens_q * heads * head_dim
    kv_el = 2.0 * seqs * kv_len * kv_heads * head_dim
    if flash:
        return [
            Op(
                "attention",
                name,
                ATTN_FLASH,
                count,
                core,
                (q_el + kv_el) * act_b,
                q_el * act_b,
                dtype,
                "",
                "fwd",
                q_len,
                kv_len,
                head_dim,
                seqs * heads,
            )
        ]
    # the math path computes the whole score matrix, masked or not
    scores = seqs * heads * q_len * kv_len
    b = seqs * heads
    sb = softmax_b or act_b
    kw: dict[str, Any] = {"count": count, "act_b": act_b, "dtype": dtype}
    if fused_softmax:
        return _megatron_core_attention(name, q_len, kv_len, head_dim, b, q_el, dropout, kw)
    ops = [
        # bmm needs the heads contiguous: permuted Q, K, V are copied first
        memory_op("elementwise", f"{name}.heads_copy", "copy", q_el + kv_el, q_el + kv_el, **kw),
        gemm(f"{name}.qk", q_len, kv_len, head_dim, batch=b, **kw),
        memory_op("elementwise", f"{name}.scale", "softmax", scores, scores, **kw),
        # + the additive mask; under autocast the softmax runs in fp32 (``softmax_b``)
        Op(
            "elementwise",
            f"{name}.mask",
            MEMORY,
            count,
            0.0,
            scores * act_b,
            scores * sb,
            dtype,
            "softmax",
        ),
        Op(
            "softmax",
            f"{name}.softmax",
            MEMORY,
            count,
            0.0,
            scores * sb,
            scores * sb,
            dtype,
            "softmax",
        ),
    ]
    if dropout:
        ops.append(
            Op(
                "elementwise",
                f"{name}.dropout",
                MEMORY,
                count,
                0.0,
                scores * sb,
                scores * (sb + DROPOUT_MASK_BYTES),
                dtype,
                "dropout",
            )
        )
    if sb != act_b:
        ops.append(
            Op(
                "elementwise",
                f"{name}.cast",
                MEMORY,
                count,
                0.0,
                scores * sb,
                scores * act_b,
                dtype,
                "cast",
            )
        )
    ops.append(gemm(f"{name}.av", q_len, head_dim, kv_len, batch=b, **kw))
    ops.append(memory_op("elementwise", f"{name}.context_copy", "copy", q_el, q_el, **kw))
    return ops


def _megatron_core_attention(
    name: str,
    q_len: float,
    kv_len: float,
    head_dim: float,
    b: float,
    q_el: float,
    dropout: bool,
    kw: dict[str, Any],
) -> list[Op]:
    """``attention``'s ``fused_softmax`` path: Megatron-LM's ``CoreAttention`` (2022)."""
    scores = b * q_len * kv_len
    ops = [
        gemm(f"{name}.qk", q_len, kv_len, head_dim, batch=b, **kw),
        memory_op("softmax", f"{name}.softmax", "softmax", scores, scores, **kw),
    ]
    if dropout:
        ops.append(
            memory_op(
                "elementwise",
                f"{name}.dropout",
                "",
                scores,
                scores,
                extra_write=scores * DROPOUT_MASK_BYTES,
                **kw,
            )
        )
    ops.append(gemm(f"{name}.av", q_len, head_dim, kv_len, batch=b, **kw))
    ops.append(memory_op("elementwise", f"{name}.context_copy", "copy", q_el, q_el, **kw))
    return ops


# Megatron's tensor-parallel linears (Shoeybi et al. 2019, §3): column-parallel ones split their
# outputs over the TP ranks, row-parallel ones their inputs (the reduction).
COLUMN_PARALLEL = ("q_proj", "kv_proj", "mlp.up", "lm_head")
ROW_PARALLEL = ("o_proj", "mlp.down")


def megatron_shapes(ops: list[Op], batch: float, micro_batch: float, tp: int) -> list[Op]:
    """A transformer step over ``batch`` sequences (forward, recompute, backward) with its GEMMs'
    shapes made those one Megatron GPU runs: each Megatron micro-batch of ``micro_batch``
    sequences on its own (the token dimension × micro_batch / batch), the linears split over
    ``tp`` ranks (``COLUMN_PARALLEL``: the output features; ``ROW_PARALLEL``: the input
    features — in the forward, the dgrad and the wgrad alike) and attention batched over the
    micro-batch's sequences and tp-th of the heads. Only ``m``, ``n``, ``k`` and ``batch``
    change, which only the wave and tile fill read (kernels.shape_efficiency): each op's FLOPs,
    bytes and launches stay the step's."""
    if micro_batch <= 0 or micro_batch > batch or tp < 1:
        return ops
    f = micro_batch / batch
    out: list[Op] = []
    for o in ops:
        base, _, part = o.name.partition(".")
        if o.name.startswith("mlp."):
            base, _, part = o.name[4:].partition(".")
            base = "mlp." + base
        col, row = base in COLUMN_PARALLEL, base in ROW_PARALLEL
        if o.kind == "gemm" and o.batch == 1.0 and (col or row):
            # (tokens, out, in) forward; dgrad (tokens, in, out); wgrad (in, out, tokens)
            dims = {"": ("m", "n", "k"), "dgrad": ("m", "k", "n"), "wgrad": ("k", "n", "m")}
            if part not in dims:
                out.append(o)
                continue
            tok, out_f, in_f = dims[part]
            shape = {"m": o.m, "n": o.n, "k": o.k}
            shape[tok] *= f
            shape[out_f if col else in_f] /= tp
            out.append(derive(o, **shape))
        elif o.kind in ("gemm", "attention") and base == "attention":
            out.append(derive(o, batch=o.batch * f / tp))
        else:
            out.append(o)
    return out


def is_gated(model: ModelSpec) -> bool:
    """Whether the MLP is gated (SwiGLU: gate, up, down) or plain (GELU: up, down): the one rule
    memory reads too (activations.gated_mlp: a config.json's word, else the parameter count)."""
    return gated_mlp(model)


def transformer_ops(
    model: ModelSpec,
    batch: float,
    seq: float,
    *,
    act_b: float = 2.0,
    w_b: float = 2.0,
    flash: bool = True,
    training: bool = True,
    dtype: str = "bf16",
    megatron_softmax: bool = False,
) -> list[Op]:
    """One forward pass of a transformer over ``batch`` sequences of ``seq`` tokens.

    Per layer: norm, Q/K/V and output projections (grouped-query K/V at kv_heads × head_dim),
    attention, residual, norm, MLP (gated SwiGLU or GELU; MoE: a router GEMM and the active
    experts' GEMMs over the tokens routed to them), residual; dropout after attention and MLP
    when training an encoder (BERT's hidden and attention dropout). Then the final norm and, for
    decoders, the LM head, logits and cross-entropy; embeddings at the start. Decoders are
    causal. ``w_b``: stored bytes per weight (a quantised format when serving).
    ``megatron_softmax``: attention as Megatron-LM ran it before Transformer Engine (``attention``'s
    ``fused_softmax`` path, ``flash`` ignored), with its attention-probability dropout when
    training (Megatron-LM's ``--attention-dropout`` defaults to 0.1, megatron/arguments.py); the
    hidden dropouts stay out (fused into bias-dropout-add)."""
    if not model.has_shape:
        raise ValueError("transformer_ops needs layers and hidden_size")
    layers = float(model.layers or 0)
    h = float(model.hidden_size or 0)
    heads = float(model.num_heads or 1)
    kv_heads = float(model.kv_heads or heads)
    hd = float(model.head_dim or h / heads)
    inter = float(model.intermediate_size or 4 * h)
    t = batch * seq
    decoder = model.family == "decoder"
    gated = is_gated(model)
    dropout = training and not decoder  # BERT/ViT recipes keep dropout; LLM recipes set it to 0
    L = layers
    kw: dict[str, Any] = {"count": L, "act_b": act_b, "dtype": dtype}
    ops: list[Op] = []
    if model.vocab_size:
        ops.append(memory_op("embedding", "embed", "embed", t, t * h, act_b=act_b, dtype=dtype))
    norm = "rmsnorm" if gated else "layernorm"
    ops.append(memory_op("norm", f"{norm}.attn", "norm", t * h, t * h, **kw))
    ops.append(gemm("q_proj", t, heads * hd, h, w_b=w_b, **kw))
    ops.append(gemm("kv_proj", t, 2.0 * kv_heads * hd, h, w_b=w_b, **kw))
    if gated:  # rotary embeddings on q and k (Llama-style configs)
        qk = t * (heads + kv_heads) * hd
        ops.append(memory_op("elementwise", "rotary", "act", qk, qk, **kw))
    # autocast runs softmax in fp32 (it is on autocast's fp32 list)
    softmax_b = 4.0 if training and act_b < 4.0 else act_b
    ops.extend(
        attention(
            "attention",
            tokens_q=t,
            q_len=seq,
            kv_len=seq,
            heads=heads,
            head_dim=hd,
            kv_heads=kv_heads,
            count=L,
            act_b=act_b,
            causal=decoder,
            flash=flash and not megatron_softmax,
            dtype=dtype,
            dropout=dropout or (training and megatron_softmax),
            softmax_b=softmax_b,
            fused_softmax=megatron_softmax,
        )
    )
    ops.append(gemm("o_proj", t, h, heads * hd, w_b=w_b, **kw))
    if dropout:
        ops.append(_hidden_dropout("attn_out.dropout", t * h, kw))
    ops.append(memory_op("elementwise", "residual.attn", "residual", 2 * t * h, t * h, **kw))
    ops.append(memory_op("norm", f"{norm}.mlp", "norm", t * h, t * h, **kw))
    ops.extend(_mlp(model, t, h, inter, gated, w_b, kw))
    if dropout:
        ops.append(_hidden_dropout("mlp.dropout", t * h, kw))
    ops.append(memory_op("elementwise", "residual.mlp", "residual", 2 * t * h, t * h, **kw))
    ops.append(memory_op("norm", f"{norm}.final", "norm", t * h, t * h, act_b=act_b, dtype=dtype))
    if gated and training:
        ops.extend(eager_llama_passes(model, t, kw))
    if decoder and model.vocab_size:
        v = float(model.vocab_size)
        ops.append(gemm("lm_head", t, v, h, act_b=act_b, w_b=w_b, dtype=dtype))
        if training:
            ops.extend(loss_ops(t * v, act_b, dtype))
    return ops


def _hidden_dropout(name: str, elements: float, kw: dict[str, Any]) -> Op:
    """Dropout over ``elements`` hidden activations: reads them, writes them and the mask."""
    return memory_op(
        "elementwise",
        name,
        "dropout",
        elements,
        elements,
        extra_write=elements * DROPOUT_MASK_BYTES,
        **kw,
    )


LOSS_B = 4.0  # cross-entropy runs in fp32 (log_softmax and nll_loss are on autocast's fp32 list)


def loss_ops(logits: float, act_b: float, dtype: str) -> list[Op]:
    """Eager cross-entropy over ``logits`` elements (tokens × vocabulary), as F.cross_entropy
    runs under autocast: the logits cast up to fp32 (skipped when they already are), then
    log_softmax reading and writing fp32; nll_loss gathers one value per token (negligible).
    Their backward (``backward_ops``): nll_loss writes a dense fp32 gradient of the logits'
    shape, log_softmax reads it and its saved output and writes its input gradient, and the
    cast's backward casts that gradient back down. With a vocabulary of 32-128 k and hidden
    sizes of 2-8 k, these passes move 10-60× a layer's activation bytes per token."""
    ops: list[Op] = []
    if act_b < LOSS_B:
        ops.append(
            Op(
                "elementwise",
                "loss.cast",
                MEMORY,
                1.0,
                0.0,
                logits * act_b,
                logits * LOSS_B,
                dtype,
                "cast",
            )
        )
    ops.append(
        Op(
            "softmax",
            "loss.log_softmax",
            MEMORY,
            1.0,
            0.0,
            logits * LOSS_B,
            logits * LOSS_B,
            dtype,
            "loss",
        )
    )
    return ops


# Eager Llama-style code (Meta's reference model, torchtitan's, Hugging Face's LlamaForCausalLM)
# writes RMSNorm as x.float() → pow(2) → mean → · rsqrt → type_as → · weight and rotary
# embeddings as x.float() → complex multiply → type_as: bytes read and written per element
# beyond the one pass (2 B in, 2 B out) the fused norm and rotary ops above already count.
RMSNORM_FP32_EXTRA = (18.0, 14.0)  # reads 2+4+4+4+4+2, writes 4+4+4+2+2, less one fused pass
ROTARY_FP32_EXTRA = (8.0, 8.0)  # reads 2+4+4, writes 4+4+2 per q/k element, less one pass


def eager_llama_passes(model: ModelSpec, t: float, kw: dict[str, Any]) -> list[Op]:
    """The memory-bound passes eager Llama-style training code runs beyond the fused ops of
    ``transformer_ops``: the fp32 RMSNorm chain (both norms per layer and the final one) and
    the fp32 complex rotary, as casts (a fusing runtime folds them into one pass); SiLU
    before the gate product (two kernels, not one); repeat_kv's copy of K and V to every query
    head when grouped (expand + reshape); and the copy of the attention output back to
    (batch, seq, heads·dim) (transpose + contiguous)."""
    h = float(model.hidden_size or 0)
    heads = float(model.num_heads or 1)
    kv_heads = float(model.kv_heads or heads)
    hd = float(model.head_dim or h / heads)
    inter = float(model.intermediate_size or 4 * h)
    if model.experts and model.experts > 1:
        inter *= float(model.active_experts or 1)
    layers = float(kw["count"])
    dtype = str(kw["dtype"])

    def extra(name: str, role: str, elements: float, rw: tuple[float, float], n: float) -> Op:
        return Op("elementwise", name, MEMORY, n, 0.0, elements * rw[0], elements * rw[1],
                  dtype, role)  # fmt: skip

    qk = t * (heads + kv_heads) * hd
    ops = [
        extra("rmsnorm.fp32", "cast", t * h, RMSNORM_FP32_EXTRA, 2.0 * layers),
        extra("rmsnorm.fp32.final", "cast", t * h, RMSNORM_FP32_EXTRA, 1.0),
        extra("rotary.fp32", "cast", qk, ROTARY_FP32_EXTRA, layers),
        memory_op("elementwise", "swiglu.silu", "split", t * inter, t * inter, **kw),
        memory_op(
            "elementwise", "attention.out_copy", "copy", t * heads * hd, t * heads * hd, **kw
        ),
    ]
    if kv_heads < heads:
        kv, full = 2.0 * t * kv_heads * hd, 2.0 * t * heads * hd
        ops.append(memory_op("elementwise", "repeat_kv", "copy", kv, full, **kw))
    return ops


# Transformer Engine's FP8 GEMMs on Hopper take both operands in FP8, the wgrad/dgrad ones
# transposed: a tensor that no fused kernel already writes in FP8 is cast and transposed by
# one cast-transpose kernel (reads 2 B, writes the FP8 copy and its FP8 transpose, 1 + 1 B per
# element). Fused already: the norm's output (LayerNormLinear / LayerNormMLP write the GEMM
# input in FP8) and the activation's (the SwiGLU kernel writes FC2's input in FP8), whose ops
# keep their bytes. Left: the attention output (the output projection's input) in the forward;
# in the backward the output gradient of each of the four GEMMs (QKV, projection, FC1, FC2),
# which dgrad and wgrad both read; and the weights, cast once per step (FP8 weight caching
# across micro-batches). Delayed scaling (Megatron's default --fp8-recipe) takes each scale
# from the amax history: one fused amax/scale update per step, no pass over the tensors.
FP8_CAST_TRANSPOSE_B = (2.0, 2.0)  # bytes read, written per element
# Outside Megatron no fused producer writes a GEMM input in FP8: an eager te.Linear casts its
# own input, and torchao's Float8Linear (eager or compiled) runs, per linear input, a kernel
# that "read[s] in bf16, write[s] twice in float8 (row-major and col-major)" — 2 B in, 1 + 1 B
# out per element, the same pass as TE's cast-transpose — its max-abs stage fused with the
# producer under torch.compile (pytorch/ao torchao/float8/roofline_utils.py at 086ff72,
# get_tensor_memory_traffic_bytes and get_float8_mem_sympy: fuse_with_prev for the input and
# grad_output). The runtime rows that say so (data/efficiency.yaml fp8_unfused_inputs) pay it
# on the two norm outputs (QKV and FC1 inputs) and the activation output (FC2's input).


def fp8_cast_ops(
    model: ModelSpec, t: float, dtype: str = "fp8", unfused_inputs: bool = False
) -> list[Op]:
    """The FP8 cast-transpose passes Transformer Engine adds to a transformer's training step
    over ``t`` tokens (see FP8_CAST_TRANSPOSE_B): per layer, the attention output in the
    forward and the four GEMMs' output gradients in the backward; the weights once per step.
    ``unfused_inputs``: no fused producer writes the other GEMM inputs in FP8 (te.Linear or
    torchao's Float8Linear in a PyTorch program: each linear casts its own bf16 input, the
    input cast kernel of torchao's float8 roofline, ``FP8_UNFUSED_INPUTS``), so the QKV and FC1
    inputs (the norms' outputs) and FC2's (the activation's) take a cast-transpose pass too."""
    h = float(model.hidden_size or 0)
    heads = float(model.num_heads or 1)
    kv_heads = float(model.kv_heads or heads)
    hd = float(model.head_dim or h / heads)
    inter = float(model.intermediate_size or 4 * h)
    width = 2.0 * inter if is_gated(model) else inter
    layers = float(model.layers or 0)
    r, w = FP8_CAST_TRANSPOSE_B

    def cast(name: str, elements: float, count: float, phase: str) -> Op:
        return Op("elementwise", name, MEMORY, count, 0.0, elements * r, elements * w, dtype,
                  "fp8", phase)  # fmt: skip

    # the four GEMMs' output gradients per layer: QKV, projection, FC1 (gate and up), FC2
    grads = t * ((heads + 2.0 * kv_heads) * hd + h + width + h)
    ops = [
        cast("fp8.cast_transpose.attn_out", t * heads * hd, layers, "fwd"),
        cast("fp8.cast_transpose.grad_out", grads / 4.0, 4.0 * layers, "bwd"),
        cast("fp8.cast_transpose.weights", model.params, 1.0, "opt"),
    ]
    if unfused_inputs:
        ops += [
            cast("fp8.cast_transpose.norm_out", t * h, 2.0 * layers, "fwd"),
            cast("fp8.cast_transpose.act_out", t * inter, layers, "fwd"),
        ]
    return ops


def _mlp(
    model: ModelSpec, t: float, h: float, inter: float, gated: bool, w_b: float, kw: dict[str, Any]
) -> list[Op]:
    ops: list[Op] = []
    experts = int(model.experts or 0)
    active = int(model.active_experts or 0)
    width = 2.0 * inter if gated else inter
    if experts > 1 and active > 0:
        # MoE: a router GEMM, then grouped expert GEMMs; each expert sees its share of the
        # routed tokens (balanced routing: t · active / experts tokens per expert)
        ops.append(gemm("router", t, float(experts), h, w_b=w_b, **kw))
        per = t * active / experts
        kwx = {**kw, "count": kw["count"] * experts}
        ops.append(gemm("expert.up", per, width, h, w_b=w_b, **kwx))
        if gated:
            ops.append(
                memory_op("elementwise", "expert.swiglu", "act", per * width, per * inter, **kwx)
            )
        else:
            ops.append(
                memory_op("elementwise", "expert.gelu", "act", per * inter, per * inter, **kwx)
            )
        ops.append(gemm("expert.down", per, h, inter, w_b=w_b, **kwx))
        return ops
    ops.append(gemm("mlp.up", t, width, h, w_b=w_b, **kw))
    if gated:
        ops.append(memory_op("elementwise", "swiglu", "act", t * width, t * inter, **kw))
    else:
        ops.append(memory_op("elementwise", "gelu", "act", t * inter, t * inter, **kw))
    ops.append(gemm("mlp.down", t, h, inter, w_b=w_b, **kw))
    return ops


def vit_ops(
    model: ModelSpec,
    batch: float,
    *,
    act_b: float = 2.0,
    w_b: float = 2.0,
    flash: bool = True,
    training: bool = True,
    dtype: str = "bf16",
) -> list[Op]:
    """A ViT: the 16×16 patch embedding (a stride-16 convolution, i.e. a GEMM over the patches)
    then the encoder stack over patches + class token."""
    side = float(model.input_size or 224)
    patches = (side // 16) ** 2
    h = float(model.hidden_size or 0)
    embed = gemm("patch_embed", batch * patches, h, 3 * 16 * 16, act_b=act_b, w_b=w_b, dtype=dtype)
    body = transformer_ops(
        replace(model, vocab_size=None),
        batch,
        float(model.vit_tokens()),
        act_b=act_b,
        w_b=w_b,
        flash=flash,
        training=training,
        dtype=dtype,
    )
    return [embed, *body]


# ---------------------------------------------------------------- backward and optimizer


def backward_ops(
    forward: list[Op], *, weight_grads: bool = True, input_grad: bool = False
) -> list[Op]:
    """Each forward op's backward.

    GEMM: dgrad (dA = dC · Bᵀ) and wgrad (dB = Aᵀ · dC), each the forward's FLOPs, so 2× in all
    (wgrad only for trainable weights: not with ``weight_grads=False``, LoRA's frozen base, nor
    for activation × activation GEMMs, which have two dgrads instead). Convolution likewise
    (dgrad + wgrad ≈ 2 × forward; methodology §3.2). Flash attention: 2.5 × the forward FLOPs
    (recomputes the scores), reading Q, K, V, O, dO and writing dQ, dK, dV. Memory-bound ops
    read the output gradient and their saved input and write the input gradient: out + 2·in
    elements (a cast and the ops ``_gradient_only`` names: the output gradient alone). The
    first op's input is the network's (pixels, or embeddings already handled) and needs no
    gradient unless ``input_grad`` (ops inside the network, e.g. LoRA adapters)."""
    out: list[Op] = []
    for i, op in enumerate(forward):
        if op.klass in (GEMM, CONV, CONV_3X3, CONV_DW):
            grads = _gemm_backward(op, weight_grads)
            if i == 0 and len(grads) == 2 and not input_grad:
                # the network's input (pixels) needs no gradient: the first layer's wgrad only
                grads = grads[1:]
            out.extend(grads)
        else:
            out.append(derive(op, name=f"{op.name}.bwd", phase="bwd", **_op_backward(op)))
    return out


def _op_backward(op: Op) -> dict[str, Any]:
    """What a non-GEMM op's backward changes of the op: its class, FLOPs and traffic."""
    if op.klass == ATTN_FLASH:
        return {
            "klass": ATTN_FLASH_BWD,
            "flops": op.flops * FLASH_BWD_FLOPS,
            "bytes_read": op.bytes_read + 2.0 * op.bytes_written,
            "bytes_written": op.bytes_read,
        }
    if op.role == "cast" or _gradient_only(op):
        # a cast's gradient is the output gradient cast back: read it, write the input's.
        # Dropout's, a division by a constant's and an added mask's read no saved input
        # either (``_gradient_only``): what the forward wrote (a dropout's mask included) is
        # what its backward reads
        return {"bytes_read": op.bytes_written, "bytes_written": op.bytes_read}
    if op.role == "loss":
        # nll_loss's backward writes a dense gradient of the log-probabilities (zeros but
        # one value per token); log_softmax's reads it and its saved output, writes dX
        return {
            "bytes_read": 2.0 * op.bytes_written,
            "bytes_written": op.bytes_read + op.bytes_written,
        }
    if op.role == "bias":
        # the bias gradient sums the output gradient over the batch and positions (TensorFlow's
        # BiasAddGrad, ATen's sum of grad_output); the input's gradient is the output's as is
        return {"bytes_read": op.bytes_written, "bytes_written": 0.0}
    if op.role == "embed":
        # the embedding gradient scatters the output gradient into the table
        return {"bytes_read": op.bytes_written, "bytes_written": op.bytes_written}
    return {
        "flops": op.flops,
        "bytes_read": op.bytes_written + op.bytes_read,
        "bytes_written": op.bytes_read,
    }


# The math attention path's score passes whose autograd formula reads the output gradient
# alone (tools/autograd/derivatives.yaml: div by the wrapped √d, ``div_tensor_self_backward(grad,
# other, ...)``; add of the constant mask, ``handle_r_to_c(self.scalar_type(), grad)``, cast back
# to the scores' dtype where autocast's fp32 mask promoted them)
_GRADIENT_ONLY_SCORE_PASSES = (".scale", ".mask")


def _gradient_only(op: Op) -> bool:
    """Whether ``op``'s backward reads the output gradient and no saved input: every dropout
    (derivatives.yaml ``native_dropout``: ``native_dropout_backward(grad, result1, scale)``,
    the gradient and the saved bool mask, result1 — not the input), and the math attention
    path's scale and mask (``_GRADIENT_ONLY_SCORE_PASSES``). The default rule (the output
    gradient plus the saved input) had charged BERT's math attention 8 bytes a score more in
    its backward than these formulas read."""
    if op.role == "dropout" or op.name.endswith(".dropout"):
        return True
    return op.role == "softmax" and op.name.endswith(_GRADIENT_ONLY_SCORE_PASSES)


def _gemm_backward(op: Op, weight_grads: bool) -> list[Op]:
    m, n, k, b = op.m, op.n, op.k, op.batch
    if op.kind == "conv" and op.in_channels > 0:
        # dX = dY ⊛ Wᵀ as an implicit GEMM over the same positions: N = input channels per
        # group, K = output channels × R × S; the same FLOPs as the forward (cuDNN dgrad)
        taps = k / op.in_channels
        dgrad = derive(
            op, name=f"{op.name}.dgrad", phase="bwd", m=m, n=op.in_channels, k=n * taps,
            in_channels=0.0,
        )  # fmt: skip
    else:
        dgrad = derive(op, name=f"{op.name}.dgrad", phase="bwd", m=m, n=k, k=n)
    if op.kind == "gemm" and m * n * k > 0:
        act_b = op.bytes_written / (b * m * n)
        w_b = max(0.0, op.bytes_read / b - m * k * act_b) / (k * n)
        # dA[m,k] = dC[m,n] · Bᵀ: reads dC and B, writes dA
        dgrad = derive(
            dgrad, bytes_read=b * (m * n * act_b + k * n * w_b), bytes_written=b * m * k * act_b
        )
    weighted = op.batch == 1.0 and op.kind in ("gemm", "conv")
    if not weighted:  # activation × activation (attention's QKᵀ, AV): two dgrads
        return [dgrad, derive(dgrad, name=f"{op.name}.dgrad2")]
    if not weight_grads:
        return [dgrad]
    # dB[k,n] = Aᵀ · dC: reads A and dC, writes dB
    # the reduction runs over the batch's positions, not the input channels: no stem penalty
    wgrad = derive(op, name=f"{op.name}.wgrad", phase="bwd", m=k, n=n, k=m, in_channels=0.0)
    if op.kind == "gemm" and m * n * k > 0:
        act_b = op.bytes_written / (m * n)
        wgrad = derive(wgrad, bytes_read=m * k * act_b + m * n * act_b, bytes_written=k * n * act_b)
    return [dgrad, wgrad]


def attention_linears(model: ModelSpec) -> list[tuple[float, float]]:
    """(in, out) features of the attention's linear layers: q, k, v, o; under multi-head
    latent attention with its ranks known (DeepSeek-V2/V3), the five of HF's
    DeepseekV3Attention: q_a_proj (hidden → q_lora_rank), q_b_proj (→ heads × (nope + rope);
    q_proj from the hidden state where there is no q_lora_rank), kv_a_proj_with_mqa (hidden →
    kv_lora_rank + rope), kv_b_proj (kv_lora_rank → heads × (nope + v)) and o_proj (heads × v →
    hidden). q, k, v, o at MLA's one "KV head" of hidden ÷ heads had counted k and v 56 wide.
    Otherwise q is hidden → heads × head_dim and o its transpose, which an explicit head_dim
    makes other than hidden × hidden."""
    h = float(model.hidden_size or 0)
    heads = float(model.num_heads or 0)
    if model.attention == "mla" and model.kv_lora_rank and model.qk_rope_head_dim and heads:
        nope = float(model.qk_nope_head_dim or 0)
        rope = float(model.qk_rope_head_dim)
        v = float(model.v_head_dim or nope)
        kv_lora, q_out = float(model.kv_lora_rank), heads * (nope + rope)
        q_lora = float(model.q_lora_rank or 0)
        query = [(h, q_lora), (q_lora, q_out)] if q_lora else [(h, q_out)]
        return [*query, (h, kv_lora + rope), (kv_lora, heads * (nope + v)), (heads * v, h)]
    kv = float(model.kv_heads or 1) * float(model.head_dim or 0)
    q = model.q_width or h  # heads × an explicit head_dim (Qwen3-30B-A3B: 4096 from 2048)
    return [(h, q), (h, kv), (h, kv), (q, h)]


def block_linears(model: ModelSpec) -> list[tuple[float, float]]:
    """(in, out) features of each linear layer of one transformer block: the attention's
    (``attention_linears``) and the MLP's (gate, up, down when gated); an MoE block's experts
    are left out. The layers LoRA adapts, in memory (workload.lora_params) and time alike."""
    h = float(model.hidden_size or 0)
    inter = float(model.intermediate_size or 4 * h)
    dims = attention_linears(model)
    if not (model.experts and model.experts > 1):
        dims += (
            [(h, inter), (h, inter), (inter, h)] if is_gated(model) else [(h, inter), (inter, h)]
        )
    return dims


@dataclass(frozen=True, slots=True)
class Dequant:
    """How a 4-bit base layer is expanded to 16 bits for each GEMM that reads it (QLoRA):
    bytes read and written per weight per call, kernels per linear per call, and whether
    the backward dequantises again (else it reuses the 16-bit copy autograd saved).
    ``stages``: each kernel's own (name, read, written) bytes per weight where they differ
    (their sums are ``read_b`` and ``write_b``); empty: ``kernels`` kernels share them alike."""

    name: str
    read_b: float
    write_b: float
    kernels: float
    in_backward: bool
    # the share of the achieved memory bandwidth its kernels reach (1: they stream at it)
    bandwidth_share: float = 1.0
    stages: tuple[tuple[str, float, float], ...] = ()


# bitsandbytes MatMul4Bit (autograd/_functions.py) runs F.dequantize_4bit and F.linear over the
# 16-bit copy in the forward; it saves only the packed B, so the backward dequantises it again
# for grad_A. The engine's NF4 is QLoRA's double-quantised format (formats: 4.127 bits a
# weight; the paper's recipe, transformers' bnb_4bit_use_double_quant, litgpt's bnb.nf4-dq),
# whose absmax is itself 8-bit: dequantize_4bit (functional.py, every release from 0.41 to the
# torch.ops ones, "if quant_state.nested") first runs dequantize_blockwise on it (one 8-bit
# code per 64 weights in, one fp32 absmax out: 1/64 and 4/64 B a weight; the second-level
# constants, one per 256 of those, are too few to count), then ``absmax += offset`` (an ATen
# add over the fp32 absmax: 4/64 B in and out), then kDequantizeBlockwise over the packed
# codes (0.5 B) and that fp32 absmax (4/64 B), writing the 16-bit weight (2 B): three kernels
# per linear per call where the engine had priced one, 0.64 B read and 2.125 B written.
_NF4_ABSMAX = 4.0 / 64.0  # fp32 absmax per 64-weight block, B per weight
NF4_STAGES = (
    ("nf4.absmax", 1.0 / 64.0, _NF4_ABSMAX),
    ("nf4.offset", _NF4_ABSMAX, _NF4_ABSMAX),
    ("nf4.dequantise", 0.5 + _NF4_ABSMAX, 2.0),
)
NF4_DEQUANT = Dequant(
    "nf4.dequantise",
    sum(r for _, r, _ in NF4_STAGES),
    sum(w for _, _, w in NF4_STAGES),
    float(len(NF4_STAGES)),
    in_backward=True,
    stages=NF4_STAGES,
)
# AutoGPTQ QuantLinear (qlinear_cuda_old.py, trainable=True turns its CUDA kernel off) unpacks
# in PyTorch ops: bitwise_right_shift of the int32 words over an expanded view (0.5 B in, an
# int32 per weight out: 4 B), .to(int8) (4 in, 1 out), bitwise_and (1, 1), minus the zeros
# (1, 1), times the fp16 scales (1 in, 2 out): 7.5 B read and 9 B written per weight, five
# kernels on the weight and four on the (small) packed zeros. torch.matmul then saves that
# 16-bit weight for the backward: no third call. Those kernels stream at half the bandwidth
# the other memory-bound ops reach (GPTQ_UNPACK_BANDWIDTH_SHARE).
# ms-swift's A100-80GB benchmark (modelscope/ms-swift docs/source_en/LLM/Benchmark.md @ 4692215,
# "Quantization": torch 2.1.1, auto_gptq 0.5.1, LoRA r 8, batch 1, gradient checkpointing, the
# same job on a bf16 and a GPTQ int4 base) times the unpack alone: Qwen-7B-Chat 4.31 → 2.05
# samples/s, Qwen-14B-Chat 2.60 → 1.15, i.e. 0.256 and 0.485 s more per micro-step, where these
# kernels at the engine's bandwidth take 0.119 and 0.232 s (plus 0.016 and 0.020 s of launches):
# a share of 0.497 and 0.499. peft's prepare_model_for_kbit_training leaves a GPTQ model's other
# weights in 16 bits (it upcasts to fp32 only non-GPTQ bases), so nothing else differs. The
# broadcast (expanded qweight, the zeros) and mixed-dtype (fp16 scales × int8) element-wise
# kernels run on PyTorch's non-vectorised paths ("dynamic casting kernel is noticeably slower",
# pytorch/pytorch PR #58240 review).
GPTQ_UNPACK_BANDWIDTH_SHARE = 0.5
GPTQ_TORCH_DEQUANT = Dequant(
    "gptq.dequantise", 7.5, 9.0, 9.0, in_backward=False,
    bandwidth_share=GPTQ_UNPACK_BANDWIDTH_SHARE,
)  # fmt: skip


def dequant_ops(model: ModelSpec, dq: Dequant, calls: float) -> list[Op]:
    """The dequantisation kernels of a 4-bit base's block linears: ``dq.kernels`` per linear
    per call (each of ``dq.stages`` with its own bytes where it has them), ``calls`` calls
    (forward, recomputed forward, backward as ``dq`` says)."""
    layers = float(model.layers or 0) * calls
    stages = dq.stages or ((dq.name, dq.read_b / dq.kernels, dq.write_b / dq.kernels),)
    count = layers * (1.0 if dq.stages else dq.kernels)
    share = dq.bandwidth_share
    return [
        Op("elementwise", name, MEMORY, count, 0.0, w * r / share, w * wr / share, "bf16")
        for d_in, d_out in block_linears(model)
        for w in (d_in * d_out,)
        for name, r, wr in stages
    ]


def lora_ops(
    model: ModelSpec,
    batch: float,
    seq: float,
    rank: int,
    *,
    act_b: float = 2.0,
    dtype: str = "bf16",
) -> list[Op]:
    """LoRA adapters on every linear layer of a transformer (q, k, v, o and the MLP's; the
    layers ``workload.lora_params`` counts) as PEFT's lora.Linear runs them,
    ``result + lora_B(lora_A(dropout(x))) * scaling``: x·A (rank r), ·B, the scaling multiply
    (its own kernel over the layer's output) and the add into the frozen layer's output. Tiny
    in FLOPs, but four more kernels per linear layer each way and two passes over its output,
    which eager PyTorch pays in launches and bytes. (Dropout, off in PEFT's default LoraConfig,
    is not priced.) MoE experts carry none here (attention adapters only)."""
    layers = float(model.layers or 0)
    t = batch * seq
    ops: list[Op] = []
    for d_in, d_out in block_linears(model):
        kw: dict[str, Any] = {"count": layers, "act_b": act_b, "dtype": dtype}
        ops.append(gemm("lora.a", t, float(rank), d_in, **kw))
        ops.append(gemm("lora.b", t, d_out, float(rank), **kw))
        ops.append(memory_op("elementwise", "lora.scale", "residual", t * d_out, t * d_out, **kw))
        ops.append(memory_op("elementwise", "lora.add", "residual", 2 * t * d_out, t * d_out, **kw))
    return ops


def lora_input_grad_sums(
    model: ModelSpec, batch: float, seq: float, *, act_b: float = 2.0, dtype: str = "bf16"
) -> list[Op]:
    """The backward's sum of each adapted layer's two input gradients: x feeds the frozen
    layer and the adapter, so autograd adds the frozen GEMM's dgrad and lora_A's (one kernel
    reading both, writing the sum, per linear layer)."""
    layers = float(model.layers or 0)
    t = batch * seq
    return [
        replace(
            memory_op(
                "elementwise", "lora.grad_sum", "residual", 2 * t * d_in, t * d_in,
                count=layers, act_b=act_b, dtype=dtype,
            ),
            phase="bwd",
        )
        for d_in, _ in block_linears(model)
    ]  # fmt: skip


# Optimizer update traffic in bytes per trainable parameter (read + write of each state):
# AdamW reads fp32 param, grad, m, v (16 B) and writes param, m, v (12 B); 8-bit Adam keeps
# 1-byte moments; SGD with momentum reads param, grad, buffer and writes param, buffer.
OPTIMIZER_TRAFFIC = {"adamw": 28.0, "adam8bit": 16.0, "sgd": 20.0}


def optimizer_op(
    trainable: float, optimizer: str, per_param: tuple[float, float] | None = None
) -> Op:
    """The optimizer step over ``trainable`` parameters: a memory-bound multi-tensor kernel.
    ``per_param``: the (read, written) bytes of each parameter's update where they are not
    OPTIMIZER_TRAFFIC's fp32 ones (pure 16-bit: perf._pure16_update_bytes)."""
    traffic = OPTIMIZER_TRAFFIC.get(optimizer, 28.0)
    read, written = per_param or (traffic * 4 / 7, traffic * 3 / 7)
    return Op(
        "optimizer",
        f"{optimizer}.step",
        MEMORY,
        1.0,
        0.0,
        trainable * read,
        trainable * written,
        "fp32",
        "",
        "opt",
    )


def weight_cast_op(params: float) -> Op:
    """Mixed precision: autocast re-casts every fp32 weight to 16-bit each step (reads 4 B,
    writes 2 B per parameter) before the forward GEMMs use it."""
    return Op(
        "elementwise",
        "autocast.weights",
        MEMORY,
        1.0,
        0.0,
        params * 4.0,
        params * 2.0,
        "fp32",
        "cast",
    )


# ---------------------------------------------------------------- shipped tables (CNN, UNet)


@dataclass(frozen=True, slots=True)
class ForwardTable:
    """One sample's forward pass as shipped in data/operators/<preset>.yaml."""

    model: str
    source: str
    gflops_forward: float | None
    ops: tuple[dict[str, Any], ...]
    # every ATen call of the pass, views included (what an eager host dispatches); None in
    # tables generated before the generator counted them
    aten_calls: int | None = None
    # the text tokens a UNet's cross-attention reads (its ``input.context_len``): they do not
    # grow with the image (rescaled_table)
    context_len: int | None = None
    # whether the pass has a convolution (an SD/SDXL UNet, a CNN; not FLUX.1's DiT): read once
    # as the table is made, not by a scan of its ops each time a card's gate asks
    has_conv: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "has_conv", any(o.get("kind") == "conv" for o in self.ops))

    @property
    def gflops(self) -> float:
        """GFLOPs the table's ops add up to (2 × MACs), per sample."""
        return sum(o.total_flops for o in table_ops(self, 1.0)) / 1e9


# A CNN table's feature maps at its traced size are at least 7 × 7 × 320 (EfficientNet-B0's
# last stage) = 15,680 elements, a UNet's 8 × 8 × 1280; what a global pool leaves (channels ×
# 1 × 1, a classifier's 4,096 features, a squeeze-excite gate) or a time embedding holds stays
# under this, and does not grow with the image.
_SPATIAL_MIN_ELEMENTS = 8192


def rescaled_table(table: ForwardTable, factor: float) -> ForwardTable:
    """A CNN's or a UNet's / VAE's traced table at an image side ``factor`` × its own: every
    feature map's side grows by the factor, so a convolution's output pixels (its M, its
    FLOPs), a norm's or an element-wise op's elements, a Linear over the pixels and an attention
    over them by its square (self-attention's score work by its fourth power), while what does
    not see the pixels stays: a global pool's output and the classifier after it, squeeze-excite
    gates on 1 × 1 maps, time embeddings, and the text context a cross-attention reads
    (``context_len`` tokens). Kernel sizes, channels and weights are the network's. Sides are
    rounded (a strided layer's ceil or floor is within one pixel).

    An op traced at two image sizes states the part of each count that does not grow with the
    image (``fixed``, benchmarks/gen_operator_tables.py ``split_fixed``): that part stays and
    the rest grows with the pixels — FLUX.1's joint attention over 4096 image tokens and the
    prompt's 512 T5 tokens runs over 4096 × area + 512, its text-stream ops and its pipeline's
    text encoders not at all. Such a statement overrides the rules above for that count."""
    area = factor * factor
    ctx = float(table.context_len or 0)

    def side(v: Any) -> int:
        return max(1, round(float(v) * factor))

    def elements(v: Any) -> float:
        return float(v) * area if float(v) > _SPATIAL_MIN_ELEMENTS else float(v)

    def tokens(v: Any) -> float:
        return float(v) if float(v) <= 1 or float(v) == ctx else float(v) * area

    ops: list[dict[str, Any]] = []
    for traced in table.ops:
        o = dict(traced)
        kind = o["kind"]
        if kind == "conv" and float(o.get("h_out") or 1) * float(o.get("w_out") or 1) > 1:
            for k in ("h_in", "w_in", "h_out", "w_out"):
                if o.get(k) is not None:
                    o[k] = side(o[k])
        elif kind == "gemm":
            o["m"] = tokens(o["m"])  # a Linear over every pixel (ConvNeXt's MLPs, a UNet's QKV)
        elif kind == "attention":
            o["q_len"], o["kv_len"] = tokens(o["q_len"]), tokens(o["kv_len"])
        elif kind in ("norm", "elementwise", "pool", "softmax"):
            # torchvision's ``avgpool`` modules are adaptive (VGG's to 7 × 7, the rest to 1 × 1):
            # their output is the classifier's input, whatever the image; YOLO's SPPF pools
            # keep their map's size and grow with it
            fixed_out = kind == "pool" and str(o.get("name") or "").split(".")[-1] == "avgpool"
            for k in ("elements_in", "elements_out", *F32_FIELDS):
                if o.get(k) is not None and not (fixed_out and k.endswith("_out")):
                    o[k] = elements(o[k])
        for k, stays in (traced.get("fixed") or {}).items():
            # the traced count, not the rule's: what stays, and the rest grown with the pixels
            o[k] = float(stays) + (float(traced[k]) - float(stays)) * area
        ops.append(o)
    out = replace(table, gflops_forward=None, ops=tuple(ops))
    return replace(out, gflops_forward=out.gflops if table.gflops_forward is not None else None)


_TABLE_KINDS = {"conv", "gemm", "attention", "norm", "elementwise", "pool", "softmax", "embedding"}
_REQUIRED = {
    "conv": ("c_in", "c_out", "h_out", "w_out", "r", "s"),
    "gemm": ("m", "n", "k"),
    "attention": ("q_len", "kv_len", "heads", "head_dim"),
}
# A table traced at 16 bits as its pipeline runs (FLUX.1's: benchmarks/gen_operator_tables.py
# ``Net.dtype``) counts a memory-bound op's tensors held wider than that apart: ``f32_in`` /
# ``f32_out`` are the 4-byte words among its ``elements_in`` / ``elements_out`` (an fp32
# element one, a float64 or int64 two) — the rotary embedding diffusers computes in fp32, T5's
# fp32 RMSNorm statistics, the casts between the widths. They move 4 bytes each whatever the
# job's activation width (``table_ops``).
F32_FIELDS = ("f32_in", "f32_out")
# The counts an op traced at two image sizes may state a fixed part of (``rescaled_table``).
_FIXABLE = ("m", "q_len", "kv_len", "elements_in", "elements_out", *F32_FIELDS)


def _fixed_parts_hold(raw: dict[str, Any], fixed: Any) -> bool:
    """Whether an op's ``fixed`` names only counts it has, each part between 0 and the count."""
    return isinstance(fixed, dict) and all(
        k in _FIXABLE and raw.get(k) is not None and 0 <= float(v) <= float(raw[k])
        for k, v in fixed.items()
    )


def parse_table(doc: dict[str, Any]) -> ForwardTable:
    """Validate a table document; an unknown kind, a missing shape field, more 4-byte words
    than elements, or a fixed part that is not a count of the op (or exceeds it) is an error."""
    ops: list[dict[str, Any]] = []
    for i, raw in enumerate(doc.get("ops") or []):
        kind = raw.get("kind")
        if kind not in _TABLE_KINDS:
            raise ValueError(f"operator {i} ({raw.get('name')!r}): unknown kind {kind!r}")
        need = _REQUIRED.get(kind, ("elements_in", "elements_out"))
        missing = [f for f in need if raw.get(f) is None]
        if missing:
            raise ValueError(f"operator {i} ({raw.get('name')!r}): missing {missing}")
        for wide, of in zip(F32_FIELDS, ("elements_in", "elements_out"), strict=True):
            if raw.get(wide) is not None and not 0 <= float(raw[wide]) <= float(raw[of]):
                raise ValueError(f"operator {i} ({raw.get('name')!r}): {wide} beyond {of}")
        fixed = raw.get("fixed")
        if fixed is not None and not _fixed_parts_hold(raw, fixed):
            raise ValueError(f"operator {i} ({raw.get('name')!r}): bad fixed {fixed!r}")
        ops.append(dict(raw))
    if not ops:
        raise ValueError("operator table has no ops")
    g = doc.get("gflops_forward")
    calls = doc.get("aten_calls")
    return ForwardTable(
        model=str(doc.get("model") or ""),
        source=str(doc.get("source") or ""),
        gflops_forward=float(g) if g is not None else None,
        ops=tuple(ops),
        aten_calls=int(calls) if calls is not None else None,
        context_len=int(ctx) if (ctx := (doc.get("input") or {}).get("context_len")) else None,
    )


# Depthwise and narrow-group convolutions (≤ this many input channels per group) cannot fill a
# tensor-core tile along K; cuDNN runs them as direct, bandwidth-bound kernels.
NARROW_GROUP = 8

_TABLE_ROLES = {
    "norm": "norm",
    "elementwise": "act",
    "pool": "pool",
    "softmax": "softmax",
    "embedding": "embed",
}


def table_ops(
    table: ForwardTable,
    batch: float,
    *,
    act_b: float = 2.0,
    w_b: float = 2.0,
    dtype: str = "bf16",
    training: bool = False,
    conv_bias: bool = False,
    unnormed_bias: bool = False,
    join_norm_fused: bool = False,
    group_norm_relayout: bool = False,
    head_batch_copies: bool = False,
) -> list[Op]:
    """The table's ops for a batch: a convolution is an implicit GEMM with M = batch × output
    pixels, N = output channels, K = input channels per group × R × S; its FLOPs
    2·N·K·(C/g)·R·S·P·Q (methodology §3.2), bytes its input, weights and output. In training a
    norm is batch normalisation over the batch: one pass reads the input for the statistics,
    a second reads it again and writes the output. ``conv_bias``: the convolutions carry a bias
    that eager PyTorch adds in a pass of its own (``conv_bias_pass``). ``unnormed_bias``: only
    the convolutions whose output no norm follows carry one (torchvision builds a conv that
    feeds a batch norm without a bias, VGG's with one; tf_cnn_benchmarks' convnet builder adds
    biases where it adds no batch norm), added in a pass of its own likewise.
    ``join_norm_fused``: TorchInductor's fusion around a join (``_joins``: a residual add, a
    gate product, a concatenation), which it cannot fold into the library call before it: a
    norm or a second join that takes the join's output (through any unary ops between them)
    runs in the join's kernel (its fused add + layer / group norm kernels) and reads that
    tensor from registers, once less from memory. ``group_norm_relayout``: eager PyTorch on a
    channels-last model, whose CUDA group norm runs NCHW only (``group_norm_relayout_op``)."""
    out: list[Op] = []
    for i, o in enumerate(table.ops):
        kind = o["kind"]
        name = str(o.get("name") or kind)
        count = float(o.get("count") or 1)
        if kind == "conv":
            c_in, c_out = float(o["c_in"]), float(o["c_out"])
            g = float(o.get("groups") or 1)
            h_out, w_out = float(o["h_out"]), float(o["w_out"])
            h_in = float(o.get("h_in") or h_out * float(o.get("stride") or 1))
            w_in = float(o.get("w_in") or w_out * float(o.get("stride") or 1))
            r, s = float(o["r"]), float(o["s"])
            m = batch * h_out * w_out
            k = c_in / g * r * s
            flops = 2.0 * m * c_out * k
            stride = float(o.get("stride") or 1)
            klass = CONV_DW if c_in / g <= NARROW_GROUP and g > 1 else CONV
            if klass == CONV and _winograd_shape(r, s, stride, g, c_in):
                klass = CONV_3X3
            out.append(
                Op(
                    "conv",
                    name,
                    klass,
                    count,
                    flops,
                    (batch * c_in * h_in * w_in) * act_b + c_out * k * w_b,
                    m * c_out * act_b,
                    dtype,
                    "",
                    "fwd",
                    m,
                    c_out,
                    k,
                    1.0,
                    c_in / g,
                )
            )
            following = table.ops[i + 1]["kind"] if i + 1 < len(table.ops) else None
            if conv_bias or (unnormed_bias and following != "norm"):
                out.append(conv_bias_pass(name, m * c_out, count, act_b, dtype))
        elif kind == "gemm":
            out.append(
                gemm(
                    name,
                    batch * float(o["m"]),
                    float(o["n"]),
                    float(o["k"]),
                    count=count,
                    act_b=act_b,
                    w_b=w_b,
                    dtype=dtype,
                )
            )
        elif kind == "attention":
            q, kv = float(o["q_len"]), float(o["kv_len"])
            heads, hd = float(o["heads"]), float(o["head_dim"])
            out.extend(
                attention(
                    name,
                    tokens_q=batch * q,
                    q_len=q,
                    kv_len=kv,
                    heads=heads,
                    head_dim=hd,
                    kv_heads=heads,
                    count=count,
                    act_b=act_b,
                    causal=False,
                    flash=True,
                    dtype=dtype,
                )
            )
            if head_batch_copies:
                out.append(head_batch_copy_op(name, batch, q, kv, heads * hd, count, act_b, dtype))
        else:
            el_in = batch * float(o["elements_in"])
            el_out = batch * float(o["elements_out"])
            role = _TABLE_ROLES[kind]
            if kind == "elementwise" and name.endswith(":_to_copy"):
                role = "cast"  # a traced cast between widths (a 16-bit table's ``x.float()``)
            elif kind == "elementwise" and _joins(name, el_in, el_out):
                role = "residual"
            read, written = el_in * act_b, el_out * act_b  # memory_op's
            wide_in = batch * float(o.get("f32_in") or 0.0)
            wide_out = batch * float(o.get("f32_out") or 0.0)
            if wide_in or wide_out:
                # the 4-byte words at 4 bytes, the rest at the activation width
                read = mixed_bytes(el_in, wide_in, act_b)
                written = mixed_bytes(el_out, wide_out, act_b)
            stats = (training and kind == "norm") or o.get("groups")
            if stats:
                # batch norm in training, and group norm always: the statistics span whole
                # feature maps, so one pass reads the input for them and a second normalises
                # (ATen's group_norm_kernel.cu: RowwiseMoments, then the affine element-wise)
                read = 2.0 * read
            if join_norm_fused and (kind == "norm" or role == "residual"):
                chained = batch * _after_join(table.ops, i) * act_b
                read = max(0.0, read - chained)
            # in inference BN is y = γ(x − μ)/σ + β with fixed statistics: foldable
            if kind == "norm" and not stats:
                role = "bn"
            # memory_op's op with those bytes, built once (a table's every norm and element-wise
            # op, for every batch a request prices)
            out.append(Op(kind, name, MEMORY, count, 0.0, read, written, dtype, role))
            if group_norm_relayout and o.get("groups"):
                out.append(group_norm_relayout_op(name, el_in, el_out, count, act_b, dtype))
    return out


def group_norm_relayout_op(
    name: str, elements_in: float, elements_out: float, count: float, act_b: float, dtype: str
) -> Op:
    """The two copies a channels-last tensor costs around eager PyTorch's CUDA group norm.
    ATen's ``group_norm`` hands the CUDA kernel ``input.contiguous()`` (only the CPU path keeps
    the suggested memory format), so a channels-last input is first copied to NCHW and the
    output is NCHW (pytorch/pytorch#111824, PyTorch 2.1: "GroupNorm does not return
    channels_last tensor"; PR #191945, 2026-08: "the current implementation forces outputs in
    channels-first/contiguous which is problematic for convnets"); the convolution that takes
    it next (through the element-wise SiLU, which keeps the layout) has channels-last weights,
    so cuDNN's ``cudnn_conv_suggest_memory_format`` picks channels-last and copies the input
    back. One op of role "relayout": read and write the input, read and write the output."""
    moved = (elements_in + elements_out) * act_b
    return Op(
        "elementwise", f"{name}.relayout", MEMORY, count, 0.0, moved, moved, dtype, "relayout"
    )


def head_batch_copy_op(
    name: str,
    batch: float,
    q_len: float,
    kv_len: float,
    inner: float,
    count: float,
    act_b: float,
    dtype: str,
) -> Op:
    """The copies diffusers' xFormers attention processor makes before the kernel: it hands
    ``xformers.ops.memory_efficient_attention`` query, key and value in the (batch × heads,
    tokens, head dim) layout, ``attn.head_to_batch_dim(x).contiguous()`` for each, whose
    ``reshape`` after a ``permute`` of the heads ahead of the tokens copies the tensor
    (diffusers' ``XFormersCrossAttnProcessor``, models/cross_attention.py, the 0.11-0.13
    releases; ``XFormersAttnProcessor`` in attention_processor.py after). PyTorch's SDPA takes
    the heads as a strided view (``AttnProcessor2_0``: ``view(...).transpose(1, 2)``), which is
    what the shipped tables trace; the output's copy back (``batch_to_head_dim``) is in both,
    so only the three input copies are the xFormers path's own. One op of role "copy": read and
    write q (``batch × q_len × inner``), k and v (``batch × kv_len × inner`` each)."""
    moved = batch * (q_len + 2.0 * kv_len) * inner * act_b
    return Op(
        "elementwise", f"{name}.head_to_batch", MEMORY, count, 0.0, moved, moved, dtype, "copy"
    )


# The traced element-wise ops that write a whole new tensor from more than the one before them:
# a sum or product of two full-size operands (a residual add, a GEGLU gate product), a
# concatenation (a UNet's skip connection) or an upsampling. Role "residual": every runtime that
# fuses element-wise chains folds them too (their ``fuse`` lists name "act" and "residual"
# together), except where a runtime's kernels cannot (data/efficiency.yaml: torch.compile's
# diffusion row; Inductor runs the convolutions and GEMMs they follow as library calls).
_JOIN_SUFFIXES = (":cat", ":upsample_nearest2d")


def _joins(name: str, elements_in: float, elements_out: float) -> bool:
    """Whether a traced element-wise op joins or resizes whole tensors (``_JOIN_SUFFIXES``):
    it reads at least two outputs' worth (two full operands), or is a concatenation or an
    upsampling; a traced cast (``:_to_copy``, role "cast") is not one."""
    if name.endswith(":_to_copy"):
        return False
    return elements_in >= 2.0 * elements_out > 0 or name.endswith(_JOIN_SUFFIXES)


def _after_join(ops: tuple[dict[str, Any], ...], i: int) -> float:
    """The elements (per sample) of the join (``_joins``) whose output the table's op ``i``
    takes, through any unary element-wise ops between them (a residual add's scale division:
    one fused chain); 0 where a library call, a norm or nothing comes before."""
    for o in reversed(ops[:i]):
        if o["kind"] != "elementwise":
            return 0.0
        el_in, el_out = float(o["elements_in"]), float(o["elements_out"])
        if _joins(str(o.get("name") or ""), el_in, el_out):
            return el_out
    return 0.0


def _winograd_shape(r: float, s: float, stride: float, groups: float, c_in: float) -> bool:
    """A convolution cuDNN can run as Winograd F(2×2, 3×3): 3×3 filters at stride 1, dense
    (one group), past the stem (whose 3 input channels leave the transform nothing to save;
    Gray & Köster exclude VGG's first layer from their Winograd benchmarks for that reason)."""
    return r == 3 and s == 3 and stride == 1 and groups == 1 and c_in > NARROW_GROUP


def nchw_transposes(forward: list[Op], *, w_b: float = 2.0, training: bool = False) -> list[Op]:
    """The layout transforms cuDNN adds around each tensor-core convolution of an NCHW network.

    Tensor-core convolution kernels read and write NHWC; given NCHW tensors (PyTorch's default
    memory format) cuDNN transforms the inputs to NHWC before the kernel and the output back
    after it (cuDNN docs, Legacy API, "Data and Filter Formats"; methodology, Operators). Each
    call therefore reads and writes its activation input and output once more, and its filter
    too: cuDNN converts the KCRS filter to KRSC on every call (an fp16 NCHW convolution profiled
    with nvprof launches two nchwToNhwcKernel per call, the input's and the filter's, and one
    nhwcToNchwKernel: docs/methodology.md §6.7j), 2 × (input + output + filter) bytes (the op's
    own, its filter at its width: ``w_b`` is no longer read). The filter is a small share for a
    CNN at a training batch and most of it for a UNet at batch 1 (SD 1.5: 1.2 GB of
    convolution weights a call). A training step makes three calls per convolution —
    forward, dgrad (reads dY, writes dX) and wgrad (reads X and dY) — and two for the first
    layer, whose input needs no gradient (``backward_ops``). Depthwise convolutions run on the
    CUDA cores in NCHW directly: none. Role "layout": the pricing drops these ops where the
    convolutions do not run on tensor cores."""
    out: list[Op] = []
    for i, op in enumerate(forward):
        if op.klass not in CONVS:
            continue
        moved = op.bytes_read + op.bytes_written  # input, filter and output
        calls = (2.0 if i == 0 else 3.0) if training else 1.0
        out.append(
            Op(
                "elementwise",
                f"{op.name}.nchw",
                MEMORY,
                op.count * calls,
                0.0,
                moved,
                moved,
                op.dtype,
                _transform_role(op),
                phase=op.phase,  # a decode's transforms run in the decode phase
            )
        )
    return out


def _transform_role(op: Op) -> str:
    """A convolution's layout transforms' role: a TF32 decode convolution's go where it goes
    (UPCAST_TF32, dropped with it on a GPU without TF32)."""
    if op.role == UPCAST_TF32:
        return UPCAST_TF32
    return "layout_3x3" if op.klass == CONV_3X3 else "layout"


def conv_bias_pass(name: str, out_el: float, count: float, act_b: float, dtype: str) -> Op:
    """The pass eager PyTorch runs after a cuDNN convolution that has a bias (diffusers' UNet
    and VAE: every Conv2d keeps its bias): ATen's cuDNN path adds it as its own element-wise
    kernel (aten/src/ATen/native/Convolution.cpp: ``output.add_`` of the reshaped bias), which
    reads and writes the output once; TensorFlow graph mode runs its BiasAdd op the same way
    (grappler's remapper fuses Conv2D + BiasAdd only where the sum is not needed by a gradient).
    Role "bias"."""
    return memory_op("elementwise", f"{name}:bias", "bias", out_el, out_el,
                     count=count, act_b=act_b, dtype=dtype)  # fmt: skip


def total(ops: list[Op], attr: str = "flops") -> float:
    """Σ count × ``attr`` over ``ops`` (flops, bytes)."""
    return math.fsum(op.count * getattr(op, attr) for op in ops)

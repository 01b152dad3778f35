"""What a decoder's training step keeps in memory, tensor by tensor.

Per operator of a decoder layer, the bytes per token that autograd saves for backward, by how
the job holds its numbers (``Policy``); the LM head's logits and the loss; the parameters by
kind (embeddings, untied head, block linears). ``workload.memory_breakdown`` adds them up;
``benchmarks/activation_memory.py`` measures the same per-layer sums with saved-tensor hooks,
and ``tests/domain/test_memory.py`` holds the two together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from app.domain.operators import ForwardTable
    from app.domain.workload import ModelSpec

# Korthikanti et al. 2022, eq. 1: without a fused kernel the attention scores, softmax and
# dropout keep 5·a·s² bytes per sequence per layer in 16-bit (5·a·s per token).
UNFUSED_SCORE_BYTES = 5.0

# The loss over the vocabulary, bytes per logit at its peak (the start of backward, when every
# saved activation is still alive): the fp32 log-probabilities cross-entropy saves (4), the
# gradient that reaches them (4) and the gradient it produces for the fp32 logits (4), while
# the caller still holds the head's output (2 in 16-bit: autocast's bf16 logits; 4 in fp32).
# PyTorch runs log_softmax/nll_loss in fp32 under autocast (CUDA autocast op reference) and
# Hugging Face models upcast the logits for the loss (``logits.float()``).
LOSS_BYTES_PER_LOGIT = 12.0
# of which the log-probabilities cross-entropy saves in forward for its backward
SAVED_LOG_PROB_BYTES = 4.0


@dataclass(frozen=True, slots=True)
class Policy:
    """How a training job holds its tensors.

    ``residual``: bytes of the residual stream (4 under autocast with fp32 parameters: the
    embedding output and every residual add stay fp32). ``compute``: bytes of matmul inputs and
    outputs. ``recast``: each linear casts its fp32 input to 16-bit itself and saves that copy
    (autocast caches casts of parameters only, so q, k and v each keep one). ``frozen_base``:
    the norms and the LM head do not train (LoRA/QLoRA), so autograd keeps only what the
    input's gradient needs (a norm's fp32 input; nothing of the head's input).
    """

    name: str
    residual: float
    compute: float
    recast: bool
    frozen_base: bool = False
    softmax: float = 4.0  # bytes softmax computes in: autocast runs it in fp32 (its fp32 list)


AUTOCAST = Policy("autocast", residual=4.0, compute=2.0, recast=True)  # fp32 params, bf16 math
PURE16 = Policy("16-bit", residual=2.0, compute=2.0, recast=False, frozen_base=True, softmax=2.0)
FP32 = Policy("fp32", residual=4.0, compute=4.0, recast=False)

# What older PyTorch releases keep that today's do not (a job's ``WorkloadSpec.torch_version``;
# an unstated release is a current one). Before 1.11 autograd saves softmax's input beside its
# output, because ``_softmax_backward_data`` took the input for its dtype (pytorch/pytorch issue
# #49600; PR #66018 of October 2021 saves the dtype instead, first released in 1.11). Before 2.0
# ``zero_grad()`` fills the gradients with zeros rather than freeing them (``set_to_none=True``
# became the default of ``Module.zero_grad`` and ``Optimizer.zero_grad`` in PyTorch 2.0), so the
# gradients stay allocated through the next forward.
SOFTMAX_DROPS_INPUT_FROM = (1, 11)
ZERO_GRAD_FREES_FROM = (2, 0)


def torch_release(version: str) -> tuple[int, int] | None:
    """(major, minor) of a release string ("1.10.1+cu113"); None where none is stated."""
    m = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def softmax_saves_input(torch_version: str) -> bool:
    release = torch_release(torch_version)
    return release is not None and release < SOFTMAX_DROPS_INPUT_FROM


def zero_grad_keeps_gradients(torch_version: str) -> bool:
    release = torch_release(torch_version)
    return release is not None and release < ZERO_GRAD_FREES_FROM


def softmax_input_bytes(policy: Policy, heads: float, seq: float) -> float:
    """Bytes per token per layer the scores softmax read take where the release keeps them
    (``softmax_saves_input``): one per head per key, at softmax's width."""
    return policy.softmax * heads * seq


def gated_mlp(m: ModelSpec) -> bool:
    """Whether the MLP is gated (SwiGLU/GeGLU: gate, up and down) or plain (GELU/ReLU: up and
    down): one rule for the memory model (here, ``workload.lora_params``) and the time model
    (``operators.is_gated``), so one answer never prices two architectures.

    A config.json says it (``ModelSpec.gated_mlp``, from ``hf_config``: a gated model type, or
    ``hidden_act`` silu/swish/swiglu/geglu; GPT-2's ``activation_function: gelu_new`` is not).
    Otherwise the shape that accounts for ``params`` better wins (``gated_from_params``):
    Llama/Mistral/Qwen are gated; GPT-2, BERT and ViT are not."""
    if m.gated_mlp is not None:
        return m.gated_mlp
    return gated_from_params(m)


def gated_from_params(m: ModelSpec) -> bool:
    """The MLP read off the parameter count: gated (3·h·inter per layer and expert) or plain
    (2·h·inter), whichever total with the attention projections and the embeddings (counted
    twice for a decoder: an untied head) comes closer to ``params``. A model without a shape
    is read as its family's usual MLP (decoders gated), and so is one without an intermediate
    size (at the 4·h default a plain MLP has SwiGLU's 8/3·h parameter count: Llama-2-7B's
    shape without it had read plain) or an encoder-decoder (its cross-attention is not in the
    count, so the fit misreads Whisper's plain MLP as gated)."""
    h = float(m.hidden_size or 0)
    layers = float(m.layers or 0)
    if not h or not layers or not m.intermediate_size or m.family == "encoder-decoder":
        return m.family == "decoder"
    inter = float(m.intermediate_size)
    kv = float(m.kv_heads or 1) * float(m.head_dim or 0)
    attn = 2.0 * h * (m.q_width or h) + 2.0 * h * kv  # Q and O: h × heads·hd; K and V: h×kv
    embed = float(m.vocab_size or 0) * h * (2.0 if m.family == "decoder" else 1.0)
    experts = float(m.experts or 1)
    plain = layers * (attn + 2.0 * h * inter * experts) + embed
    gated = layers * (attn + 3.0 * h * inter * experts) + embed
    return abs(gated - m.params) < abs(plain - m.params)


def decoder_layer_saved(
    m: ModelSpec,
    policy: Policy,
    *,
    seq: float,
    flash_attention: bool,
    softmax_input: bool = False,
) -> dict[str, float]:
    """Bytes per token one decoder layer saves for backward, per operator.

    Hugging Face's Llama layout: RMSNorm computes in fp32 and saves its fp32 input and the
    normalised tensor (``weight * h.to(dtype)``); rotary embedding saves nothing per token but
    its output; fused attention (FlashAttention / SDPA) saves q, k, v, the output and an fp32
    log-sum-exp per head; SwiGLU saves the gate output, its SiLU, the up output and their
    product (the down projection's input). A plain MLP (``gated_mlp`` false) is GPT-2's
    layout: LayerNorm saves only its input (and a mean and a reciprocal deviation per token),
    the MLP its input, the up output and the GELU's output — 40·h per token under autocast,
    which saved-tensor hooks count on benchmarks/activation_memory.py's GPT-2 layer (40.08).
    ``softmax_input``: eager attention under a PyTorch release that also saves the scores
    softmax reads (``softmax_saves_input``).
    """
    h = float(m.hidden_size or 0)
    heads = float(m.num_heads or 1)
    hd = m.head_dim or 0.0
    kv = float(m.kv_heads or 1) * hd
    q = m.q_width or h  # heads × head_dim: O's input too (an explicit head_dim can differ)
    inter = float(m.intermediate_size or 4 * h)
    experts = float(m.active_experts or 1)
    c = policy.compute
    gated = gated_mlp(m)
    norm = _norm_saved(policy, rms=gated) * h
    ops: dict[str, float] = {
        "attention norm": norm,
        "q/k/v input": (3.0 if policy.recast else 1.0) * c * h,
        "q, k, v": c * (q + 2.0 * kv),
        "attention output": c * q,
    }
    if flash_attention:
        ops["log-sum-exp"] = 4.0 * heads
    else:
        ops["scores and softmax"] = UNFUSED_SCORE_BYTES * heads * seq * c / 2.0
        if softmax_input:  # PyTorch < 1.11 (softmax_saves_input)
            ops["softmax input"] = softmax_input_bytes(policy, heads, seq)
    ops["mlp norm"] = norm
    mlp_inputs = (2.0 if gated else 1.0) if policy.recast else 1.0
    ops["mlp input"] = mlp_inputs * c * h * (experts if policy.recast else 1.0)
    ops["mlp intermediates"] = (4.0 if gated else 2.0) * c * inter * experts
    return ops


# CUDA's fused dropout saves a 1-byte bool mask per element (K22 counts it as 1 byte too).
DROPOUT_MASK_BYTES = 1.0


def encoder_layer_saved(
    m: ModelSpec,
    policy: Policy,
    *,
    seq: float,
    flash_attention: bool,
    softmax_input: bool = False,
) -> dict[str, float]:
    """Bytes per token one BERT-style encoder layer saves for backward, per operator.

    Korthikanti et al. 2022's derivation (post-LayerNorm, GELU MLP, dropout on the
    probabilities and after both output projections) with each tensor at the width the policy
    holds it in. Under autocast (``AUTOCAST``) LayerNorm and softmax run in fp32 (both are on
    autocast's fp32 op list: ``AT_FORALL_FP32`` in ATen's ``autocast_mode.h``), so the residual
    stream, the norms' saved inputs and the probabilities are fp32, every linear saves its own
    16-bit cast of its fp32 input (q, k and v one each) and the attention-times-value matmul a
    16-bit cast of the dropped-out probabilities: 42·h + 7·a·s, which saved-tensor hooks count
    on Transformers' 2022 ``BertLayer`` (``benchmarks/encoder_saved.py``). A model held in
    16-bit throughout (apex AMP O2, ``model.half()``: ``PURE16``) gives K22's 34·h + 5·a·s.
    """
    h = float(m.hidden_size or 0)
    heads = float(m.num_heads or 1)
    inter = float(m.intermediate_size or 4 * h)
    c = policy.compute
    mask = DROPOUT_MASK_BYTES
    ops: dict[str, float] = {
        "q/k/v input": (3.0 if policy.recast else 1.0) * c * h,
        "q, k, v": 3.0 * c * h,
        "attention output": c * h,
        "dropout masks": 2.0 * mask * h,
        "layer norm inputs": 2.0 * policy.residual * h,
        "mlp input": c * h,
        "mlp intermediates": 2.0 * c * inter,
    }
    if flash_attention:
        ops["log-sum-exp"] = 4.0 * heads
    else:
        # the probabilities at softmax's width, their dropout mask, the matmul's input
        ops["scores and softmax"] = (policy.softmax + mask + c) * heads * seq
        if softmax_input:  # PyTorch < 1.11 (softmax_saves_input)
            ops["softmax input"] = softmax_input_bytes(policy, heads, seq)
    return ops


def _norm_saved(policy: Policy, *, rms: bool = True) -> float:
    """A norm's bytes per hidden unit. RMSNorm (Llama's, beside gated MLPs): the fp32 view of
    its input, and the normalised tensor at the stream's width where the norm's weight trains
    (``weight * h.to(dtype)``). LayerNorm (GPT-2's, beside plain MLPs): ``native_layer_norm``
    saves its input at the stream's width, trained or frozen (its per-token mean and
    reciprocal deviation are not per hidden unit)."""
    if not rms:
        return policy.residual
    return 4.0 + (0.0 if policy.frozen_base else policy.residual)


def head_saved(m: ModelSpec, policy: Policy) -> float:
    """Bytes per token of the final norm and the LM head's input (a frozen head keeps none)."""
    h = float(m.hidden_size or 0)
    norm = _norm_saved(policy, rms=gated_mlp(m))
    return norm * h + (0.0 if policy.frozen_base else policy.compute * h)


def logits_bytes(
    m: ModelSpec,
    tokens: float,
    policy: Policy,
    chunks: int,
    compiled: bool,
    own_loss: float | None = None,
) -> float:
    """Peak bytes of the logits and the loss over them (every trainer computes them, whatever
    the checkpointing).

    ``chunks`` > 1: a chunked cross-entropy (torchtune's CEWithChunkedOutputLoss, default 8
    chunks): the head's output is held whole (a list of per-chunk 16-bit logits), but the loss
    upcasts and differentiates one chunk at a time ("upcasting only one chunk at a time saves
    considerable memory", its docstring; torchtune PR #1390), so its fp32 bytes are one
    chunk's. That assumes the upcast and the loss compiled together per chunk, as torchtune
    does with compile on. ``compiled`` False (an eager loss): every chunk's forward runs before
    backward and saves its fp32 log-probabilities, so only the two gradients are one chunk's.
    ``own_loss``: the runtime's own bytes per logit beyond the head's output for an unchunked loss
    (MLX's cross-entropy in the logits' dtype: data/efficiency.yaml loss_logit_bytes)."""
    if m.family != "decoder" or not m.vocab_size:
        return 0.0
    held = policy.compute  # the head's output: bf16 under autocast, fp32 in fp32
    if own_loss is not None and chunks <= 1:
        return tokens * float(m.vocab_size) * (float(own_loss) + held)
    n = max(1, chunks)
    saved = SAVED_LOG_PROB_BYTES / (n if compiled else 1)
    loss = saved + (LOSS_BYTES_PER_LOGIT - SAVED_LOG_PROB_BYTES) / n
    return tokens * float(m.vocab_size) * (loss + held)


def largest_param_tensor(m: ModelSpec) -> float:
    """Parameters of the model's largest single weight tensor: the vocabulary table (the
    input embedding or an untied LM head) or one MLP / attention projection of a layer; one
    layer's parameters where the shape is unknown (the whole model without layers). The
    gradient (and, paged, the optimizer state) an optimizer-in-backward step holds at once."""
    if m.is_transformer and m.has_shape:
        h = float(m.hidden_size or 0)
        inter = float(m.intermediate_size or 4 * h)
        embed, head = embedding_params(m)
        return max(embed, head, h * inter, h * (m.q_width or h))
    return m.params / float(m.layers or 1)


def block_params(m: ModelSpec) -> float:
    """Parameters of the blocks' linear layers from the shape (attention and MLP)."""
    h = float(m.hidden_size or 0)
    hd = m.head_dim or 0.0
    kv = float(m.kv_heads or 1) * hd
    inter = float(m.intermediate_size or 4 * h)
    mlp = (3.0 if gated_mlp(m) else 2.0) * h * inter * float(m.experts or 1)
    return float(m.layers or 0) * (2.0 * h * (m.q_width or h) + 2.0 * h * kv + mlp)


def embedding_params(m: ModelSpec) -> tuple[float, float]:
    """(input embedding, untied LM head) parameters; (0, 0) where the shape is unknown.

    The head is untied when the parameters left after the blocks hold two vocabulary matrices
    (Llama 3 8B: 8.03 B = 6.98 B of blocks + 2 × 0.53 B) rather than one (SmolLM 1.7B, GPT-2);
    ``ModelSpec.tied_embeddings`` says it outright where known.
    """
    if not (m.vocab_size and m.hidden_size and m.layers and m.is_transformer):
        return 0.0, 0.0
    table = float(m.vocab_size) * float(m.hidden_size)
    if m.family != "decoder":
        return table, 0.0
    tied = m.tied_embeddings
    if tied is None:
        tied = m.params - block_params(m) < 1.5 * table
    return table, (0.0 if tied else table)


# ---------------------------------------------------------------- diffusion UNets, per operator

# A UNet's checkpointed units, read off its traced operator names (data/operators/<preset>.yaml):
# diffusers' ``enable_gradient_checkpointing`` runs every ResnetBlock2D and every
# BasicTransformerBlock (``Transformer2DModel`` checkpoints its blocks one by one) through
# ``torch.utils.checkpoint``; kohya-ss sd-scripts' UNets do the same per resnet and per
# transformer block. A folded name ("transformer_blocks.[0-9]") is one unit run ``count`` times.
# FLUX.1's blocks sit at the top of its table ("transformer_blocks.3",
# "single_transformer_blocks.[0-37]").
_UNET_UNIT = re.compile(
    r"^((?:.*?\.)?(?:single_)?(?:resnets|transformer_blocks)\.(?:\d+|\[[^\]]*\]))(?=[.:]|$)"
)
# element-wise ops that save their input for backward (the rest — residual adds, scalings by a
# constant, copies, concatenations — save nothing; their output is counted where the next
# compute op saves it)
_SAVING_ELEMENTWISE = {"silu", "gelu", "mul", "sigmoid", "tanh"}
# the fused attention's log-sum-exp, fp32, one per head per query
_LSE_BYTES = 4.0


def unet_unit(name: str) -> str | None:
    """The checkpointed unit (resnet or transformer block) an operator of a UNet table runs in;
    None for the ops between them (conv_in, the Transformer2DModel's norm and projections,
    samplers, the time embedding), which checkpointing leaves saved as they are."""
    m = _UNET_UNIT.match(name)
    return m.group(1) if m else None


def _op_input_elements(op: dict[str, Any]) -> float:
    kind = op["kind"]
    if kind == "conv":
        stride = float(op.get("stride") or 1)
        h_in = float(op.get("h_in") or float(op["h_out"]) * stride)
        w_in = float(op.get("w_in") or float(op["w_out"]) * stride)
        return float(op["c_in"]) * h_in * w_in
    if kind == "gemm":
        return float(op["m"]) * float(op["k"])
    if kind == "attention":
        return 3.0 * float(op["q_len"]) * float(op["heads"]) * float(op["head_dim"])
    return float(op["elements_in"])


def table_op_saved(op: dict[str, Any], *, compute: float, norm: float) -> float:
    """Bytes one run of a traced op leaves saved for backward, per sample: its output where the
    next compute op saves it as its input (a convolution's or a linear's output, a norm's — at
    the norm's width, fp32 under autocast —, a nonlinearity's); fused attention (SDPA) its
    output and a log-sum-exp per head and query, never the score matrix (q, k and v are the
    projections' outputs, counted there). Residual adds, constant scalings and copies add
    nothing: each block's input and its inner sums are what its first norm and its closing add
    read, the same elements as the outputs counted (one tensor per step of the chain)."""
    kind = op["kind"]
    if kind == "conv":
        return compute * float(op["c_out"]) * float(op["h_out"]) * float(op["w_out"])
    if kind == "gemm":
        return compute * float(op["m"]) * float(op["n"])
    if kind == "attention":
        q, heads = float(op["q_len"]), float(op["heads"])
        return q * heads * (compute * float(op["head_dim"]) + _LSE_BYTES)
    if kind == "norm":
        return _saved_out(op, norm)
    if kind == "elementwise":
        what = str(op.get("name") or "").rsplit(":", 1)[-1]
        return _saved_out(op, compute) if what in _SAVING_ELEMENTWISE else 0.0
    return _saved_out(op, compute)  # pool, softmax, embedding


# bytes of a 4-byte word of a 16-bit trace (operators.F32_FIELDS: the fp32 tensors a pipeline's
# ops read and write whatever the activation width, FLUX.1's fp32 rotary products)
WIDE_B = 4.0


def mixed_bytes(elements: float, wide: float, width: float) -> float:
    """Bytes of ``elements`` at ``width`` bytes each, ``wide`` of them fp32 words at 4."""
    return (elements - wide) * width + wide * WIDE_B


def _saved_out(op: dict[str, Any], width: float) -> float:
    """A memory-bound op's output at ``width`` bytes, its fp32 words (``f32_out``) at 4."""
    return mixed_bytes(float(op.get("elements_out") or 0.0), float(op.get("f32_out") or 0.0), width)


def unet_saved(table: ForwardTable, *, compute: float, norm: float, checkpointing: bool) -> float:
    """Bytes a UNet's training step keeps for backward per sample, from its traced table.

    Without checkpointing every op's saved tensors (``table_op_saved``). With it (each resnet
    and transformer block a checkpointed unit, ``unet_unit``): the ops outside the units as
    they are, each unit's input (what ``torch.utils.checkpoint`` keeps, at the compute width),
    and the largest unit's saved tensors once more, recomputed during its backward."""
    outside = 0.0
    units: dict[str, float] = {}
    runs: dict[str, float] = {}
    inputs = 0.0
    for op in table.ops:
        count = float(op.get("count") or 1)
        saved = table_op_saved(op, compute=compute, norm=norm) * count
        unit = unet_unit(str(op.get("name") or "")) if checkpointing else None
        if unit is None:
            outside += saved
            continue
        if unit not in units:  # the unit's first op reads the unit's input
            inputs += compute * _op_input_elements(op) * count
            units[unit] = 0.0
            runs[unit] = count
        units[unit] += saved
    if not checkpointing:
        return outside
    largest = max((units[u] / runs[u] for u in units), default=0.0)
    return outside + inputs + largest


def _produced_elements(op: dict[str, Any]) -> float:
    kind = op["kind"]
    if kind == "conv":
        return float(op["c_out"]) * float(op["h_out"]) * float(op["w_out"])
    if kind == "gemm":
        return float(op["m"]) * float(op["n"])
    if kind == "attention":
        return float(op["q_len"]) * float(op["heads"]) * float(op["head_dim"])
    return float(op.get("elements_out") or 0.0)


def _reads_held(op: dict[str, Any]) -> bool:
    """Whether an op inside a residual unit reads the tensor the unit holds, so that it is
    already among the op's inputs: a resnet's 1×1 ``conv_shortcut`` of its input, and the
    closing residual add (both operands whole: elements_in ≥ 2 × elements_out, where a bias
    add reads one output and a vector)."""
    name = str(op.get("name") or "")
    if name.endswith("conv_shortcut"):
        return True
    if op["kind"] != "elementwise" or not name.endswith(":add"):
        return False
    return float(op.get("elements_in") or 0.0) >= 2.0 * float(op.get("elements_out") or 0.0)


# a UNet's down-path layers and up blocks (diffusers' UNet2DConditionModel names, as traced)
_DOWN_LAYER = re.compile(r"^down_blocks\.(\d+)\.(resnets|attentions|downsamplers)\.([^.:]+)")
_UP_BLOCK = re.compile(r"^up_blocks\.(\d+)[.:]")


def _skip_pushes(ops: Sequence[dict[str, Any]]) -> list[tuple[int, float]]:
    """(op index, elements) of each skip tensor a UNet's forward keeps for its up path, in
    push order: ``down_block_res_samples = (sample,)`` after ``conv_in``, then each down
    block's ``output_states`` — every resnet's output (or, in a cross-attention block, the
    Transformer2DModel's after it) and the downsampler's. A folded op (``count`` runs) pushes
    one per run."""
    with_attn = {
        m.group(1)
        for o in ops
        if (m := _DOWN_LAYER.match(str(o.get("name") or ""))) and m.group(2) == "attentions"
    }
    pushes: list[tuple[int, float]] = []
    for i, op in enumerate(ops):
        name = str(op.get("name") or "")
        if name == "conv_in":
            pushes.append((i, _produced_elements(op)))
            continue
        m = _DOWN_LAYER.match(name)
        if m is None or (m.group(2) == "resnets" and m.group(1) in with_attn):
            continue
        nxt = _DOWN_LAYER.match(str(ops[i + 1].get("name") or "")) if i + 1 < len(ops) else None
        if nxt is not None and nxt.groups() == m.groups():
            continue  # not the layer's last op
        pushes += [(i, _produced_elements(op))] * int(op.get("count") or 1)
    return pushes


def unet_skips(table: ForwardTable) -> list[float]:
    """Elements per sample of the skip tensors held beside each op of a UNet pass (zero for a
    table with no down path: a VAE decoder, a DiT).

    The UNet's forward holds every down-path output in ``down_block_res_samples`` until an up
    block takes its share, ``res_samples = down_block_res_samples[-len(upsample_block.resnets):]``,
    which the call's frame keeps until that up block returns; each up resnet concatenates one
    (``torch.cat([hidden_states, res_hidden_states], dim=1)``). Counted beside an op: on the
    down path and in the mid block, every skip pushed before it but the latest (the input of
    the unit that follows it, which that unit holds itself: ``table_transient``); in an up
    block, every skip not taken by an earlier up block, its own included — at a concatenation
    only the later blocks', its own being among the op's inputs or counted at its other ops."""
    ops = table.ops
    out = [0.0] * len(ops)
    pushes = _skip_pushes(ops)
    if not pushes:
        return out
    takes: dict[str, int] = {}
    for op in ops:
        name = str(op.get("name") or "")
        m = _UP_BLOCK.match(name)
        if m and name.endswith(":cat"):
            takes[m.group(1)] = takes.get(m.group(1), 0) + int(op.get("count") or 1)
    sizes = [e for _, e in pushes]
    pushed = 0
    up_path = False
    for i, op in enumerate(ops):
        while pushed < len(pushes) and pushes[pushed][0] < i:
            pushed += 1
        name = str(op.get("name") or "")
        m = _UP_BLOCK.match(name)
        if m is None:
            # after the up path (conv_norm_out, conv_out) every skip has been taken
            out[i] = 0.0 if up_path else sum(sizes[: max(0, pushed - 1)])
            continue
        up_path = True
        block = int(m.group(1))
        taken = sum(n for b, n in takes.items() if int(b) < block)
        left = len(sizes) - taken
        if name.endswith(":cat"):
            left -= takes.get(m.group(1), 0)
        out[i] = sum(sizes[: max(0, left)])
    return out


def table_transient(table: ForwardTable, act_b: float) -> float:
    """Bytes per sample live at once at the peak of a forward that saves nothing (inference):
    a UNet pass's or a VAE decode's peak beyond what it holds, at the activations' width.

    Each op's input and output together, and, inside a resnet or transformer block
    (``unet_unit``), the residual the block holds for its closing add while its inner ops
    run: diffusers' ResnetBlock2D keeps ``input_tensor`` until ``output_tensor =
    (input_tensor + hidden_states) / output_scale_factor``, and BasicTransformerBlock its
    ``hidden_states`` until ``attn_output + hidden_states``, each the size of the block's
    input. At a VAE decoder's last resnet (1024², 256 channels) that is the input, the group
    norm's output and the SiLU's, three tensors where the op alone has two. The unit's first
    op reads that input itself, as do the ops ``_reads_held`` names. A UNet's skip tensors
    (``unet_skips``) are live beside every op between their push and their up block."""
    out = 0.0
    held: dict[str, float] = {}
    skips = unet_skips(table)
    for op, skip in zip(table.ops, skips, strict=True):
        here = _op_input_elements(op) + _produced_elements(op) + skip
        unit = unet_unit(str(op.get("name") or ""))
        if unit is not None:
            if unit not in held:
                held[unit] = _op_input_elements(op)
            elif not _reads_held(op):
                here += held[unit]
        out = max(out, act_b * here)
    return out

"""Megatron-Core's own layout of a training job (tensor × context × data × pipeline parallel)
and the time it adds to the engine's ideal per-GPU step (docs/methodology.md §"Megatron
layouts"). Priced per *engine micro-step* (perf.estimate's step: ``micro_batch × n`` sequences
over ``n`` GPUs), in which each data-parallel rank (``tp·cp·pp`` GPUs) runs ``k = tp·cp·pp``
Megatron micro-batches of ``mb`` sequences through every one of its stages.

* pipeline bubble — Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on
  GPU Clusters Using Megatron-LM", SC'21, §2.2): with ``m`` micro-batches per pipeline per
  optimizer step and ``v`` virtual stages (interleaved 1F1B), the bubble is (p−1)/(v·m) of the
  ideal time of the micro-batches on a stage (their compute and exposed TP/CP collectives);
* pipeline p2p — each micro-batch crosses every stage boundary once forward (activation) and
  once backward (its gradient), ``v`` times per device under interleaving (the interleaved
  schedule's extra communication, same paper §2.2.2); the message is one micro-batch's
  [s/cp, mb, h] activation split over the tensor-parallel ranks (§4.1 scatter/gather);
  Megatron overlaps it with compute in the interleaved schedule only (``overlap_p2p_comm``);
* tensor + sequence parallel — Korthikanti et al. 2022 ("Reducing Activation Recomputation in
  Large Transformer Models", §4.2.2): sequence parallelism turns each of tensor parallelism's
  all-reduces into an all-gather plus a reduce-scatter of the same total bytes; four per layer
  per micro-batch (two forward, two backward; recompute adds two), and two all-gathers in
  backward re-gathering the inputs of the column-parallel linears for their weight gradients
  (off without sequence parallelism, where the layer norms and residual adds run whole on
  every TP rank instead: ``REPLICATED_ROLES``). On the critical path unless
  ``--tp-comm-overlap`` (off by default in Megatron-LM), then priced with
  parallelism.overlapped_s;
* context parallel — Megatron-LM docs (context_parallel): each CP rank all-gathers the K/V of
  the other sequence chunks in forward and reduce-scatters their gradients in backward (as ring
  p2p overlapped with attention): priced with overlapped_s;
* distributed optimizer (ZeRO-1) — Megatron-LM docs (distrib_optimizer): gradients are
  reduce-scattered and the updated parameters all-gathered across the data-parallel (× CP)
  group once per optimizer step: the bytes of one all-reduce of the GPU's gradient shard plus
  an all-gather of its trainable parameters (in the gradients' dtype); exposed unless
  --overlap-grad-reduce / --overlap-param-gather (both off by default in Megatron-LM).

Rank order: Megatron's default ``tp-cp-ep-dp-pp`` (tensor innermost, pipeline outermost), so a
group's GPUs are ``stride`` ranks apart and share a node while the group's span fits one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from app.domain import topology
from app.domain.activations import embedding_params
from app.domain.gpu import GpuSpec
from app.domain.operators import is_gated
from app.domain.parallelism import Job, Layout, fsdp, overlapped_s
from app.domain.units import gib

if TYPE_CHECKING:
    from app.domain.workload import ModelSpec, WorkloadSpec


@dataclass(frozen=True, slots=True)
class MegatronLayout:
    """How one Megatron replica spans GPUs, as a recipe states it. ``microbatches``: per
    pipeline per optimizer step (global batch ÷ (micro batch × data-parallel size)); 0: worked
    out by Megatron's own rule from the job's batch (``microbatches``). ``fsdp``: the
    data-parallel dimension is Megatron-FSDP (ZeRO-3), priced as the engine's FSDP layout
    (tp = pp = cp = 1 only)."""

    tp: int = 1
    pp: int = 1
    vp: int = 1
    cp: int = 1
    microbatches: int = 0
    tp_comm_overlap: bool = False
    overlap_dp: bool = False
    fsdp: bool = False
    # --sequence-parallel: on in Megatron-Core's recipes with TP; off, each TP rank runs the
    # layer norms and (bias-)dropout-residual adds on the whole [s, b, h] (``REPLICATED_ROLES``)
    sequence_parallel: bool = True
    # --micro-batch-size where the recipe states it: the step's GEMMs are then priced at the
    # shapes one GPU runs (operators.megatron_shard); 0: the batch's GEMMs whole
    micro_batch: int = 0

    @property
    def model_parallel(self) -> int:
        return self.tp * self.pp * self.cp

    @property
    def label(self) -> str:
        if self.fsdp:
            return "Megatron-FSDP"
        return f"TP{self.tp} PP{self.pp} VP{self.vp} CP{self.cp}"


# Without sequence parallelism the ops outside the tensor-parallel GEMMs — the layer norms and the
# dropout + residual adds (bias-dropout-add) — run whole on every TP rank (Korthikanti et al.
# 2022 §4.2.2: "these operations are replicated across the tensor parallel group"; sequence
# parallelism splits them along s). Their roles in the step's operators (operators.ROLES).
REPLICATED_ROLES = ("norm", "residual")


def parse(text: str) -> MegatronLayout:
    """A recipe's layout in the performance summary's words: "TP4 PP8 CP2 VP8", "FSDP", "DDP"."""
    words = text.upper().split()
    if "FSDP" in words:
        return MegatronLayout(fsdp=True)
    dims = {"TP": 1, "PP": 1, "VP": 1, "CP": 1}
    for w in words:
        if w[:2] in dims and w[2:].isdigit():
            dims[w[:2]] = int(w[2:])
    return MegatronLayout(tp=dims["TP"], pp=dims["PP"], vp=dims["VP"], cp=dims["CP"])


class LayoutError(NamedTuple):
    """A layout Megatron-LM refuses at start-up: the dimension at fault (the API's name for it,
    workload.megatron_layout.<dim>) and Megatron's rule, with where it is checked."""

    dim: str
    reason: str


# Where Megatron-LM checks each rule (NVIDIA/Megatron-LM, main): the transformer config's
# __post_init__, the training arguments' validate_args, and the context-parallel batch split.
_HEADS_RULE = "Megatron-Core's TransformerConfig (megatron/core/transformer/transformer_config.py)"
_STAGES_RULE = "Megatron-LM's validate_args (megatron/training/arguments.py)"
_CP_RULE = "Megatron-Core's get_batch_on_this_cp_rank (megatron/core/utils.py)"


def layout_error(model: ModelSpec, seq_len: int, lay: MegatronLayout) -> LayoutError | None:
    """Why Megatron-LM would refuse ``lay`` for ``model`` at ``seq_len`` before its first step,
    or None. Tensor parallelism splits whole attention heads and whole KV (query) groups over
    its ranks; pipeline stages take whole, equal shares of the layers (uneven first/last
    stages, --decoder-first-pipeline-num-layers, are not modelled here), and virtual stages
    equal shares of a stage's; context parallelism cuts each sequence into 2 × CP chunks and
    gives every rank an early and a late one (causal attention's load balance)."""
    heads = model.num_heads
    if lay.tp > 1 and heads and heads % lay.tp:
        return LayoutError(
            "tensor_parallel",
            f"num_attention_heads ({heads}) must be a multiple of tensor_model_parallel_size "
            f"({lay.tp}): {_HEADS_RULE}",
        )
    groups = model.num_kv_heads or heads
    if lay.tp > 1 and groups and groups % lay.tp and model.attention != "mla":
        return LayoutError(
            "tensor_parallel",
            f"num_query_groups ({groups}, the model's KV heads) must be a multiple of "
            f"tensor_model_parallel_size ({lay.tp}): {_HEADS_RULE}",
        )
    layers = model.layers or 0
    if lay.pp > 1 and layers and layers % lay.pp:
        return LayoutError(
            "pipeline_parallel",
            f"the number of layers ({layers}) must be divisible by the pipeline-model-parallel "
            f"size ({lay.pp}): {_STAGES_RULE}; uneven first or last stages are not modelled here",
        )
    if lay.vp > 1 and layers and (layers // lay.pp) % lay.vp:
        return LayoutError(
            "virtual_stages",
            f"the {layers // lay.pp} layers of each pipeline stage ({layers} ÷ {lay.pp}) must "
            f"split evenly into {lay.vp} virtual stages (layers per pipeline stage divisible "
            f"by layers per virtual stage): {_STAGES_RULE}",
        )
    if lay.cp > 1 and seq_len % (2 * lay.cp):
        return LayoutError(
            "context_parallel",
            f"seq_len {seq_len:,} must be divisible by 2 × context_parallel_size = "
            f"{2 * lay.cp}: each sequence is cut into 2 × CP chunks, an early and a late one "
            f"per rank for causal attention's load balance: {_CP_RULE}",
        )
    return None


def tp_across_nodes(gpu: GpuSpec, lay: MegatronLayout) -> str | None:
    """What a row whose tensor-parallel group spans servers must say, or None: its all-gathers
    and reduce-scatters, several per layer and micro-batch, then cross the network instead of
    NVLink (priced), which is why Megatron's guidance keeps TP within a node (Narayanan et al.
    2021 §3.3, takeaway #1) and grows the pipeline instead."""
    node = topology.node_size(gpu)
    if lay.fsdp or lay.tp <= node:
        return None
    return (
        f"tensor parallel {lay.tp} spans {math.ceil(lay.tp / node)} servers of {node} GPUs: "
        "its collectives, several per layer, cross the network (priced, hence the low "
        "scaling); Megatron's guidance keeps TP within a node (Narayanan et al. 2021 §3.3, "
        f"takeaway #1) and adds pipeline stages instead (tensor_parallel {node} at most)"
    )


def _pow2(x: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, x))))


def default_layout(n: int, need: int, tp_ok: bool) -> MegatronLayout:
    """Megatron's usual layout when the job states none (Narayanan et al. 2021 §3.3's
    takeaways): tensor parallel inside a node, as wide as the memory needs (``need``: the fewest
    GPUs that hold the job), up to the node's 8; pipeline stages only when TP = 8 does not hold
    it; the rest data parallel with the distributed optimizer."""
    if need <= 1 or not tp_ok or n <= 1:
        return MegatronLayout()
    tp = min(_pow2(need), topology.NODE_GPUS, n)
    pp = 1
    if need > tp:
        pp = min(_pow2(math.ceil(need / tp)), max(1, n // tp))
    return MegatronLayout(tp=tp, pp=pp)


def _group_s(gpu: GpuSpec, span: int, moved: float, calls: float) -> float:
    """A collective moving ``moved`` bytes per GPU among GPUs spread over ``span`` ranks: the
    node's fast link while ``span`` fits one node, else each GPU's share of its node's NICs."""
    return topology.comm_seconds(topology.link(gpu, span), moved, round(calls))


def micro_batch_size(n: int, batch: float) -> int:
    """Megatron's ``--micro-batch-size`` for an engine micro-step of ``batch`` sequences on
    ``n`` GPUs: the engine's per-GPU share of it (each of a replica's ``k`` Megatron
    micro-batches per engine micro-step, as ``price`` counts them), whole, at least one."""
    return max(1, int(batch / max(1, n) + 1e-9))


def microbatches(lay: MegatronLayout, n: int, job: Job) -> int:
    """Micro-batches per pipeline per optimizer step: the layout's own, else Megatron's rule
    (megatron/core/num_microbatches_calculator.py: global batch ÷ (micro-batch size ×
    data-parallel size)), the global batch being the engine's micro-step batch × its
    accumulation steps. Where the job states no batch, ``k`` per engine micro-step × the
    accumulation steps (the same rule when each GPU's share is whole)."""
    if lay.microbatches:
        return lay.microbatches
    acc = max(1, job.accumulation_steps)
    if job.batch <= 0:
        return lay.model_parallel * acc
    dp = max(1, n // lay.model_parallel)
    mb = micro_batch_size(n, job.batch)
    return max(1, int(job.batch * acc / (mb * dp) + 1e-9))


def underfilled(lay: MegatronLayout, n: int, global_batch: float) -> str | None:
    """Why the pipeline cannot be kept full, in words, or None: with fewer micro-batches per
    pipeline per step than stages even at one sequence each (global batch ÷ data-parallel
    size < ``pp``), 1F1B leaves each stage idle (p − 1)/m of its compute (Narayanan et al.
    2021 §2.2) and no choice of micro-batch helps."""
    if lay.fsdp or lay.pp <= 1:
        return None
    dp = max(1, n // lay.model_parallel)
    most = int(global_batch / dp + 1e-9) if not lay.microbatches else lay.microbatches
    if most >= lay.pp:
        return None
    m = max(1, most)
    bubble = bubble_fraction(lay.pp, lay.vp, m)
    if lay.microbatches:
        return (
            f"pipeline underfilled: the stated {m} micro-batch(es) per step are fewer than the "
            f"{lay.pp} pipeline stages, so the pipeline bubble adds {bubble:.0%} to the compute "
            f"(priced; bubble (p − 1)/m, Narayanan et al. 2021)"
        )
    return (
        f"pipeline underfilled: a global batch of {global_batch:g} over {dp} data-parallel "
        f"replica(s) makes at most {m} micro-batch(es) per step for {lay.pp} pipeline stages, "
        f"so the pipeline bubble adds {bubble:.0%} to the compute (priced); a global batch of "
        f"{lay.pp * dp} or more gives every stage work (bubble (p − 1)/m, Narayanan et al. 2021)"
    )


def bubble_fraction(pp: int, vp: int, m: int) -> float:
    """Narayanan et al. 2021: pipeline bubble ÷ ideal compute = (p − 1) / (v · m)."""
    return 0.0 if pp <= 1 else (pp - 1) / (max(1, vp) * max(1, m))


# Sequence parallelism's backward all-gathers each column-parallel linear's input again for its
# weight gradient (the forward keeps only this rank's s/t slice): two all-gathers of the
# [s, b, h] activation per layer (QKV, MLP up) beyond the all-reduce-equivalents (Megatron-LM
# megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication.
# backward; Transformer Engine's Linear likewise). Launched async beside the dgrad GEMM, but
# priced like every TP collective (exposed unless --tp-comm-overlap).
SP_BACKWARD_ALLGATHERS = 2


def tp_bytes(lay: MegatronLayout, job: Job) -> float:
    """Bytes one GPU sends per engine micro-step in TP(+SP) collectives: ``k`` micro-batches ×
    L/pp layers × (4, recompute 6) all-reduce-equivalents of the [s/cp, mb, h] activation, and
    under sequence parallelism the backward's ``SP_BACKWARD_ALLGATHERS`` all-gathers of it."""
    if lay.tp <= 1:
        return 0.0
    per_layer = 4 + (2 if job.recompute else 0)
    k = lay.model_parallel
    act = job.act_bytes_per_layer / lay.cp
    moved = per_layer * topology.ring_allreduce_bytes(lay.tp, act)
    if lay.sequence_parallel:
        moved += SP_BACKWARD_ALLGATHERS * topology.allgather_bytes(lay.tp, act)
    return k * job.layers / lay.pp * moved


def tp_calls(lay: MegatronLayout, job: Job) -> float:
    """TP collectives one GPU launches per engine micro-step: under sequence parallelism two
    (all-gather + reduce-scatter) per all-reduce-equivalent plus the backward's re-gathers,
    else one all-reduce each."""
    per_layer = 4 + (2 if job.recompute else 0)
    calls = per_layer * 2 + SP_BACKWARD_ALLGATHERS if lay.sequence_parallel else per_layer
    return lay.model_parallel * job.layers / lay.pp * calls


def cp_bytes(lay: MegatronLayout, job: Job, kv_ratio: float) -> float:
    """Bytes one GPU moves per engine micro-step exchanging K/V across the CP group: per layer
    and micro-batch, an all-gather of the sequence's K and V (this TP rank's heads: ``kv_ratio``
    = 2·kv_heads·head_dim / hidden of the activation) in forward (again under recompute) and a
    reduce-scatter of their gradients in backward."""
    if lay.cp <= 1:
        return 0.0
    kv = job.act_bytes_per_layer * kv_ratio / lay.tp
    passes = 2 + (1 if job.recompute else 0)
    k = lay.model_parallel
    return k * job.layers / lay.pp * passes * topology.allgather_bytes(lay.cp, kv)


def p2p_bytes(lay: MegatronLayout, job: Job) -> float:
    """Bytes one GPU sends per engine micro-step between pipeline stages: each of ``k``
    micro-batches' activation forward and gradient backward, ``vp`` times, split over TP."""
    if lay.pp <= 1:
        return 0.0
    msg = job.act_bytes_per_layer / (lay.cp * lay.tp)
    return lay.model_parallel * 2 * lay.vp * msg


def price(gpu: GpuSpec, n: int, job: Job, lay: MegatronLayout, kv_ratio: float = 0.25) -> Layout:
    """The time ``lay`` adds to one engine micro-step of ``job`` on ``n`` GPUs (``job.compute_s``:
    the ideal per-GPU compute of that micro-step)."""
    if lay.fsdp:
        f = fsdp(gpu, n, job)
        return Layout("megatron", f"Megatron-FSDP over {n} GPUs", f.comm_s, f.exposed_s)
    mp = lay.model_parallel
    dp = max(1, n // mp)
    m = microbatches(lay, n, job)
    k = mp  # Megatron micro-batches each GPU runs per engine micro-step
    window = job.compute_s
    # tensor parallel: ranks 0..tp-1 (innermost)
    tp_s = _group_s(gpu, lay.tp, tp_bytes(lay, job), tp_calls(lay, job)) if lay.tp > 1 else 0.0
    tp_x = overlapped_s(tp_s, window) if lay.tp_comm_overlap else tp_s
    # context parallel: tp ranks apart, the group spans tp·cp ranks
    calls_cp = k * job.layers / lay.pp * 2
    cp_s = (
        _group_s(gpu, lay.tp * lay.cp, cp_bytes(lay, job, kv_ratio), calls_cp)
        if lay.cp > 1
        else 0.0
    )
    cp_x = overlapped_s(cp_s, window)
    # the bubble: (p − 1) idle slots of a micro-batch's time on a stage, which holds the stage's
    # own exposed TP and CP collectives as well as its compute (Narayanan et al. 2021 §2.2.1:
    # t_pb = (p − 1)·(t_f + t_b), the forward and backward times of one micro-batch)
    bubble = (window + tp_x + cp_x) * bubble_fraction(lay.pp, lay.vp, m)
    # pipeline p2p: neighbours tp·cp·dp ranks apart
    stride = lay.tp * lay.cp * dp
    p2p_s = (
        _group_s(gpu, min(n, 2 * stride), p2p_bytes(lay, job), k * 2 * lay.vp)
        if lay.pp > 1
        else 0.0
    )
    p2p_x = overlapped_s(p2p_s, window) if lay.vp > 1 else p2p_s
    # distributed optimizer across dp × cp (tp ranks apart), once per optimizer step, i.e.
    # k/m of it per engine micro-step
    group = dp * lay.cp
    grads = job.grad_bytes / (lay.tp * lay.pp)
    # the updated parameters come back in the gradients' dtype: only trainable ones (LoRA:
    # the adapters; the frozen base is never gathered)
    moved = topology.ring_allreduce_bytes(group, grads) + topology.allgather_bytes(group, grads)
    span = lay.tp * group
    if group <= 1:
        dp_s = 0.0
    elif topology.nodes(gpu, span) <= 1:
        dp_s = _group_s(gpu, span, moved, 2 * job.layers)
    else:
        # each GPU's share of its server's network cards (a 4-APU MI300A node's are 4 GPUs')
        node = topology.fabric(gpu).node
        per_gpu = topology.network(gpu).gbs / node * topology.COLLECTIVE_EFFICIENCY
        dp_s = moved / (per_gpu * 1e9) + 2 * job.layers * topology.LATENCY_S["network"]
    dp_s *= k / max(1, m)
    dp_x = overlapped_s(dp_s, window * job.backward_share) if lay.overlap_dp else dp_s
    comm = tp_s + cp_s + p2p_s + dp_s
    exposed = bubble + tp_x + cp_x + p2p_x + dp_x
    label = f"Megatron {lay.label} × DP{dp}, distributed optimizer"
    if lay.pp > 1:
        label += f" (pipeline bubble {bubble_fraction(lay.pp, lay.vp, m):.0%})"
    return Layout("megatron", label, comm, exposed)


# ---------------------------------------------------------------- memory per GPU
#
# Megatron-LM's own estimate, megatron/training/theoretical_memory_usage.py (NVIDIA/Megatron-LM,
# commit 00caa53): the most loaded GPU is on the first pipeline stage.


def shard_params(model: ModelSpec, lay: MegatronLayout) -> float:
    """Parameters on the most loaded GPU (``compute_weight_and_optimizer_memory``): the
    blocks' 1/pp plus the input embedding, split over TP; the untied output layer too when
    one stage holds the whole model."""
    embed, head = embedding_params(model)
    blocks = model.params - embed - head
    shard = blocks / lay.pp + embed + (head if lay.pp == 1 else 0.0)
    return shard / lay.tp


def state_bytes(
    model: ModelSpec, lay: MegatronLayout, n: int, *, wide: bool, optimizer_bytes: float
) -> tuple[float, float, float, float]:
    """(weights, gradients, master weights, optimizer states) in bytes on one GPU of ``n``:
    Megatron's 6 + 12/d bytes per parameter of the shard with the distributed optimizer — the
    16-bit weight (2) and its fp32 main gradient (4) on every GPU, the fp32 master copy (4) and
    Adam's two moments (``optimizer_bytes``, 8) sharded over the data-parallel group, which
    spans the CP ranks too (the distributed optimizer's group is data × context parallel). An
    fp32 job keeps fp32 weights and no master copy."""
    shard = shard_params(model, lay)
    group = max(1, n // lay.model_parallel) * lay.cp
    weights = shard * (4.0 if wide else 2.0)
    master = 0.0 if wide else shard * 4.0 / group
    return weights, shard * 4.0, master, shard * optimizer_bytes / group


def activation_bytes(
    model: ModelSpec,
    lay: MegatronLayout,
    *,
    micro_batch: int,
    seq: int,
    wide: bool,
    recompute: bool,
    flash_attention: bool,
) -> tuple[float, float]:
    """(activations, logits) in bytes on a first-stage GPU (``compute_activation_memory``,
    Korthikanti et al. 2022 Table 2, tensor + sequence parallel): per layer and micro-batch
    s·b·h·(18 + 4·ffn/h) bytes split over TP, ``L`` layers' worth in flight on the first stage
    (1F1B: ``pp`` micro-batches of L/pp layers; interleaved × (1 + (p − 1)/(p·v))), the
    embedding's input (8·s·b per micro-batch) and dropout mask (s·b·h), and with one stage
    the output layer's input and the loss, 4·s·b·h·(1 + V/h). Beyond Megatron's formula:
    context parallel splits the sequence ``cp`` ways; a gated MLP (SwiGLU, operators.is_gated)
    saves its two first-linear outputs, 6·ffn/h where GeLU's one saves 4·ffn/h (the same
    paper's per-tensor count); without a fused attention kernel the 5·a·s/h score bytes; full
    recompute keeps each layer's input, 2·s·b·h (the paper's Table 2), ÷ t because under
    sequence parallelism the stream between layers is split along s (its §4.2.2, Fig. 5), plus
    one layer recomputed at a time; fp32 jobs double every 16-bit tensor."""
    s = seq / lay.cp
    b = float(micro_batch)
    h = float(model.hidden_size or 0)
    ffn = float(model.intermediate_size or 4 * h)
    a = float(model.num_heads or 1)
    layers = float(model.layers or 0)
    sbh = s * b * h
    per_layer = sbh * (18.0 + (6.0 if is_gated(model) else 4.0) * ffn / h)
    if not flash_attention:
        per_layer += sbh * 5.0 * a * s / h
    stored = 2.0 * sbh if recompute else per_layer
    acts = stored * layers + 8.0 * s * b * lay.pp + sbh * lay.pp
    if lay.vp > 1:
        acts *= 1.0 + (lay.pp - 1) / (lay.pp * lay.vp)
    if recompute:
        acts += per_layer
    logits = 4.0 * sbh * (1.0 + float(model.vocab_size or 0) / h) if lay.pp == 1 else 0.0
    scale = 2.0 if wide else 1.0  # Megatron's loss is fp32 already
    return acts * scale / lay.tp, logits / lay.tp


def layout_that_fits(
    work: WorkloadSpec, n: int, usable_gb: float
) -> tuple[MegatronLayout, float] | None:
    """The smallest Megatron layout (TP × CP × PP GPUs per replica, tensor parallel up to a
    node's 8 first, then context parallel, then pipeline stages) whose memory per GPU on ``n``
    GPUs at one sequence per replica and micro-batch holds ``work`` in ``usable_gb``, with that
    memory; None where none does or the job is no full training of a decoder with a shape.
    What a refusal points to where sharding the states (FSDP) cannot hold a long context: every
    GPU keeps whole sequences' activations, which only context parallelism splits."""
    from dataclasses import replace

    from app.domain.workload import memory_breakdown

    m = work.model
    if not work.training or work.peft != "none" or m.family != "decoder" or not m.has_shape:
        return None
    tps = [t for t in (1, 2, 4, 8) if t <= n]
    shapes = [
        (tp, cp, pp)
        for tp in tps
        for cp in (1, 2, 4, 8, 16, 32)
        for pp in (1, 2, 4, 8, 16)
        if n % (tp * cp * pp) == 0 and tp * cp * pp > 1
    ]
    shapes.sort(key=lambda s: (s[0] * s[1] * s[2], s[2], s[1], -s[0]))
    for tp, cp, pp in shapes:
        lay = MegatronLayout(tp=tp, cp=cp, pp=pp)
        job = replace(work, runtime="megatron", megatron=lay, batch_size=n)
        need = memory_breakdown(job, num_gpus=n).total
        if need <= usable_gb:
            return lay, need
    return None


def fits_hint(work: WorkloadSpec, n: int, usable_gb: float, backends: tuple[str, ...]) -> str:
    """What a refusal of a decoder's full training on ``n`` > 1 GPUs adds where the job runs
    without a context-parallel layout: the Megatron layout that holds it (``layout_that_fits``,
    checkpointing added where it needs it); else what does not fit (``_what_misses``). "" where
    Megatron does not run (no CUDA) or a context-parallel layout is the job's already."""
    m = work.model
    own = work.megatron if work.runtime == "megatron" else None
    if n <= 1 or "cuda" not in backends or (own is not None and own.cp > 1):
        return ""
    if not work.training or work.peft != "none" or m.family != "decoder" or not m.has_shape:
        return ""
    found = layout_that_fits(work, n, usable_gb)
    extra = ""
    if found is None and not work.gradient_checkpointing:
        from dataclasses import replace

        found = layout_that_fits(replace(work, gradient_checkpointing=True), n, usable_gb)
        extra = " and gradient_checkpointing"
    if found is None:
        return _what_misses(work, n, usable_gb)
    lay, need = found
    return (
        f"; runtime 'megatron' with workload.megatron_layout {{tensor_parallel: {lay.tp}, "
        f"context_parallel: {lay.cp}, pipeline_parallel: {lay.pp}}}{extra} holds it at "
        f"{gib(need)} GiB per GPU (one sequence per micro-batch)"
    )


# The largest count a request may ask for (evaluate.COUNTS[-1], which imports this module)
_MOST_GPUS = 512


def _what_misses(work: WorkloadSpec, n: int, usable_gb: float) -> str:
    """Where no layout holds the job on ``n`` GPUs: what is too big at one sequence per GPU
    with checkpointing, sharded (FSDP/ZeRO-3). The model states (weights with FSDP's
    gathered layers, gradients, master weights, optimizer states) alone over ``usable_gb``:
    more GPUs, the fewest power-of-two count up to ``_MOST_GPUS`` that holds the job sharded
    (with 8-bit AdamW too where that takes fewer, as the engine would add it) — splitting the
    sequence frees none of the states. Else the long sequence's activations and logits are
    what miss: context parallelism splits them."""
    from dataclasses import replace

    from app.domain.workload import memory_breakdown

    def least(count: int, optimizer: str) -> tuple[float, float]:
        job = replace(work, batch_size=count, gradient_checkpointing=True, optimizer=optimizer)
        mem = memory_breakdown(job, num_gpus=count)
        return mem.total, mem.weights + mem.gradients + mem.optimizer + mem.master_weights

    def fewest(optimizer: str) -> int | None:
        count = 2 * n
        while count <= _MOST_GPUS and least(count, optimizer)[0] > usable_gb:
            count *= 2
        return count if count <= _MOST_GPUS else None

    states = least(n, work.optimizer)[1]
    if states <= usable_gb:
        return (
            "; the long sequence's activations are what miss, and splitting each sequence "
            "over GPUs is what holds long contexts: runtime 'megatron' with "
            "workload.megatron_layout.context_parallel"
        )
    count = fewest(work.optimizer)
    more = (
        f"no count up to {_MOST_GPUS} holds it sharded, as what each GPU keeps at any count "
        "(FSDP's gathered layers, one sequence's activations and logits) does not shrink: more "
        "GPUs under runtime 'megatron', whose workload.megatron_layout splits layers and "
        "sequence"
    )
    if count is not None:
        more = (
            f"{count} GPUs hold it sharded (FSDP/ZeRO-3, one sequence a GPU, gradient "
            "checkpointing)"
        )
        eight = fewest("adam8bit") if work.optimizer == "adamw" else None
        if eight is not None and eight < count:
            more += f", {eight} with 8-bit AdamW"
        more += ": raise constraints.max_gpus"
    return (
        "; the model states (weights, gradients, master weights, optimizer states) alone need "
        f"{gib(states)} GiB per GPU sharded over {n}, which splitting the sequence does not "
        f"shrink: {more}; FSDP's CPU offload of those states holds it only where said before "
        "this (the GPUs still hold the layers running, their activations and logits); "
        "DeepSpeed ZeRO-Offload and ZeRO-Infinity are not modelled"
    )

"""Megatron-Core's own layout of a training job (tensor × context × data × pipeline parallel)
and the time it adds to the engine's ideal per-GPU step (docs/methodology.md §"Megatron
layouts"). Priced per *engine micro-step* (perf.estimate's step: ``micro_batch × n`` sequences
over ``n`` GPUs), in which each data-parallel rank (``tp·cp·pp`` GPUs) runs ``k = tp·cp·pp``
Megatron micro-batches of ``mb`` sequences through every one of its stages.

* pipeline bubble — Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on
  GPU Clusters Using Megatron-LM", SC'21, §2.2): with ``m`` micro-batches per pipeline per
  optimizer step and ``v`` virtual stages (interleaved 1F1B), the bubble is (p−1)/(v·m) of the
  ideal compute time;
* pipeline p2p — each micro-batch crosses every stage boundary once forward (activation) and
  once backward (its gradient), ``v`` times per device under interleaving (the interleaved
  schedule's extra communication, same paper §2.2.2); the message is one micro-batch's
  [s/cp, mb, h] activation split over the tensor-parallel ranks (§4.1 scatter/gather);
  Megatron overlaps it with compute in the interleaved schedule only (``overlap_p2p_comm``);
* tensor + sequence parallel — Korthikanti et al. 2022 ("Reducing Activation Recomputation in
  Large Transformer Models", §4.2.2): sequence parallelism turns each of tensor parallelism's
  all-reduces into an all-gather plus a reduce-scatter of the same total bytes; four per layer
  per micro-batch (two forward, two backward; recompute adds two). On the critical path unless
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

from app.domain import topology
from app.domain.gpu import GpuSpec
from app.domain.parallelism import Job, Layout, fsdp, overlapped_s


@dataclass(frozen=True, slots=True)
class MegatronLayout:
    """How one Megatron replica spans GPUs, as a recipe states it. ``microbatches``: per
    pipeline per optimizer step (global batch ÷ (micro batch × data-parallel size)); 0: the
    job's accumulation steps. ``fsdp``: the data-parallel dimension is Megatron-FSDP (ZeRO-3),
    priced as the engine's FSDP layout (tp = pp = cp = 1 only)."""

    tp: int = 1
    pp: int = 1
    vp: int = 1
    cp: int = 1
    microbatches: int = 0
    tp_comm_overlap: bool = False
    overlap_dp: bool = False
    fsdp: bool = False

    @property
    def model_parallel(self) -> int:
        return self.tp * self.pp * self.cp

    @property
    def label(self) -> str:
        if self.fsdp:
            return "Megatron-FSDP"
        return f"TP{self.tp} PP{self.pp} VP{self.vp} CP{self.cp}"


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


def bubble_fraction(pp: int, vp: int, m: int) -> float:
    """Narayanan et al. 2021: pipeline bubble ÷ ideal compute = (p − 1) / (v · m)."""
    return 0.0 if pp <= 1 else (pp - 1) / (max(1, vp) * max(1, m))


def tp_bytes(lay: MegatronLayout, job: Job) -> float:
    """Bytes one GPU sends per engine micro-step in TP(+SP) collectives: ``k`` micro-batches ×
    L/pp layers × (4, recompute 6) all-reduce-equivalents of the [s/cp, mb, h] activation."""
    if lay.tp <= 1:
        return 0.0
    per_layer = 4 + (2 if job.recompute else 0)
    k = lay.model_parallel
    act = job.act_bytes_per_layer / lay.cp
    return k * job.layers / lay.pp * per_layer * topology.ring_allreduce_bytes(lay.tp, act)


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
    m = lay.microbatches or job.accumulation_steps
    k = mp  # Megatron micro-batches each GPU runs per engine micro-step
    window = job.compute_s
    bubble = window * bubble_fraction(lay.pp, lay.vp, m)
    # tensor parallel: ranks 0..tp-1 (innermost); two calls (AG + RS) per all-reduce under SP
    calls_tp = k * job.layers / lay.pp * (4 + (2 if job.recompute else 0)) * 2
    tp_s = _group_s(gpu, lay.tp, tp_bytes(lay, job), calls_tp) if lay.tp > 1 else 0.0
    tp_x = overlapped_s(tp_s, window) if lay.tp_comm_overlap else tp_s
    # context parallel: tp ranks apart, the group spans tp·cp ranks
    calls_cp = k * job.layers / lay.pp * 2
    cp_s = (
        _group_s(gpu, lay.tp * lay.cp, cp_bytes(lay, job, kv_ratio), calls_cp)
        if lay.cp > 1
        else 0.0
    )
    cp_x = overlapped_s(cp_s, window)
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
    elif span <= topology.NODE_GPUS or topology.nodes(gpu, span) <= 1:
        dp_s = _group_s(gpu, span, moved, 2 * job.layers)
    else:
        per_gpu = topology.network(gpu).gbs / topology.NODE_GPUS * topology.COLLECTIVE_EFFICIENCY
        dp_s = moved / (per_gpu * 1e9) + 2 * job.layers * topology.LATENCY_S["network"]
    dp_s *= k / max(1, m)
    dp_x = overlapped_s(dp_s, window * job.backward_share) if lay.overlap_dp else dp_s
    comm = tp_s + cp_s + p2p_s + dp_s
    exposed = bubble + tp_x + cp_x + p2p_x + dp_x
    label = f"Megatron {lay.label} × DP{dp}, distributed optimizer"
    if lay.pp > 1:
        label += f" (pipeline bubble {bubble_fraction(lay.pp, lay.vp, m):.0%})"
    return Layout("megatron", label, comm, exposed)

"""How a training job spans N GPUs, and the communication it leaves exposed per step.

The layouts people run (formulas and sources in docs/methodology.md §"Multi-node training"):

* ``ddp`` — the job fits one GPU: every GPU holds the model, the gradients are all-reduced in
  buckets during backward (PyTorch DDP, Li et al. 2020, "PyTorch Distributed", VLDB; 25 MB
  buckets by default), once per global batch;
* ``fsdp`` — the job needs several GPUs' memory: weights, gradients and optimizer states
  sharded over all N (FSDP FULL_SHARD / ZeRO-3): the 16-bit weights are all-gathered in forward
  and again in backward, the gradients reduce-scattered (Zhao et al. 2023, "PyTorch FSDP");
* ``hsdp`` — sharded inside a shard group of whole nodes (8 GPUs on NVLink/NVSwitch, or more
  when 8 cannot hold it) and replicated across groups (FSDP HYBRID_SHARD): the all-gathers and
  reduce-scatters stay inside the group, and one all-reduce of each GPU's gradient shard per
  global batch crosses the network;
* ``tp`` — tensor parallel over the GPUs of one node (Megatron-LM, Shoeybi et al. 2019;
  Narayanan et al. 2021 keep it inside a node, as its all-reduces sit on the critical path) ×
  sharded data parallel across nodes: four activation all-reduces per layer per micro-step on
  the node's link, not overlapped; the weight shards are gathered across nodes as in FSDP.

Communication that runs beside compute is hidden behind the compute it can run beside (DDP: the
backward pass; FSDP/HSDP: forward prefetch and backward), except a tail that cannot be (DDP: the
last bucket; FSDP: the first layer's gather and the last layer's reduce-scatter); the compute
it hides behind runs ``INTERFERENCE`` slower while the collective runs (``overlapped_s``).
Without PCIe peer-to-peer, NCCL copies every transfer through host memory and nothing is hidden
(Lambda's 2× RTX 4090 BERT-large, 1.49×, is what no overlap predicts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.domain import topology
from app.domain.gpu import GpuSpec

if TYPE_CHECKING:
    from app.domain.workload import MemoryBreakdown, WorkloadSpec

# Compute-communication interference: compute that runs beside an NCCL collective is slower than
# alone. NCCL runs one thread block per channel, each holding an SM it shares with no compute
# kernel (up to 16 SMs on a DGX with 8 NICs: NCCL maintainer, github.com/NVIDIA/nccl/issues/689),
# and every byte it moves is written to and read back from HBM (2–3× the link rate, the same
# maintainer, nccl issue #1428). Measured: Lee et al. 2025, "Characterizing Compute-Communication
# Overlap in GPU-Accelerated Distributed Deep Learning: Performance and Power Implications"
# (arXiv:2507.03114, GPT and Llama training on 4× A100, H100, MI250, MI210): compute overlapped
# with communication runs 18.9 % slower on average than alone (at most 40 %). The average, for
# every GPU and layout: the paper's per-GPU split is not in the material at hand.
INTERFERENCE = 0.189
DDP_BUCKET_BYTES = 25 * 1024 * 1024  # torch DistributedDataParallel bucket_cap_mb=25 (default)
# Megatron-LM tensor parallelism: two all-reduces per layer in forward (attention, MLP) and two
# in backward (Shoeybi et al. 2019, §3); a recomputed forward adds two more.
TP_ALLREDUCES_PER_LAYER = 4


@dataclass(frozen=True, slots=True)
class Job:
    """What a training step moves and computes per GPU, independent of the layout."""

    grad_bytes: float  # trainable gradients, as reduced
    weight_bytes: float  # weights as gathered (16-bit, 32-bit, or NF4 for QLoRA)
    layers: int
    compute_s: float  # one micro-step's compute on one GPU of the N
    backward_share: float  # of compute_s: the backward pass (2/3; 3/4 with recompute)
    accumulation_steps: int = 1
    act_bytes_per_layer: float = 0.0  # one layer's activations per micro-step (TP traffic)
    recompute: bool = False
    batch: float = 0.0  # sequences per micro-step over all N GPUs (0: not stated)


@dataclass(frozen=True, slots=True)
class Layout:
    name: str  # ddp | fsdp | hsdp | tp
    label: str  # in words, for explanations
    comm_s: float  # communication per micro-step, before overlap
    exposed_s: float  # what the step waits for
    network_s: float = 0.0  # of comm_s, the time the node's NICs are busy (0: one node)
    # the GPUs that share one copy of the model states, where fewer than all: 1 under DDP
    # (every GPU a whole copy), the shard group under HSDP; 0: all of them (FSDP, TP × FSDP)
    shard_group: int = 0


def overlapped_s(comm: float, window: float) -> float:
    """What ``comm`` seconds of collectives add to ``window`` seconds of compute they run beside:
    while they run, the compute goes at 1/(1 + INTERFERENCE) of its rate, so a collective that
    ends inside the (slowed) window costs comm × INTERFERENCE/(1 + INTERFERENCE), and one that
    outlasts it costs what it outlasts the unslowed window by (the two meet at
    comm = window × (1 + INTERFERENCE))."""
    if comm <= 0.0:
        return 0.0
    return max(comm - window, comm * INTERFERENCE / (1.0 + INTERFERENCE))


def _exposed(comm: float, window: float, tail: float, hides: bool) -> float:
    if not hides:
        return comm
    tail = min(comm, tail)
    return min(comm, tail + overlapped_s(comm - tail, window))


def ddp(gpu: GpuSpec, n: int, job: Job) -> Layout:
    steps = max(1, job.accumulation_steps)
    full = topology.allreduce_s(gpu, n, job.grad_bytes)
    tail = topology.allreduce_s(gpu, n, min(job.grad_bytes, DDP_BUCKET_BYTES))
    # the all-reduce runs in the last micro-step's backward only (no_sync before it)
    exposed = _exposed(full, job.compute_s * job.backward_share, tail, _hides(gpu, n))
    net = _nic_s(gpu, n, topology.ring_allreduce_bytes(n, job.grad_bytes))
    return Layout("ddp", "data parallel (DDP)", full / steps, exposed / steps, net / steps, 1)


def fsdp(gpu: GpuSpec, n: int, job: Job) -> Layout:
    gather = 2.0 * topology.allgather_s(gpu, n, job.weight_bytes, job.layers)
    # sharded gradients are reduce-scattered in every micro-step's backward: skipping the sync
    # (FSDP's no_sync) would keep whole unsharded gradients on every GPU, which the memory model
    # does not count; ZeRO-3 and FSDP2 without set_requires_gradient_sync(False) do the same
    reduce = topology.allgather_s(gpu, n, job.grad_bytes, job.layers)
    comm = gather + reduce
    tail = (gather / 2.0 + reduce) / max(1, job.layers)
    exposed = _exposed(comm, job.compute_s, tail, _hides(gpu, n))
    moved = topology.allgather_bytes(n, 2.0 * job.weight_bytes) + topology.allgather_bytes(
        n, job.grad_bytes
    )
    label = f"fully sharded over all {n} GPUs (FSDP)"
    return Layout("fsdp", label, comm, exposed, _nic_s(gpu, n, moved))


def hsdp(gpu: GpuSpec, n: int, group: int, job: Job) -> Layout:
    """Sharded over ``group`` GPUs (whole nodes), replicated ``n // group`` times."""
    steps = max(1, job.accumulation_steps)
    # the in-group reduce-scatter runs every micro-step (fsdp()); the all-reduce across replicas
    # waits for the last one (FSDP2's set_requires_all_reduce(False) before it): the shards it
    # accumulates stay sharded
    inside = fsdp(gpu, group, job)
    across = topology.replicas_allreduce_s(gpu, n // group, job.grad_bytes / group)
    # the cross-node all-reduce of each gradient shard follows its reduce-scatter in the last
    # micro-step's backward, in whatever of that window the in-group collectives leave free
    if _hides(gpu, n):
        free = max(0.0, job.compute_s - inside.comm_s)
        last = across / max(1, job.layers)
        late = min(across, last + overlapped_s(across - last, free))
    else:
        late = across
    comm = inside.comm_s + across / steps
    exposed = inside.exposed_s + late / steps
    return Layout(
        "hsdp",
        f"sharded over {group} GPUs, replicated {n // group}× (HSDP)",
        comm,
        exposed,
        inside.network_s + across / steps,
        group,
    )


def tensor_parallel(gpu: GpuSpec, n: int, tp: int, job: Job) -> Layout:
    """Tensor parallel over ``tp`` GPUs of a node × sharded data parallel over the rest."""
    per_layer = TP_ALLREDUCES_PER_LAYER + (2 if job.recompute else 0)
    # the tp GPUs of a group work on the same samples: each holds tp × its share of the batch
    act = job.act_bytes_per_layer * tp
    calls = per_layer * job.layers
    tp_s = topology.allreduce_s(gpu, tp, act * calls, calls) if act > 0 else 0.0
    dp = n // tp
    shard = Job(
        grad_bytes=job.grad_bytes / tp,
        weight_bytes=job.weight_bytes / tp,
        layers=job.layers,
        compute_s=job.compute_s,
        backward_share=job.backward_share,
        accumulation_steps=job.accumulation_steps,
    )
    across = _across_nodes_fsdp(gpu, dp, shard)
    return Layout(
        "tp",
        f"tensor parallel over {tp} GPUs in each node × sharded data parallel over {dp} nodes",
        tp_s + across.comm_s,
        tp_s + across.exposed_s,
        across.comm_s,
    )


def _across_nodes_fsdp(gpu: GpuSpec, m: int, job: Job) -> Layout:
    """FSDP among one GPU per node (``m`` nodes), each through its share of the NICs."""
    # all-gather of W sharded m ways moves (m−1)/m × W per GPU: half an all-reduce's bytes
    gather = 2.0 * topology.replicas_allreduce_s(gpu, m, job.weight_bytes / 2.0, job.layers)
    reduce = topology.replicas_allreduce_s(gpu, m, job.grad_bytes / 2.0, job.layers)
    comm = gather + reduce  # every micro-step, as in fsdp()
    tail = (gather / 2.0 + reduce) / max(1, job.layers)
    return Layout("fsdp", "", comm, _exposed(comm, job.compute_s, tail, True))


def _nic_s(gpu: GpuSpec, n: int, moved: float) -> float:
    """Time the node's NICs carry a ring collective moving ``moved`` bytes per GPU over ``n``
    GPUs (each NIC its ring's share); 0 inside one node."""
    if topology.nodes(gpu, n) <= 1:
        return 0.0
    return moved / (topology.network(gpu).gbs * topology.COLLECTIVE_EFFICIENCY * 1e9)


def _hides(gpu: GpuSpec, n: int) -> bool:
    """Whether collectives among ``n`` of these GPUs can run beside compute: not when NCCL
    stages every byte through host memory (no PCIe peer-to-peer)."""
    return topology.link(gpu, min(n, topology.NODE_GPUS)).kind != "pcie-host"


def choose(
    gpu: GpuSpec, n: int, job: Job, *, sharded: bool, shard_min: int | None, tp_ok: bool
) -> Layout:
    """The layout people run for this job on ``n`` GPUs: the one with the least exposed
    communication among those whose memory fits (on a near tie, the least network traffic).
    ``shard_min``: the fewest GPUs whose memory holds the sharded job (``None``: all ``n``);
    ``tp_ok``: the model has the shape tensor parallelism splits (a transformer with known
    width)."""
    if n <= 1:
        return Layout("single", "one GPU", 0.0, 0.0)
    if not sharded:
        return ddp(gpu, n, job)
    options = [fsdp(gpu, n, job)]
    per = topology.NODE_GPUS
    need = n if shard_min is None else max(1, shard_min)
    if topology.nodes(gpu, n) > 1:
        group = per
        while group < n and group < need:
            group *= 2
        if group < n and n % group == 0:
            options.append(hsdp(gpu, n, group, job))
        if tp_ok and n % per == 0 and need > per:
            options.append(tensor_parallel(gpu, n, per, job))
    # what is hidden costs nothing: among layouts whose exposed time is within 1 % of the
    # step of the least exposed, the one that loads the network least (HSDP keeps its gathers
    # on NVLink where FSDP crosses nodes with them)
    best = min(lay.exposed_s for lay in options)
    close = [lay for lay in options if lay.exposed_s <= best + 0.01 * (job.compute_s + best)]
    return min(close, key=lambda lay: (lay.network_s, lay.comm_s))


# FSDP parameter CPU offload (torch FSDP ``CPUOffload(offload_params=True)``; Answer.AI's
# fsdp_qlora ``--use_cpu_offload``, github.com/AnswerDotAI/fsdp_qlora, benchmarks_03_2024.md:
# Llama-2 70B QLoRA, context 2048, batch 2 a GPU on 2× RTX 3090/4090 at 14.92 GiB a GPU).
# Each GPU's shard of every FSDP unit lives in pinned host memory, beside a pinned gradient
# buffer of the same size allocated for every flat parameter ("Pin the memory for faster H2D
# transfer" / "Pre-allocate the sharded gradient on CPU", FlatParamHandle in
# github.com/pytorch/pytorch/blob/main/torch/distributed/fsdp/_flat_param.py); the optimizer
# steps on the CPU over the offloaded shards and gradients. Before a unit runs, its shard is
# copied host→device and all-gathered: in forward and again in backward (a checkpointed
# layer's recompute runs inside that backward gather). The GPU keeps what the unit running
# needs: the gathered layers (two: the running one and the prefetched next) and the root unit
# (workload.fsdp_block_bytes / fsdp_root_bytes), their gradients, the activations.
OFFLOAD_PASSES = 2.0  # host→device copies of each shard per micro-step: forward, backward


@dataclass(frozen=True, slots=True)
class Offload:
    gpu_gb: float  # per GPU, in 10^9 bytes: what stays on the device
    host_gb: float  # host RAM the offloaded states take over all ``n`` GPUs (one node)
    copy_gb: float  # per GPU per micro-step: shards host→device, gradient shards back
    copy_s: float  # that traffic's seconds over the card's host link


def cpu_offload(gpu: GpuSpec, work: WorkloadSpec, n: int, mem: MemoryBreakdown) -> Offload:
    """The job sharded over ``n`` GPUs with FSDP's parameter CPU offload. ``mem``: its memory
    per GPU without offload (workload.memory_breakdown at ``n``), whose model states (sharded
    weights, gradients, optimizer, master weights, adapters) move to the host but for the
    units the GPU is running."""
    from app.domain import workload as wl
    from app.domain.perf import host_bandwidth_gbs

    block, block_grad = wl.fsdp_block_bytes(work)
    root, root_grad = wl.fsdp_root_bytes(work)
    held = wl.FSDP_BLOCKS_GATHERED * block + root
    held += wl.FSDP_BLOCK_GRADIENTS * block_grad + root_grad
    states = mem.weights + mem.gradients + mem.optimizer + mem.master_weights + mem.adapters
    gpu_gb = mem.total - states + held / wl.GB
    stored, trainable, grad_b = _stored_bytes(work)
    opt_b = wl.OPTIMIZER_BYTES.get(work.optimizer, 8.0)
    host = 2.0 * stored + trainable * opt_b  # pinned shards + equal pinned grads + optimizer
    copied = (OFFLOAD_PASSES * stored + trainable * grad_b) / max(1, n)
    link = host_bandwidth_gbs(gpu, None) or float("inf")
    return Offload(gpu_gb, host / wl.GB, copied / wl.GB, copied / (link * 1e9))


def _stored_bytes(work: WorkloadSpec) -> tuple[float, float, float]:
    """(parameters as the host keeps them, trainable parameters, bytes of each one's
    gradient): QLoRA's base in NF4 with 16-bit embeddings and head, a LoRA base at its width,
    fp32 adapters; a fully trained model's fp32 parameters (the master copy mixed precision
    keeps; 16-bit for a half-precision model)."""
    from app.domain import workload as wl

    m = work.model
    if work.peft in ("lora", "qlora"):
        adapters = wl.job_lora_params(work)
        if work.peft == "qlora":
            base = wl.qlora_base_bytes(work)
        else:
            base = m.params * (2.0 if work.precision == "fp8" else wl.BYTES[work.precision])
        return base + adapters * 4.0, adapters, 4.0
    wide = work.precision in ("fp32", "tf32") or not work.half_weights
    return m.params * (4.0 if wide else 2.0), m.params, 4.0 if wide else 2.0

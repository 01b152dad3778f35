"""How GPUs of one model talk to each other, and what that costs a multi-GPU job.

A *fabric* is what the catalog says about a GPU's links (``interconnect``, ``interconnect_gbs``,
``form_factor``, ``pcie_gen``/``pcie_lanes``), read into: the fast domain (how many GPUs one
fast link joins: an NVLink bridge pair, an 8-GPU NVSwitch/Infinity Fabric baseboard, a DGX-1's
NVLink cube-mesh, an NVL72 rack), its per-direction bandwidth (over a switchless mesh, AMD's
xGMI boards, only the links among a group's GPUs: ``Fabric.mesh_share``), whether PCIe
peer-to-peer works at all, and how many GPUs one server holds (``NODE_GPUS``, unless the catalog
names the part's node: the MI300A's "4-APU node", ``GpuSpec.node_gpus``). A group of N GPUs is
as fast as the slowest hop in it: the fast link while N fits the domain, PCIe inside one server
beyond it, and the network beyond one server (a node's NICs: ``network``). A GeForce, TITAN or
workstation card's NVLink bridge is an accessory no offer states, so such cards are priced over
PCIe; ``accessory_bridge`` says what the bridge would give a pair.

Bytes per step come from the parallelism that carries the job (formulas in
docs/methodology.md §"Multi-GPU scaling"):

* training (data parallel, FSDP, HSDP, tensor parallel × FSDP): the layouts and their overlap
  with compute are in parallelism.py; this module times their collectives, inside a node over
  its slowest hop and across nodes over the node's NICs (``network``, ``allreduce_s``,
  ``allgather_s``, ``replicas_allreduce_s``);
* tensor parallel (LLM inference): two all-reduces of the activations per layer per token,
  2·L × 2·(N−1)/N × batch × hidden × 2 bytes, each also paying the collective's latency;
  tensor parallelism stays inside one server (8 GPUs), and beyond it the stages are pipelined.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass
from functools import lru_cache

from app import vocab
from app.domain.gpu import GpuSpec

PCIE_GBS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}  # x16, per direction, after encoding
# NCCL reaches ~80 % of a link's per-direction bandwidth as all-reduce bus bandwidth
# (nccl-tests on DGX H100: ~360-370 GB/s of 450; on PCIe Gen4 x16 ~20-24 GB/s of 31.5).
COLLECTIVE_EFFICIENCY = 0.80
# Without PCIe peer-to-peer, NCCL stages every transfer through pinned host memory: each byte
# crosses PCIe twice (device→host, host→device) on the same links.
HOST_STAGED_FACTOR = 0.5
# A node: 8 GPUs per server (HGX/DGX, OAM/UBB baseboards, 8-slot workstation servers), unless
# the catalog's interconnect text names the part's node (GpuSpec.node_gpus: the MI300A's
# "4-APU node", AMD's CDNA 3 white paper), which is then its fast domain and its server.
# Multi-die modules are catalogued per device software sees (an MI250X GCD, a Max 1550
# stack), so a node of 4 MI250X modules is these 8.
NODE_GPUS = 8
# Beyond one node: the compute fabric of the reference server, per node and per direction, in
# GB/s (Gb/s ÷ 8). DGX-1 (V100): 4× 100 Gb/s EDR InfiniBand = 50; DGX A100: 8× 200 Gb/s HDR
# (ConnectX-6) = 200; DGX H100/H200/B200: 8× 400 Gb/s NDR (ConnectX-7, one per GPU) = 400 (NVIDIA
# DGX datasheets; DGX BasePOD reference architecture). Other baseboard parts (OAM/UBB, Gaudi) are
# assumed to get the DGX H100 design (one 400 Gb/s NIC per GPU), everything else one 100 GbE
# link per server (assumptions, stated in every explanation that uses them).
NODE_NETWORK_GBS = {"7.0": 50.0, "8.0": 200.0}
NETWORK_GBS_PER_NODE_DATACENTER = 400.0
NETWORK_GBS_PER_NODE_OTHER = 12.5
# Datacenter PCIe cards (L4, A10, T4, L40S, A100/H100 PCIe, H100/H200 NVL, MI210) sit in PCIe
# servers whose NICs serve the box, not one per GPU: the clouds' 8-card instances list 100 Gb/s
# per instance (AWS g5.48xlarge, 8x A10G: 100 Gbps, AWS Batch user guide "Run GPU jobs",
# docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html; Google Cloud G2 (L4) and N1 (T4,
# V100): up to 100 Gbps, "Networking and GPU machines",
# cloud.google.com/compute/docs/gpus/gpu-network-bandwidth; both read 2026-12-05).
# Giving them a DGX H100's 8x 400 Gb/s scaled 16 L4s better than a DGX A100. The newest PCIe
# nodes reach 400 Gb/s (Google G4, 8x RTX PRO 6000, same page), still an eighth of a DGX H100.
NETWORK_GBS_PER_NODE_PCIE = 12.5
# Small-message latency of one all-reduce step: NVLink/NVSwitch ~10 µs, PCIe with P2P ~20 µs,
# host-staged ~40 µs, network ~30 µs (nccl-tests small-size rows; orders of magnitude, not fits).
LATENCY_S = {"fast": 10e-6, "pcie-p2p": 20e-6, "pcie-host": 40e-6, "network": 30e-6}
# Over PCIe those are the eight-GPU figures: NCCL runs a small all-reduce there as a ring of
# 2·(N−1) steps, and its own tuning model prices a ring LL call at a base latency plus a
# per-hop latency for each step (src/graph/tuning.cc: baseLat Ring/LL 6.6 µs, hwLat PCI
# Ring/LL 1.0 µs). Fewer GPUs take that model's share of the eight-GPU call: 2 GPUs
# (6.6 + 2 × 1.0) ÷ (6.6 + 14 × 1.0) = 0.42 of it. NVLink and NVSwitch groups keep one figure
# for any size: the serving runtimes' custom all-reduce there reads every peer in one step
# (TensorRT-LLM's and vLLM's one-shot kernels), and a training all-reduce is bandwidth-bound.
NCCL_RING_BASE_US = 6.6
NCCL_PCI_HOP_US = 1.0
# How a priced PCIe peer-to-peer link is named (``link``): P2P is the host's to allow
P2P_ASSUMED_LABEL = "PCIe P2P (host permitting)"
# Segments whose NVLink bridge is an accessory: a GeForce, TITAN or workstation pair is joined
# only by a bridge bought separately, in the size that matches the two cards' slot spacing
# (Puget Systems, "NVIDIA NVLink 2021 Update and Compatibility Chart", 2021-02-24: "NVLink
# requires a physical bridge between the cards"; GeForce RTX 3090 4-slot, RTX A6000 2- and
# 3-slot bridges. TechPowerUp, RTX 2080 Ti NVLink review: two sizes "depending on how much
# spacing there is", $79). Neither a bought card nor a rented marketplace box states one, so
# these pairs are priced over the card's PCIe path. The datacenter PCIe parts (A30, A40, A100
# PCIe, H100 NVL, H200 NVL) keep theirs: assumed fitted by the server's builder, not checked
# per offer.
ACCESSORY_BRIDGE_SEGMENTS = vocab.ACCESSORY_BRIDGE_SEGMENTS


# Switchless meshes. Each MI300X has seven xGMI links of 64 GB/s per direction (128 GB/s
# bidirectional; 7 × 128 = the catalog's 896), one to each of the other seven GPUs of its board:
# "connected to its seven peer GPUs via xGMI links, forming a fully connected mesh" (the ROCm
# blog of RCCL_MI300X_X8_ALLREDUCE_US below); the MI325X sits on the same UBB. The MI355X's
# board is "a point-to-point network of 153.6 GB/s links connecting each package with every
# other package" (TechPowerUp, data/gpus/amd.yaml tpu-mi350-silicon), and the MI300A's 4-APU
# node is "fully connected to its peers using two AMD Infinity Fabric links" (AMD CDNA 3 white
# paper, amd-cdna3-whitepaper). No switch joins them, so a collective over k of the GPUs rides
# only the k − 1 links among them: 2 MI300X get one 64 GB/s link, 4 get three, where an
# NVSwitch gives any subset each GPU's whole NVLink bandwidth. The same blog: "When performing
# collective operations with only 2 or 4 GPUs, only a fraction of the available bandwidth on
# the node is utilized." The generic 80 % then applies per link (51 GB/s of 64; the blog's
# TransferBench measured 45-48 a link), the measured curve only at the 8 it was measured on.
@dataclass(frozen=True, slots=True)
class Fabric:
    # nvswitch | nvlink-mesh | nvl72 | nvlink-bridge | infinity-fabric | xe-link | roce | pcie
    # | unified
    kind: str
    domain: int  # GPUs one fast link joins (1: none)
    link_gbs: float | None  # per GPU, per direction, inside the fast domain; None: unknown
    p2p: bool  # PCIe peer-to-peer between cards works with the stock driver
    pcie_gbs: float  # per direction, this card's slot
    node: int = NODE_GPUS  # GPUs one server holds (its NICs are theirs: ``network``)
    # a switchless full mesh: each GPU's ``link_gbs`` is split evenly over one link (set) to
    # each of its domain − 1 peers, so a group of k uses only the k − 1 among it (``mesh_share``)
    mesh: bool = False

    def mesh_share(self, n: int) -> float:
        """The share of ``link_gbs`` a collective over ``n`` GPUs of the domain can drive: all of
        it through a switch, (n − 1)/(domain − 1) of it over a full mesh's direct links."""
        if not self.mesh or n >= self.domain:
            return 1.0
        return (n - 1) / (self.domain - 1)

    def group_label(self, n: int) -> str:
        """The link a group of ``n`` GPUs of the domain rides, named by the GPUs the group has:
        a 4-GPU H100 SXM slice had read "NVLink/NVSwitch, 8 GPUs"; over a switchless mesh,
        the links it uses."""
        if self.mesh_share(n) == 1.0:
            return self._named(min(n, self.domain))
        name = self.label.split(",")[0]
        return f"{name} mesh, {n - 1} of {self.domain - 1} links per GPU"

    @property
    def label(self) -> str:
        return self._named(self.domain)

    def _named(self, gpus: int) -> str:
        return {
            "nvswitch": f"NVLink/NVSwitch, {gpus} GPUs",
            "nvlink-mesh": f"NVLink hybrid cube-mesh, {gpus} GPUs",
            "nvl72": f"NVLink rack, {gpus} GPUs",
            "nvlink-bridge": f"NVLink bridge, {gpus} GPUs",
            "infinity-fabric": f"Infinity Fabric, {gpus} GPUs",
            "xe-link": f"Xe Link, {gpus} GPUs",
            "roce": f"on-chip RoCE, {gpus} GPUs",
            "unified": "one device",
        }.get(self.kind, "PCIe" + ("" if self.p2p else " without peer-to-peer"))


@dataclass(frozen=True, slots=True)
class Link:
    """The slowest hop a group of GPUs uses, as a collective sees it."""

    kind: str  # fast | pcie-p2p | pcie-host | network | none
    gbs: float  # effective per-direction GB/s for collectives
    latency_s: float
    label: str
    # a measured all-reduce curve of this group, (payload bytes, seconds) by size, and the
    # GPU count it was measured on (``measured_allreduce_s``); () where none was published
    allreduce_curve: tuple[tuple[float, float], ...] = ()
    curve_ranks: int = 0


# One all-reduce on an 8 × MI300X node (xGMI: seven 64 GB/s links per GPU, a fully connected
# mesh), by payload size: rccl-tests all_reduce_perf -b 8 -e 16G -f 2 -g 1 -G 1 (one process
# per GPU, graph mode, float sum, out-of-place time), RCCL 2.22.3, ROCm 6.3 — AMD ROCm blog
# "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X" (2025-03-02;
# github.com/ROCm/rocm-blogs blogs/software-tools-optimization/mi300x-rccl-xgmi/README.md at
# c263176657bb16a54a709b3fe75144f603433a1a). The generic rule (80 % of the per-direction link,
# 358 GB/s, + 10 µs a call) is NCCL's on NVLink; the measured curve is slower at every size an
# LLM step moves: CRC and protocol overhead leave 45-48 of each link's 64 GB/s (bus bandwidth
# capped at 310-330 GB/s even for GiB payloads), and a 1-64 MiB payload — a tensor-parallel
# layer's activations at a serving batch — reaches only 95-275 GB/s of bus bandwidth (16 MiB:
# 149 µs where the generic rule gives 92). Payload bytes -> µs.
RCCL_MI300X_X8_ALLREDUCE_US: tuple[tuple[float, float], ...] = (
    (8, 16.38), (16, 15.75), (32, 6.32), (64, 6.00), (128, 6.53), (256, 6.77), (512, 7.44),
    (1024, 7.47), (2048, 7.46), (4096, 7.61), (8192, 7.64), (16384, 8.71), (32768, 9.05),
    (65536, 9.14), (131072, 9.51), (262144, 10.26), (524288, 14.26), (1048576, 19.40),
    (2097152, 35.03), (4194304, 51.83), (8388608, 83.74), (16777216, 149.1),
    (33554432, 243.4), (67108864, 427.9), (134217728, 795.3), (268435456, 1534.4),
    (536870912, 3024.0), (1073741824, 5961.9), (2147483648, 11880.0), (4294967296, 23658.0),
    (8589934592, 47244.0), (17179869184, 94182.0),
)  # fmt: skip


def _measured_curve(gpu: GpuSpec, f: Fabric) -> tuple[tuple[float, float], ...]:
    """The published all-reduce curve of this GPU's fabric: an 8-GPU CDNA 3 Infinity Fabric
    node with the MI300X's link set (7 × 128 GB/s bidirectional, the catalog's 896: the MI325X
    sits on the same UBB mesh), else ()."""
    mi300x_links = gpu.architecture == "CDNA 3" and gpu.interconnect_gbs == 896
    if f.kind == "infinity-fabric" and f.domain == NODE_GPUS and mi300x_links:
        return tuple((b, us * 1e-6) for b, us in RCCL_MI300X_X8_ALLREDUCE_US)
    return ()


def measured_allreduce_s(lk: Link, n: int, nbytes: float) -> float | None:
    """Seconds of one all-reduce of ``nbytes`` (the payload each GPU holds) over ``n`` GPUs
    where the link carries a curve measured on that many: log-log interpolation between the
    measured sizes, the smallest size's time below them, the largest size's bus bandwidth
    beyond them. None where there is no such curve (``comm_seconds`` prices it)."""
    curve = lk.allreduce_curve
    if not curve or n != lk.curve_ranks or nbytes <= 0:
        return None
    if nbytes <= curve[0][0]:
        return curve[0][1]
    if nbytes >= curve[-1][0]:
        return curve[-1][1] * nbytes / curve[-1][0]
    i = bisect.bisect_left([b for b, _ in curve], nbytes)
    (b0, t0), (b1, t1) = curve[i - 1], curve[i]
    w = math.log(nbytes / b0) / math.log(b1 / b0)
    return math.exp(math.log(t0) + w * math.log(t1 / t0))


def _bridge_size(text: str) -> int | None:
    m = re.search(r"(\d)\s*(?:gpus|-way)", text)
    if "2- or 4-way" in text:
        return 4
    return int(m.group(1)) if m else None


@lru_cache(maxsize=8192)  # read for every collective of every configuration (see link)
def fabric(gpu: GpuSpec) -> Fabric:
    """The GPU's fabric, read from its catalog fields (sourced there)."""
    text = f"{gpu.interconnect or ''} | {gpu.form_factor or ''}".lower()
    pcie = PCIE_GBS.get(gpu.pcie_gen or 4, 31.5) * (gpu.pcie_lanes or 16) / 16
    # GeForce cards: the stock NVIDIA driver does not enable PCIe peer-to-peer (P2P works only
    # with the community-patched tinygrad/open-gpu-kernel-modules for 3090/4090/5090). Arc
    # cards in a desktop: the consumer host's root complex does not route peer traffic between
    # its root ports, so Linux's pci_p2pdma refuses it and Level Zero copies card to card
    # through host memory (github.com/intel/compute-runtime issue #935, two Arc Pro B70s on a
    # Rocket Lake host; forcing it corrupted data, as peer copies did on four B70s, #942).
    # Radeon stays P2P: ROCm's answers tie it to large BAR and the platform, not the card.
    p2p = not (gpu.vendor in ("nvidia", "intel") and gpu.segment in ("consumer", "laptop"))
    per_dir = gpu.interconnect_gbs / 2 if gpu.interconnect_gbs else None  # catalog: bidirectional
    # a baseboard's fabric joins the whole server: 8 GPUs, or the node the catalog names
    node = gpu.node_gpus or NODE_GPUS
    if gpu.vendor == "apple" or gpu.segment in ("soc", "laptop"):
        return Fabric("unified", 1, None, False, pcie)
    if "bridge" in text and _bridge_is_accessory(gpu):
        return Fabric("pcie", 1, None, p2p, pcie, node)  # the bridge: ``accessory_bridge``
    if "bridge" in text:
        size = _bridge_size(text) or (4 if "infinity fabric" in text else 2)
        kind = "infinity-fabric" if "infinity fabric" in text else "nvlink-bridge"
        return Fabric(kind, size, per_dir, p2p, pcie, node)
    if "grace blackwell" in text or "nvl72" in text:
        return Fabric("nvl72", 72, per_dir, True, pcie)
    if "cube-mesh" in text:
        # DGX-1/HGX-1 (P100, V100 SXM2): 8 GPUs wired point to point, no switch; NCCL runs rings
        # over the mesh's links, priced as the switched node's ring (no source gives another)
        return Fabric("nvlink-mesh", node, per_dir, True, pcie, node)
    if "nvlink" in text or "sxm" in text or "hgx" in text:
        return Fabric("nvswitch", node, per_dir, True, pcie, node)
    if "infinity fabric" in text or ("oam" in text and gpu.vendor == "amd"):
        mesh = _one_link_per_peer(text, node)
        return Fabric("infinity-fabric", node, per_dir, True, pcie, node, mesh)
    if "xe link" in text:
        return Fabric("xe-link", node, per_dir, True, pcie, node)
    if "roce" in text:
        return Fabric("roce", node, per_dir, True, pcie, node)
    return Fabric("pcie", 1, None, p2p, pcie, node)


def _one_link_per_peer(text: str, domain: int) -> bool:
    """Whether the catalog's interconnect text makes the domain a full mesh without a switch:
    one link per peer ("7 links x 128 GB/s" on an 8-GPU board) or links "to each of" the
    domain − 1 peers (the MI300A's 4-APU node). Per-GCD (MI250) and bridge texts say neither."""
    m = re.search(r"\((\d+) links x|to each of (\d+) peers", text)
    return m is not None and int(m.group(1) or m.group(2)) == domain - 1


def _bridge_is_accessory(gpu: GpuSpec) -> bool:
    return gpu.vendor == "nvidia" and gpu.segment in ACCESSORY_BRIDGE_SEGMENTS


@lru_cache(maxsize=1024)
def accessory_bridge(gpu: GpuSpec, n: int) -> Link | None:
    """The link an NVLink bridge would give ``n`` cards of a model whose bridge is an accessory
    (GeForce, TITAN, workstation: priced over PCIe without it): a pair only, at the catalog's
    ``interconnect_gbs`` (both directions; half each way) as collectives reach it. None where
    the card takes no such bridge, the group is not a pair, or the catalog has no sourced
    bandwidth for the bridge."""
    bridged = "bridge" in (gpu.interconnect or "").lower()
    if n != 2 or not bridged or not _bridge_is_accessory(gpu) or not gpu.interconnect_gbs:
        return None
    gbs = gpu.interconnect_gbs / 2 * COLLECTIVE_EFFICIENCY
    return Link("fast", gbs, LATENCY_S["fast"], f"NVLink bridge, {n} GPUs")


def ring_latency_share(n: int) -> float:
    """A small all-reduce's latency over a PCIe ring of ``n`` GPUs as a share of eight's, by
    NCCL's tuning model (base + 2·(n−1) hops)."""
    ring = NCCL_RING_BASE_US + 2 * (n - 1) * NCCL_PCI_HOP_US
    return ring / (NCCL_RING_BASE_US + 2 * (NODE_GPUS - 1) * NCCL_PCI_HOP_US)


# Read for every multi-GPU configuration of every request (string parsing of the catalog's
# interconnect text): kept per GpuSpec (frozen, hash computed once), bounded.
@lru_cache(maxsize=8192)
def link(gpu: GpuSpec, n: int) -> Link:
    """The slowest hop in a group of ``n`` GPUs of this model."""
    f = fabric(gpu)
    if n <= 1:
        return Link("none", float("inf"), 0.0, "one GPU")
    if n <= f.domain and f.link_gbs:
        curve = _measured_curve(gpu, f)
        return Link(
            "fast", f.link_gbs * f.mesh_share(n) * COLLECTIVE_EFFICIENCY, LATENCY_S["fast"],
            f.group_label(n), curve, NODE_GPUS if curve else 0,
        )  # fmt: skip
    if n <= node_size(gpu):
        share = ring_latency_share(n)
        if f.p2p:
            # assumed, and said so: whether NCCL uses PCIe peer-to-peer is the host's, not the
            # card's. Its topology check (src/graph/paths.cc, ncclTopoCheckP2p) allows P2P on
            # Intel x86 hosts only up to PATH_PXB (cards behind one PCIe switch), never through
            # the CPU's root complex (earlier releases: up to PATH_PHB, one host bridge; AMD
            # hosts: any path); inside a VM the NVIDIA driver uses P2P only where the
            # hypervisor injects a capability saying the host supports it
            # (github.com/cloud-hypervisor/cloud-hypervisor/pull/6235). Elsewhere NCCL stages
            # through host memory: the ``pcie-host`` link below.
            return Link(
                "pcie-p2p",
                f.pcie_gbs * COLLECTIVE_EFFICIENCY,
                LATENCY_S["pcie-p2p"] * share,
                P2P_ASSUMED_LABEL,
            )
        return host_staged_link(gpu, n)
    node = network(gpu)
    # one GPU's share of its node's NICs: what a point-to-point hop between nodes gets
    return Link(
        "network",
        node.gbs / f.node * COLLECTIVE_EFFICIENCY,
        LATENCY_S["network"],
        node.label,
    )


@lru_cache(maxsize=1024)
def host_staged_link(gpu: GpuSpec, n: int) -> Link:
    """The hop between two of ``n`` GPUs in one server when the copy goes through host memory
    whatever link the cards have: the GPU's PCIe crossed twice. ``link``'s hop where PCIe
    peer-to-peer is off, and a runtime's own where it copies without peer access (CUDA C++
    Programming Guide, "Peer-to-Peer Memory Copy": without cudaDeviceEnablePeerAccess a
    cudaMemcpyPeer between two devices is staged through the host)."""
    f = fabric(gpu)
    return Link(
        "pcie-host",
        f.pcie_gbs * COLLECTIVE_EFFICIENCY * HOST_STAGED_FACTOR,
        LATENCY_S["pcie-host"] * ring_latency_share(n),
        "PCIe without peer-to-peer (through host memory)",
    )


@dataclass(frozen=True, slots=True)
class Network:
    """A node's compute fabric to other nodes: GB/s per direction over all its NICs."""

    gbs: float
    label: str


@lru_cache(maxsize=1024)
def network(gpu: GpuSpec) -> Network:
    """The inter-node fabric of the server this GPU comes in: the DGX of its generation for
    NVIDIA SXM/HGX parts (datasheet NICs), otherwise an assumption (a 400 Gb/s NIC per GPU on
    baseboard parts, 100 Gb/s per server for PCIe cards). Every label says assumed: the user's
    cluster may have fewer NICs than the reference design. A node the catalog names smaller
    than 8 (the MI300A's 4 APUs) has that many GPUs' NICs."""
    if gpu.vendor == "nvidia" and fabric(gpu).kind in ("nvswitch", "nvlink-mesh", "nvl72"):
        cc = _cc(gpu)
        if cc == 7.0:
            return Network(
                NODE_NETWORK_GBS["7.0"], "4× 100 Gb/s InfiniBand per node (DGX-1, assumed)"
            )
        if cc == 8.0:
            return Network(
                NODE_NETWORK_GBS["8.0"], "8× 200 Gb/s InfiniBand per node (DGX A100, assumed)"
            )
        if cc >= 9.0:
            return Network(
                NETWORK_GBS_PER_NODE_DATACENTER, "8× 400 Gb/s InfiniBand per node (DGX, assumed)"
            )
    if gpu.segment == "datacenter" and "pcie" in (gpu.form_factor or "").lower():
        return Network(NETWORK_GBS_PER_NODE_PCIE, "100 Gb/s per 8-card PCIe server (assumed)")
    if gpu.segment == "datacenter":
        per_node = NETWORK_GBS_PER_NODE_DATACENTER * fabric(gpu).node / NODE_GPUS
        return Network(per_node, "400 Gb/s network per GPU (assumed)")
    return Network(NETWORK_GBS_PER_NODE_OTHER, "100 GbE per server (assumed)")


def _cc(gpu: GpuSpec) -> float:
    try:
        return float(gpu.compute_capability or 0)
    except ValueError:
        return 0.0


def ring_allreduce_bytes(n: int, nbytes: float) -> float:
    """Bytes each GPU sends (and receives) in a ring all-reduce of ``nbytes``."""
    return 0.0 if n <= 1 else 2.0 * (n - 1) / n * nbytes


def allgather_bytes(n: int, nbytes: float) -> float:
    """Bytes each GPU receives gathering ``nbytes`` sharded N ways (reduce-scatter alike)."""
    return 0.0 if n <= 1 else (n - 1) / n * nbytes


def comm_seconds(lk: Link, nbytes: float, collectives: int = 1) -> float:
    """Time to move ``nbytes`` per GPU over the link in ``collectives`` collective calls (each
    a ring of 2·(N−1) steps is latency-bound for small messages; one latency per call here)."""
    if lk.kind == "none":
        return 0.0
    return nbytes / (lk.gbs * 1e9) + collectives * lk.latency_s


def allreduce_s(gpu: GpuSpec, n: int, nbytes: float, calls: int = 1) -> float:
    """Seconds for an all-reduce of ``nbytes`` over ``n`` GPUs. Inside one node: the ring over
    its slowest hop. Over nodes, NCCL runs one ring per NIC, so every NIC of a node carries its
    share and the node's GPUs pass the rest over their own link at the same time: the slower of
    the two hops sets the pace (2·(N−1)/N × bytes ÷ the node's NICs, or ÷ the node's link)."""
    if n <= 1:
        return 0.0
    return _ring_s(gpu, n, ring_allreduce_bytes(n, nbytes), calls)


def allgather_s(gpu: GpuSpec, n: int, nbytes: float, calls: int = 1) -> float:
    """Seconds to all-gather (or reduce-scatter) ``nbytes`` sharded over ``n`` GPUs: as
    ``allreduce_s`` with (N−1)/N × bytes."""
    if n <= 1:
        return 0.0
    return _ring_s(gpu, n, allgather_bytes(n, nbytes), calls)


def replicas_allreduce_s(gpu: GpuSpec, m: int, nbytes: float, calls: int = 1) -> float:
    """Seconds for GPUs in ``m`` different nodes (one each: the same rank of every node's shard
    group) to all-reduce ``nbytes`` each, every GPU through its share of its node's NICs."""
    if m <= 1:
        return 0.0
    per_gpu = network(gpu).gbs / fabric(gpu).node * COLLECTIVE_EFFICIENCY * 1e9
    return ring_allreduce_bytes(m, nbytes) / per_gpu + calls * LATENCY_S["network"]


def nodes(gpu: GpuSpec, n: int) -> int:
    """How many servers ``n`` GPUs of this model span (an NVL72 rack counts as one)."""
    return math.ceil(n / node_size(gpu))


def node_size(gpu: GpuSpec) -> int:
    """GPUs in one server (or NVLink rack) of this model, as the multi-node terms assume: 8, or
    the node the catalog names (4 MI300As), or an NVL72 rack's 72."""
    f = fabric(gpu)
    return max(f.node, f.domain)


def _ring_s(gpu: GpuSpec, n: int, moved: float, calls: int) -> float:
    per = node_size(gpu)
    if n <= per:
        return comm_seconds(link(gpu, n), moved, calls)
    inside = link(gpu, per)
    node_gbs = network(gpu).gbs * COLLECTIVE_EFFICIENCY
    slowest = min(inside.gbs, node_gbs)
    return moved / (slowest * 1e9) + calls * max(inside.latency_s, LATENCY_S["network"])

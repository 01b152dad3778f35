"""The links a catalog GPU's group uses, read from its shipped entry: the Infinity Fabric of the
MI325X / MI355X baseboards inside a node, and the NICs of a PCIe-card server across nodes."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import topology
from app.domain.gpu import GpuSpec

DATA = Path(__file__).resolve().parents[2] / "data"


@cache
def _gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


@pytest.mark.parametrize("slug", ["mi250", "mi300x", "mi325x", "mi355x"])
def test_amd_oam_boards_all_reduce_over_infinity_fabric_not_pcie(slug: str) -> None:
    gpu = _gpus()[slug]
    assert gpu.interconnect_gbs, slug  # sourced in data/gpus/amd.yaml
    for n in (2, 4, 8):
        lk = topology.link(gpu, n)
        assert lk.kind == "fast" and "Infinity Fabric" in lk.label, (slug, n)
        # the catalog's figure is bidirectional: a collective gets 80 % of one direction; on the
        # MI300X/MI325X/MI355X boards' switchless mesh only of the n - 1 links among the group
        # (one link to each peer, topology.Fabric.mesh_share), where it had the whole 7 at any n
        share = 1.0 if slug == "mi250" else (n - 1) / 7
        expected = gpu.interconnect_gbs / 2 * share * topology.COLLECTIVE_EFFICIENCY
        assert lk.gbs == pytest.approx(expected)
        assert lk.gbs > topology.PCIE_GBS[5] * topology.COLLECTIVE_EFFICIENCY


def test_mi325x_has_the_mi300x_links_and_mi355x_faster_ones() -> None:
    gpus = _gpus()
    mi300x, mi325x, mi355x = gpus["mi300x"], gpus["mi325x"], gpus["mi355x"]
    # same 8-GPU UBB mesh: 7 links x 128 GB/s bidirectional; MI355X 7 x 153.6
    assert mi325x.interconnect_gbs == mi300x.interconnect_gbs == 896
    assert mi355x.interconnect_gbs == pytest.approx(7 * 153.6)
    assert mi325x.pcie_gen == mi355x.pcie_gen == 5
    assert topology.link(mi325x, 4).gbs == topology.link(mi300x, 4).gbs
    assert topology.link(mi355x, 4).gbs > topology.link(mi300x, 4).gbs
    # a tensor-parallel step's all-reduce of 16 MiB over 4 GPUs: the fabric, not PCIe Gen4
    payload = 16 * 2**20
    for gpu in (mi325x, mi355x):
        assert topology.allreduce_s(gpu, 4, payload) <= topology.allreduce_s(mi300x, 4, payload)


def test_across_nodes_mi355x_scales_like_mi300x() -> None:
    """64 GPUs = 8 nodes: the ring runs at the slower of the node's link and its NICs; before
    the MI355X had a link figure its inside hop was PCIe and set the pace."""
    gpus = _gpus()
    mi300x, mi355x = gpus["mi300x"], gpus["mi355x"]
    gb = 16e9
    assert topology.allreduce_s(mi355x, 64, gb) == pytest.approx(
        topology.allreduce_s(mi300x, 64, gb)
    )
    assert topology.allgather_s(mi355x, 64, gb) <= topology.allgather_s(mi300x, 64, gb)


@pytest.mark.parametrize("slug", ["l4", "a10", "t4", "l40s", "h100-nvl", "a100-pcie-80gb"])
def test_pcie_card_servers_get_less_network_than_dgx_nodes(slug: str) -> None:
    gpus = _gpus()
    card = gpus[slug]
    assert "pcie" in (card.form_factor or "").lower()
    net = topology.network(card)
    # below a DGX A100 (8 x 200 Gb/s) and a DGX H100 (8 x 400 Gb/s)
    assert net.gbs < topology.network(gpus["a100-sxm4-80gb"]).gbs
    assert net.gbs < topology.network(gpus["h100-sxm"]).gbs
    # one 100 Gb/s fabric per 8-card server (the clouds' 8-card PCIe instances)
    assert net.gbs == 100 / 8 == topology.NETWORK_GBS_PER_NODE_PCIE
    assert "PCIe" in net.label and "assumed" in net.label
    # a hop between nodes gets one card's share of the server's NICs
    assert topology.link(card, 16).gbs < topology.link(gpus["h100-sxm"], 16).gbs
    assert topology.link(card, 16).gbs == pytest.approx(
        net.gbs / topology.NODE_GPUS * topology.COLLECTIVE_EFFICIENCY
    )


def test_baseboard_nodes_keep_a_400g_nic_per_gpu() -> None:
    gpus = _gpus()
    assert topology.network(gpus["h100-sxm"]).gbs == topology.NETWORK_GBS_PER_NODE_DATACENTER
    for slug in ("mi300x", "mi325x", "mi355x", "gaudi3"):
        net = topology.network(gpus[slug])
        assert net.gbs == topology.NETWORK_GBS_PER_NODE_DATACENTER, slug
        assert "per GPU" in net.label


def test_node_size_is_read_from_the_interconnect_text() -> None:
    gpu = _gpus()["mi300x"]
    assert gpu.node_gpus is None  # names no node: topology.NODE_GPUS
    assert replace(gpu, interconnect="AMD Infinity Fabric (4-APU node: ...)").node_gpus == 4
    assert replace(gpu, interconnect="Fabric (16-GPU node)").node_gpus == 16
    assert replace(gpu, interconnect="NVLink (2 dies)").node_gpus is None


def test_mi300a_fabric_is_its_4_apu_node_and_8_span_two_nodes() -> None:
    """The catalog's MI300A node (AMD CDNA 3 white paper) is 4 APUs fully connected by Infinity
    Fabric: the fast domain and the server are 4, so 8 MI300As are two nodes over the network,
    where an 8-GPU OAM baseboard (MI300X) keeps all 8 on its fabric."""
    gpus = _gpus()
    mi300a, mi300x = gpus["mi300a"], gpus["mi300x"]
    assert mi300a.node_gpus == 4
    f = topology.fabric(mi300a)
    assert (f.kind, f.domain, f.node) == ("infinity-fabric", 4, 4)
    assert topology.node_size(mi300a) == 4
    assert topology.nodes(mi300a, 4) == 1 and topology.nodes(mi300a, 8) == 2
    assert topology.link(mi300a, 4).kind == "fast" and "4 GPUs" in topology.link(mi300a, 4).label
    assert topology.link(mi300a, 8).kind == "network"
    assert topology.fabric(mi300x).domain == topology.node_size(mi300x) == topology.NODE_GPUS
    assert topology.nodes(mi300x, 8) == 1 and topology.link(mi300x, 8).kind == "fast"
    # a 4-APU node has 4 GPUs' NICs: each APU's share of them is an MI300X's share
    assert topology.network(mi300a).gbs == topology.network(mi300x).gbs / 2
    assert topology.link(mi300a, 16).gbs == pytest.approx(topology.link(mi300x, 16).gbs)
    assert topology.replicas_allreduce_s(mi300a, 4, 1e9) == pytest.approx(
        topology.replicas_allreduce_s(mi300x, 4, 1e9)
    )
    # an all-reduce over 8 crosses the network: slower than over one node's 4
    payload = 16 * 2**20
    assert topology.allreduce_s(mi300a, 8, payload) > topology.allreduce_s(mi300a, 4, payload)


@pytest.mark.parametrize("slug", ["mi250", "mi250x"])
def test_a_node_of_4_modules_is_8_gcds_on_one_fabric(slug: str) -> None:
    """Each MI250/MI250X entry is one GCD: 8 GPUs are a node of 4 modules, one fabric, whose
    per-GCD link is half the module's external Infinity Fabric."""
    gpu = _gpus()[slug]
    assert topology.nodes(gpu, 8) == 1 and topology.node_size(gpu) == topology.NODE_GPUS
    assert topology.link(gpu, 8).kind == "fast"
    assert topology.link(gpu, 16).kind == "network"

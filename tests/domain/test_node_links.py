"""The links a catalog GPU's group uses, read from its shipped entry: the Infinity Fabric of the
MI325X / MI355X baseboards inside a node, and the NICs of a PCIe-card server across nodes."""

from __future__ import annotations

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
        # the catalog's figure is bidirectional: a collective gets 80 % of one direction
        assert lk.gbs == pytest.approx(gpu.interconnect_gbs / 2 * topology.COLLECTIVE_EFFICIENCY)
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

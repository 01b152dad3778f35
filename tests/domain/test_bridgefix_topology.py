"""Review 7 #2: GeForce, TITAN and workstation pairs were linked by an NVLink bridge because the
catalog says the card takes one, though the bridge is an accessory (sold separately, sized to the
slot spacing) that neither a rented marketplace box nor a bought pair states. Review 6 #11: the
V100 SXM2's 8-GPU DGX-1 fabric was called "NVLink/NVSwitch"; it is a hybrid cube-mesh."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import topology

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
EFF = topology.COLLECTIVE_EFFICIENCY


@pytest.mark.parametrize("slug", ["rtx-3090", "titan-rtx", "rtx-2080-ti", "rtx-2080"])
def test_a_geforce_or_titan_pair_is_priced_over_pcie_without_peer_to_peer(slug: str) -> None:
    """The GeForce path, as two RTX 4090s: host-staged PCIe (no P2P on the stock driver)."""
    lk = topology.link(GPUS[slug], 2)
    assert lk.kind == "pcie-host"
    assert lk.label == topology.link(GPUS["rtx-4090"], 2).label
    assert topology.fabric(GPUS[slug]).label == "PCIe without peer-to-peer"


def test_a_workstation_pair_is_priced_over_pcie_with_peer_to_peer() -> None:
    lk = topology.link(GPUS["rtx-a6000"], 2)
    assert lk.kind == "pcie-p2p" and lk.gbs == pytest.approx(31.5 * EFF)


@pytest.mark.parametrize(
    ("slug", "bridge_gbs"),
    # the catalog's interconnect_gbs, both directions: GA102 whitepaper 112.5; TU102 100
    [("rtx-3090", 112.5), ("rtx-a6000", 112.5), ("titan-rtx", 100.0), ("rtx-2080-ti", 100.0)],
)
def test_the_bridge_a_pair_could_take_is_offered_at_the_catalogs_bandwidth(
    slug: str, bridge_gbs: float
) -> None:
    gpu = GPUS[slug]
    bridge = topology.accessory_bridge(gpu, 2)
    assert bridge is not None and bridge.kind == "fast"
    assert bridge.gbs == pytest.approx(bridge_gbs / 2 * EFF)
    assert bridge.gbs > topology.link(gpu, 2).gbs


def test_no_bridge_is_offered_without_a_sourced_bandwidth_or_beyond_a_pair() -> None:
    assert topology.accessory_bridge(GPUS["rtx-2080"], 2) is None  # bandwidth not sourced
    assert topology.accessory_bridge(GPUS["rtx-3090"], 1) is None
    assert topology.accessory_bridge(GPUS["rtx-3090"], 4) is None
    assert topology.accessory_bridge(GPUS["rtx-4090"], 2) is None  # no NVLink at all


@pytest.mark.parametrize("slug", ["a40", "a100-pcie-80gb", "h100-nvl"])
def test_datacenter_pcie_parts_keep_their_bridge(slug: str) -> None:
    """Built into servers with the bridge (assumed): unchanged, and no accessory to offer."""
    gpu = GPUS[slug]
    assert topology.link(gpu, 2).kind == "fast"
    assert topology.accessory_bridge(gpu, 2) is None


@pytest.mark.parametrize("slug", ["v100-sxm2-16gb", "v100-sxm2-32gb"])
def test_a_v100_sxm2_node_is_a_cube_mesh_not_nvswitch(slug: str) -> None:
    gpu = GPUS[slug]
    lk = topology.link(gpu, 8)
    assert lk.label == "NVLink hybrid cube-mesh, 8 GPUs"
    assert "NVSwitch" not in lk.label
    # the ring model is unchanged: 150 GB/s each way per GPU, at the collective efficiency
    assert lk.kind == "fast" and lk.gbs == pytest.approx(150.0 * EFF)
    # its network is still the DGX-1's four 100 Gb/s InfiniBand links
    assert "DGX-1" in topology.network(gpu).label


@pytest.mark.parametrize("slug", ["a100-sxm4-80gb", "h100-sxm", "h200-sxm", "b200"])
def test_hgx_parts_are_still_nvswitch(slug: str) -> None:
    assert topology.link(GPUS[slug], 8).label == "NVLink/NVSwitch, 8 GPUs"

"""A PCIe peer-to-peer link is the host's to allow (NCCL's ncclTopoCheckP2p stops at a PCIe
switch on Intel hosts; VMs need the hypervisor's say-so): the engine prices it where the card
supports it but names it as assumed, so a 4 × RTX A5000 answer's "98 % scaling" reads as
resting on it (review rvA #3)."""

from __future__ import annotations

from dataclasses import replace

from app.domain import topology
from tests.domain.fixtures import A100, RTX4090

# a workstation PCIe card: P2P with the stock driver, no NVLink priced
A5000 = replace(
    A100, slug="rtx-a5000", name="RTX A5000", segment="workstation", interconnect=None,
    form_factor="PCIe", pcie_gen=4, pcie_lanes=16,
)  # fmt: skip


def test_a_workstation_pcie_group_is_priced_peer_to_peer_and_named_assumed() -> None:
    lk = topology.link(A5000, 4)
    assert lk.kind == "pcie-p2p"
    assert "P2P" in lk.label and "host" in lk.label  # said as the host's to allow
    assert lk.label == topology.P2P_ASSUMED_LABEL


def test_geforce_stays_host_staged_and_says_so() -> None:
    lk = topology.link(RTX4090, 2)
    assert lk.kind == "pcie-host"
    assert "without peer-to-peer" in lk.label and "assumed" not in lk.label

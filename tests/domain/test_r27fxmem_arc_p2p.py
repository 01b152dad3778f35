"""Intel Arc cards in a desktop exchange data through host memory, as GeForce cards do:
consumer root complexes do not route peer-to-peer between root ports (intel/compute-runtime
#935). Data-centre Intel parts and Radeon cards keep their links."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import topology

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


@pytest.mark.parametrize("slug", ["arc-a750", "arc-a770-16gb", "arc-b580"])
def test_arc_cards_are_host_staged(slug: str) -> None:
    gpu = GPUS[slug]
    assert not topology.fabric(gpu).p2p
    lk = topology.link(gpu, 8)
    assert lk.kind == "pcie-host"
    assert lk.label == topology.link(GPUS["rtx-4090"], 8).label
    assert lk.gbs == pytest.approx(
        topology.fabric(gpu).pcie_gbs * topology.COLLECTIVE_EFFICIENCY * topology.HOST_STAGED_FACTOR
    )


def test_intel_datacenter_and_radeon_unchanged() -> None:
    assert topology.link(GPUS["gaudi2"], 8).kind == "fast"
    radeon = [g for g in GPUS.values() if g.vendor == "amd" and g.segment == "consumer"]
    assert radeon and all(topology.fabric(g).p2p for g in radeon)

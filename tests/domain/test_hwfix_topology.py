"""An NVLink-bridged pair of RTX 3090s (review 2, #4): the catalog named the bridge but gave it
no bandwidth, so the bridge two 3090s can take was unknown while two RTX A6000s (the same GA102
bridge) had it. Since review 7 (#2) neither pair is assumed to have the bridge (an accessory no
offer states): what it would give is ``topology.accessory_bridge``."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import topology

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def test_a_bridge_would_link_two_rtx_3090s_like_two_rtx_a6000s() -> None:
    """GA102 whitepaper: four x4 NVLink 3 links, 56.25 GB/s each way, 112.5 GB/s in total."""
    rtx3090, a6000 = GPUS["rtx-3090"], GPUS["rtx-a6000"]
    pair, pro = topology.accessory_bridge(rtx3090, 2), topology.accessory_bridge(a6000, 2)
    assert pair is not None and pro is not None
    assert pair.kind == "fast"
    assert pair.label == "NVLink bridge, 2 GPUs" == pro.label
    assert pair.gbs == pytest.approx(56.25 * topology.COLLECTIVE_EFFICIENCY) == pro.gbs


def test_a_bridge_joins_two_3090s_only() -> None:
    """Three or four 3090s take the GeForce PCIe path (no peer-to-peer on the stock driver), as
    two do without the bridge; no bridge is offered for them."""
    rtx3090 = GPUS["rtx-3090"]
    bridge = topology.accessory_bridge(rtx3090, 2)
    assert bridge is not None
    for n in (3, 4):
        lk = topology.link(rtx3090, n)
        assert lk.kind == "pcie-host"
        assert lk.gbs < bridge.gbs / 3
        assert topology.accessory_bridge(rtx3090, n) is None

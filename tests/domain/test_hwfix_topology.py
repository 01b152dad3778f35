"""An NVLink-bridged pair of RTX 3090s (review 2, #4): the catalog named the bridge but gave it
no bandwidth, so two 3090s were priced as GeForce PCIe without peer-to-peer while two RTX A6000s
(the same GA102 bridge) got it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import topology

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def test_two_bridged_rtx_3090s_link_like_two_rtx_a6000s() -> None:
    """GA102 whitepaper: four x4 NVLink 3 links, 56.25 GB/s each way, 112.5 GB/s in total."""
    rtx3090, a6000 = GPUS["rtx-3090"], GPUS["rtx-a6000"]
    pair, pro = topology.link(rtx3090, 2), topology.link(a6000, 2)
    assert pair.kind == "fast"
    assert pair.label == "NVLink bridge, 2 GPUs" == pro.label
    assert pair.gbs == pytest.approx(56.25 * topology.COLLECTIVE_EFFICIENCY) == pro.gbs


def test_a_bridge_joins_two_3090s_only() -> None:
    """Three or four 3090s fall back to the GeForce PCIe path (no peer-to-peer on the stock
    driver), as the slowest hop of the group."""
    rtx3090 = GPUS["rtx-3090"]
    for n in (3, 4):
        lk = topology.link(rtx3090, n)
        assert lk.kind == "pcie-host"
        assert lk.gbs < topology.link(rtx3090, 2).gbs / 3

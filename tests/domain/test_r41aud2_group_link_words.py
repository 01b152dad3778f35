"""A 4-GPU H100 SXM slice was described as "linked by NVLink/NVSwitch, 8 GPUs": the words
named the board's domain, not the group the row runs on. The link a group rides is named by
the GPUs in it; the bandwidth and the switchless meshes' own words are unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import topology

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


@pytest.mark.parametrize("n", [2, 4])
def test_a_slice_of_an_nvswitch_board_is_named_by_its_own_gpus(n: int) -> None:
    gpu = GPUS["h100-sxm"]
    lk = topology.link(gpu, n)
    assert lk.label == f"NVLink/NVSwitch, {n} GPUs"
    # a switch gives any subset each GPU's whole link: the figure is the full board's
    assert lk.gbs == topology.link(gpu, 8).gbs
    assert topology.link(gpu, 8).label == "NVLink/NVSwitch, 8 GPUs"


def test_a_switchless_mesh_still_names_the_links_it_uses() -> None:
    label = topology.link(GPUS["mi300x"], 4).label
    assert label.endswith("mesh, 3 of 7 links per GPU"), label

"""Multi-die Apple parts (Ultra: two Max dies over UltraFusion) stream a lower share of their
datasheet bandwidth than one die does (perf.APPLE_MULTI_DIE_STREAM_SHARE, issue #21)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from tests.domain.fixtures import H100, M2, llm_inference

DATA = Path(__file__).resolve().parents[2] / "data"

MAX = replace(M2, slug="apple-max")
ULTRA = replace(
    MAX,
    slug="apple-ultra",
    name="Apple M2 Ultra",
    memory_bandwidth_gbs=800,
    fp32_tflops=27.2,
    interconnect="UltraFusion die-to-die (2 dies)",
)


def test_dies_read_from_the_interconnect_text() -> None:
    assert MAX.dies == 1
    assert ULTRA.dies == 2
    assert replace(MAX, interconnect="UltraFusion").dies == 1  # no count named: one


def test_the_catalog_ultras_are_two_dies_and_the_max_parts_one() -> None:
    gpus = {g.slug: g for g in read_gpu_specs(DATA)}
    for slug in ("apple-m1-ultra", "apple-m2-ultra", "apple-m3-ultra"):
        assert gpus[slug].dies == 2, slug
    for slug in ("apple-m1-max", "apple-m2-max", "apple-m3-max", "apple-m4-max"):
        assert gpus[slug].dies == 1, slug


def test_prior_memory_share_is_lower_on_a_multi_die_apple_part_only() -> None:
    assert perf.efficiencies(MAX, None).memory == pytest.approx(perf.MEMORY_EFFICIENCY)
    assert perf.efficiencies(ULTRA, None).memory == pytest.approx(
        perf.MEMORY_EFFICIENCY * perf.APPLE_MULTI_DIE_STREAM_SHARE
    )
    # the share is Apple's measurement: another vendor's text naming dies keeps the prior
    two_die_nvidia = replace(H100, interconnect="NVLink (2 dies)")
    assert perf.efficiencies(two_die_nvidia, None).memory == pytest.approx(perf.MEMORY_EFFICIENCY)


def test_ultra_decode_is_slower_than_one_die_of_the_same_bandwidth() -> None:
    """Decode is bandwidth bound: the two-die part takes longer per token than a one-die part
    of the same datasheet bandwidth would, and no longer than the stream share accounts for."""
    work = llm_inference(output_tokens=128)
    one_die = perf.estimate(replace(ULTRA, interconnect=None), work)
    two_dies = perf.estimate(ULTRA, work)
    assert one_die.ms_per_token is not None and two_dies.ms_per_token is not None
    slower = two_dies.ms_per_token / one_die.ms_per_token
    assert 1.0 < slower <= 1 / perf.APPLE_MULTI_DIE_STREAM_SHARE + 1e-9


def test_amd_multi_xcd_parts_stream_a_lower_share_than_a_one_die_cdna2_device() -> None:
    """CDNA 3/4 Instinct parts (eight XCDs over I/O dies) take AMD's measured multi-XCD share
    (perf.AMD_MULTI_XCD_STREAM_SHARE, issue #21); a CDNA 2 part and other vendors keep the
    prior."""
    gpus = {g.slug: g for g in read_gpu_specs(DATA)}
    shared = perf.MEMORY_EFFICIENCY * perf.AMD_MULTI_XCD_STREAM_SHARE
    for slug in ("mi300x", "mi325x", "mi355x"):
        assert perf.efficiencies(gpus[slug], None).memory == pytest.approx(shared), slug
    for slug in ("mi210", "mi250x", "h100-sxm"):
        assert perf.efficiencies(gpus[slug], None).memory == pytest.approx(
            perf.MEMORY_EFFICIENCY
        ), slug
    # AMD's own check puts an MI300X at 3,910.62 of 5,300 GB/s: the share lands on it
    assert shared == pytest.approx(3910.62 / 5300, abs=0.01)


def test_mi300x_decode_is_slower_than_a_one_die_part_of_the_same_bandwidth() -> None:
    gpus = {g.slug: g for g in read_gpu_specs(DATA)}
    mi300x = gpus["mi300x"]
    work = llm_inference(output_tokens=128)
    one_die = perf.estimate(replace(mi300x, architecture="CDNA 2"), work)
    xcds = perf.estimate(mi300x, work)
    assert one_die.ms_per_token is not None and xcds.ms_per_token is not None
    slower = xcds.ms_per_token / one_die.ms_per_token
    assert 1.0 < slower <= 1 / perf.AMD_MULTI_XCD_STREAM_SHARE + 1e-9

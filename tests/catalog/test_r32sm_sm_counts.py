"""Every SM count in the NVIDIA catalog names its source, and each agrees with the card's own
FP32 peak: FP32 TFLOPS ÷ (SMs × FP32 lanes per SM × 2) is the boost clock the count implies,
and a wrong count (a die's full SM count, a typo, a board's total) puts it outside what any
NVIDIA GPU of these generations clocks at."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_catalog
from app.catalog.schemas import GpuCreate

DATA = Path(__file__).resolve().parents[2] / "data"

# FP32 lanes per SM by compute capability: the CUDA C++ Programming Guide's arithmetic
# throughput table (32-bit floating-point add, multiply, multiply-add per clock per SM).
FP32_PER_SM = {
    "6.0": 64,
    "6.1": 128,
    "7.0": 64,
    "7.5": 64,
    "8.0": 64,
    "8.6": 128,
    "8.9": 128,
    "9.0": 128,
    "10.0": 128,
    "10.3": 128,
    "12.0": 128,
}


@pytest.fixture(scope="module")
def nvidia() -> list[GpuCreate]:
    return [g for g in read_catalog(DATA) if g.vendor == "nvidia"]


def test_every_sm_count_cites_a_source_with_an_address(nvidia: list[GpuCreate]) -> None:
    counted = [g for g in nvidia if g.sm_count is not None]
    assert len(counted) >= 70
    for gpu in counted:
        sid = gpu.field_sources.get("sm_count")
        assert sid, gpu.slug
        source = next(s for s in gpu.sources if s.id == sid)
        assert source.url, gpu.slug


def test_each_sm_count_implies_a_boost_clock_its_generation_runs_at(
    nvidia: list[GpuCreate],
) -> None:
    checked = 0
    for gpu in nvidia:
        if gpu.sm_count is None or gpu.fp32_tflops is None:
            continue
        lanes = FP32_PER_SM[gpu.compute_capability or ""]
        ghz = gpu.fp32_tflops * 1e3 / (gpu.sm_count * lanes * 2)
        assert 1.0 <= ghz <= 3.0, (gpu.slug, round(ghz, 2))
        checked += 1
    assert checked >= 65


@pytest.mark.parametrize(
    ("slug", "sms"),
    [("l4", 58), ("b200", 148), ("rtx-5090", 170), ("h200-sxm", 132), ("a16", 10)],
)
def test_counts_read_from_a_device_or_per_gpu(nvidia: list[GpuCreate], slug: str, sms: int) -> None:
    # L4: TechPowerUp's 60 contradicts its own 7,424 cores; a deviceQuery gives 58.
    # A16: the count of one of the board's four GPUs, like the entry's other figures.
    assert next(g for g in nvidia if g.slug == slug).sm_count == sms

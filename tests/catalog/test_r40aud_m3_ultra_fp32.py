"""The Mac Studio with the most memory Apple sells (M3 Ultra, 80-core GPU, 512 GB) had no FP32
figure, so every question answered it "no figures" and the fastest Mac for a 70B model went
unnamed (the fortieth session's expert audit). Its figure is derived from the two sourced
figures for the same M3 GPU core: 128 FP32 lanes a core at 1,398 MHz, two M3 Max dies."""

from __future__ import annotations

import pytest

from app.catalog.loader import read_gpu_specs
from app.recommend.presets import DATA_DIR

GPUS = {g.slug: g for g in read_gpu_specs(DATA_DIR)}


def _per_core_tflops(slug: str, cores: int) -> float:
    fp32 = GPUS[slug].fp32_tflops
    assert fp32 is not None
    return fp32 / cores


def test_the_80_core_figure_is_the_same_core_twice_the_m3_max() -> None:
    ultra = GPUS["apple-m3-ultra"].fp32_tflops
    assert ultra is not None
    # 80 cores at the per-core rate both sourced figures give (40-core Max, 60-core Ultra)
    for slug, cores in (("apple-m3-max", 40), ("apple-m3-ultra-60c-96gb", 60)):
        assert ultra == pytest.approx(80 * _per_core_tflops(slug, cores), rel=2e-3)
    assert ultra == pytest.approx(80 * 128 * 2 * 1.398e9 / 1e12, rel=1e-3)

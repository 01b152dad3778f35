"""Stable Diffusion 1.5 under TensorRT at batch 1 on the two H100 variants (issue 23).

alexeigor/sd-benchmarks (README at e2d77f18, TensorRT 8.6.1 demo, 512x512, 50 steps, batch 1,
whole pipeline) measured the H100 SXM at 0.60 s and the H100 PCIe at 0.75 s: the SXM part
1.25x faster, close to the two parts' SMs x boost clock (132 x 1.98 GHz over 114 x 1.755 GHz:
1.31). The engine must price the SXM part faster, by about that ratio (not slower, and not by
the dense-peak ratio 989 / 756 = 1.31 times a memory-bandwidth gain on top)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.recommend.presets import load_presets
from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
PRESETS = load_presets(DATA)
TABLE = load_efficiency(DATA)
# seconds per image, alexeigor/sd-benchmarks README (e2d77f18), 'TensorRT 8.6.1,fp16' rows
MEASURED = {"h100-sxm": 0.60, "h100-pcie": 0.75}


def _seconds(slug: str) -> float:
    work = WorkloadSpec(
        task="inference",
        model=PRESETS["stable-diffusion-1.5"].model,
        precision="fp16",
        batch_size=1,
        runtime="tensorrt",
        efficiency=TABLE,
    )
    return perf.single_gpu(GPUS[slug], work, backend="cuda").step_s


def test_h100_sxm_is_priced_faster_than_the_pcie_part_by_the_measured_ratio() -> None:
    sxm, pcie = _seconds("h100-sxm"), _seconds("h100-pcie")
    assert sxm < pcie
    measured = MEASURED["h100-pcie"] / MEASURED["h100-sxm"]
    assert pcie / sxm == pytest.approx(measured, rel=0.10)

"""llama.cpp's Vulkan build runs 16-bit weights on every device it accepts
(data/frameworks.yaml llamacpp-vulkan-coopmat: ggml_vk_device_is_supported needs Vulkan 1.1's
storageBuffer16BitAccess), so a part whose catalog row gives no fp16 peak (a Mac, the RTX 4000
Ada) keeps a GGUF Q4 row at int4 on Vulkan instead of falling to fp32."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain.gpu import GpuSpec
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"


@cache
def _gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


@pytest.mark.parametrize("slug", ["apple-m4-max", "rtx-4000-ada"])
@pytest.mark.parametrize("precision", ["fp16", "int4"])
def test_vulkan_runs_16_bit_where_the_catalog_gives_no_fp16_peak(slug: str, precision: str) -> None:
    gpu = _gpus()[slug]
    assert gpu.fp16_tflops is None  # the case this guards: no datasheet fp16 figure
    assert compat.precision_supported(gpu, precision, load_rules(DATA), "vulkan")


def test_an_unknown_backend_still_needs_the_fp16_figure() -> None:
    gpu = _gpus()["rtx-4000-ada"]
    assert not compat.precision_supported(gpu, "fp16", load_rules(DATA), None)

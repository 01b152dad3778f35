"""What a llama.cpp Vulkan row says of its matmul path (compat.vulkan_caveat): a part on ggml's
scalar shaders says the estimate does not price that path; a Mac's claim cites MoltenVK's
open cooperative-matrix issue; the GeForce comparison names its scoreboards and builds
(tests/data/llm_inference.yaml: cuda_scoreboard #15013 at 2241453, vulkan_scoreboard #10879
at 4ae88d0)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import compat
from app.domain.gpu import GpuSpec

DATA = Path(__file__).resolve().parents[2] / "data"


@cache
def _gpus() -> dict[str, GpuSpec]:
    return {g.slug: g for g in read_gpu_specs(DATA)}


def _pascal() -> GpuSpec:
    return next(g for g in _gpus().values() if g.architecture == "Pascal")


@pytest.mark.parametrize("slug", ["arc-a770-16gb", "apple-m4-max", "pascal"])
def test_the_scalar_path_is_said_unpriced(slug: str) -> None:
    gpu = _pascal() if slug == "pascal" else _gpus()[slug]
    said = compat.vulkan_caveat(gpu)
    assert "scalar matmul shaders" in said and "does not price" in said


def test_a_mac_cites_moltenvk_for_no_cooperative_matrix() -> None:
    said = compat.vulkan_caveat(_gpus()["apple-m4-max"])
    assert "MoltenVK#2507" in said


@pytest.mark.parametrize("slug", ["rtx-3090", "rx-7900-xtx", "arc-b580"])
def test_a_cooperative_matrix_part_says_nothing_of_the_scalar_path(slug: str) -> None:
    assert "does not price" not in compat.vulkan_caveat(_gpus()[slug])


def test_the_geforce_comparison_names_its_sources() -> None:
    said = compat.vulkan_caveat(_gpus()["rtx-4090"])
    assert "11,993" in said and "#15013" in said and "2241453" in said
    assert "9,452" in said and "#10879" in said and "4ae88d0" in said

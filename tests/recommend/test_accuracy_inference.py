"""The LLM-inference model against llama.cpp's published llama-bench scoreboards.

Data: tests/data/llm_inference.yaml (Llama 2 7B Q4_0, batch 1, tg128 decode and pp512 prompt
processing, CUDA / ROCm / Vulkan / Metal scoreboards), estimated with the llama.cpp rows of
data/efficiency.yaml on each row's own backend. Measured when this test was written (runtime-
and backend-aware efficiencies): decode, native backend per GPU: Spearman 0.97, median ratio
1.06 over 42 GPUs (was 0.88 / 1.08 with one memory efficiency for all); prompt processing:
Spearman 0.97, median 1.12 (was 0.76 / 1.53 with the 16-bit tensor peak for every GPU).
The floors sit under those numbers so that catalog edits do not trip them.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENTS = ROOT / "tests" / "data" / "llm_inference.yaml"


@pytest.fixture(scope="module")
def scores(accuracy):
    result = accuracy.evaluate_inference(ROOT / "data", MEASUREMENTS)
    return {(s.backend, s.metric): s for s in result}


def test_decode_ranks_and_sizes_gpus(scores) -> None:
    every = scores[("all", "tg")]
    assert every.n >= 20
    assert every.spearman >= 0.93, every.spearman
    assert every.median_ratio <= 1.12, every.median_ratio
    cuda = scores[("cuda", "tg")]
    assert cuda.n >= 15
    assert cuda.spearman >= 0.93, cuda.spearman
    assert cuda.median_ratio <= 1.1, cuda.median_ratio


def test_decode_off_nvidia_within_1_4x(scores) -> None:
    for backend in ("metal", "rocm", "vulkan"):
        s = scores[(backend, "tg")]
        assert s.median_ratio <= 1.25, (backend, s.median_ratio)


def test_decode_on_vulkan_ranks_gpus(scores) -> None:
    vulkan = scores[("vulkan", "tg")]
    assert vulkan.n >= 5
    assert vulkan.spearman >= 0.85, vulkan.spearman
    assert vulkan.median_ratio <= 1.2, vulkan.median_ratio


def test_prompt_processing_ranks_gpus(scores) -> None:
    every = scores[("all", "pp")]
    assert every.n >= 20
    assert every.spearman >= 0.9, every.spearman
    assert every.median_ratio <= 1.3, every.median_ratio


def test_prompt_processing_off_nvidia_within_2x(scores) -> None:
    """ROCm and Vulkan pp512, GPU by GPU. The RX 9070 XT had no 16-bit figure and was predicted
    at 0.35× (ROCm Spearman 0.0 over 5 GPUs); with its packed FP16 rate from the spec table it
    is 0.54× (RDNA 4's doubled WMMA rate is not in that figure) and ROCm ranks at 0.7."""
    for backend in ("rocm", "vulkan"):
        s = scores[(backend, "pp")]
        for slug, measured, predicted in s.rows:
            assert 0.5 <= predicted / measured <= 2.0, (backend, slug, predicted / measured)
    assert scores[("rocm", "pp")].spearman >= 0.6


def test_predictions_are_finite_and_positive(scores) -> None:
    for s in scores.values():
        for slug, measured, predicted in s.rows:
            assert measured > 0, slug
            assert math.isfinite(predicted) and predicted > 0, (slug, s.metric, predicted)


def test_dataset_rows_are_well_formed() -> None:
    from app.shipped import yamlio

    doc = yamlio.safe_load(MEASUREMENTS.read_text(encoding="utf-8"))
    sources = doc["sources"]
    assert doc["workload"]["quantisation"] == "Q4_0"
    for row in doc["measurements"]:
        assert row["source"] in sources, row
        assert row["metric"] in ("tg", "pp"), row
        assert row["backend"] in ("cuda", "rocm", "vulkan", "metal"), row
        assert isinstance(row["tokens_per_s"], float) and row["tokens_per_s"] > 0, row
        assert "gpu_slug" in row and "gpu_name" in row, row


def test_mapped_slugs_exist_in_catalog() -> None:
    from app.catalog.loader import read_gpu_specs
    from app.shipped import yamlio

    slugs = {g.slug for g in read_gpu_specs(ROOT / "data")}
    doc = yamlio.safe_load(MEASUREMENTS.read_text(encoding="utf-8"))
    missing = {r["gpu_slug"] for r in doc["measurements"] if r["gpu_slug"]} - slugs
    assert not missing, sorted(missing)

"""The LLM-inference model against llama.cpp's published llama-bench scoreboards.

Data: tests/data/llm_inference.yaml (Llama 2 7B Q4_0, batch 1, tg128 decode and pp512 prompt
processing, CUDA / ROCm / Vulkan / Metal scoreboards). Measured when this test was written:
decode, native backend per GPU: Spearman 0.82, median ratio 1.07 over 30 GPUs (catalog without
Apple compute figures), 0.86 / 1.08 over 38 GPUs once 8 Apple chips had figures; CUDA only,
22 GPUs: 0.92 / 1.05; Vulkan, 9 GPUs: 0.98 / 1.08. Known decode misses: HBM parts run llama.cpp's
batch-1 kernels well below their bandwidth (H100 ×1.45, A30 ×1.35, MI100/MI210 ×1.9–2.0, M1/M2
Ultra ×1.6–1.8 over-predicted). Prompt processing is a known miss (Spearman 0.42 → 0.71 with
the Apple rows, median ratio 1.6–1.7): llama.cpp's quantised matmul kernels (int8 dot
products) run far above the 16-bit FP32-accumulate peak the engine uses on GeForce cards and
far below peak on Hopper/Turing/CDNA, so only a loose floor is held there.

The floors sit a little under those numbers so that catalog edits do not trip them; they are
regression guards for the decode roofline (weights ÷ bandwidth + per-token launches).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENTS = ROOT / "tests" / "data" / "llm_inference.yaml"


@pytest.fixture(scope="module")
def scores(accuracy):  # type: ignore[no-untyped-def]
    result = accuracy.evaluate_inference(ROOT / "data", MEASUREMENTS)
    return {(s.backend, s.metric): s for s in result}


def test_decode_ranks_and_sizes_gpus(scores) -> None:
    every = scores[("all", "tg")]
    assert every.n >= 20
    assert every.spearman >= 0.78, every.spearman
    assert every.median_ratio <= 1.15, every.median_ratio
    cuda = scores[("cuda", "tg")]
    assert cuda.n >= 15
    assert cuda.spearman >= 0.88, cuda.spearman
    assert cuda.median_ratio <= 1.12, cuda.median_ratio


def test_decode_on_vulkan_ranks_gpus(scores) -> None:
    vulkan = scores[("vulkan", "tg")]
    assert vulkan.n >= 5
    assert vulkan.spearman >= 0.85, vulkan.spearman
    assert vulkan.median_ratio <= 1.2, vulkan.median_ratio


def test_prompt_processing_is_at_least_ordered(scores) -> None:
    every = scores[("all", "pp")]
    assert every.n >= 20
    # a loose guard only: see the module docstring for why prefill is a known miss
    assert every.spearman >= 0.3, every.spearman
    assert every.median_ratio <= 2.0, every.median_ratio


def test_predictions_are_finite_and_positive(scores) -> None:
    for s in scores.values():
        for slug, measured, predicted in s.rows:
            assert measured > 0, slug
            assert math.isfinite(predicted) and predicted > 0, (slug, s.metric, predicted)


def test_dataset_rows_are_well_formed() -> None:
    import yaml

    doc = yaml.safe_load(MEASUREMENTS.read_text(encoding="utf-8"))
    sources = doc["sources"]
    assert doc["workload"]["quantisation"] == "Q4_0"
    for row in doc["measurements"]:
        assert row["source"] in sources, row
        assert row["metric"] in ("tg", "pp"), row
        assert row["backend"] in ("cuda", "rocm", "vulkan", "metal"), row
        assert isinstance(row["tokens_per_s"], float) and row["tokens_per_s"] > 0, row
        assert "gpu_slug" in row and "gpu_name" in row, row


def test_mapped_slugs_exist_in_catalog() -> None:
    import yaml

    from app.catalog.loader import read_gpu_specs

    slugs = {g.slug for g in read_gpu_specs(ROOT / "data")}
    doc = yaml.safe_load(MEASUREMENTS.read_text(encoding="utf-8"))
    missing = {r["gpu_slug"] for r in doc["measurements"] if r["gpu_slug"]} - slugs
    assert not missing, sorted(missing)

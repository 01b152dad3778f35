"""The serving model against published saturation throughput (tests/data/serving_*.yaml),
scored by benchmarks/serving_accuracy.py; the floors below are the figures README states."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.support import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def harness() -> ModuleType:
    return load_benchmark("serving_accuracy.py", "bench_serving_accuracy")


@pytest.fixture(scope="module")
def scores(harness: ModuleType) -> dict:
    rows = harness.predict(ROOT / "data", harness.DEFAULT_FILES)
    assert len(rows) >= 100
    return {s.group: s for s in harness.score(rows)}


def test_dense_hopper_fp8_ranks_and_sizes(scores: dict) -> None:
    s = scores["dense fp8 (Hopper)"]
    assert s.n >= 50
    assert s.spearman >= 0.97 and s.median_ratio <= 1.15


def test_dense_blackwell_fp4_ranks_and_sizes(scores: dict) -> None:
    s = scores["dense fp4 (Blackwell)"]
    assert s.spearman >= 0.93 and s.median_ratio <= 1.6


def test_all_rows_rank(scores: dict) -> None:
    assert (
        scores["all saturation"].spearman >= 0.95 and scores["all saturation"].median_ratio <= 1.4
    )


def test_vllm_load_points_rank_and_stay_within_a_factor(scores: dict) -> None:
    # a concurrency sweep: throughput rises with load; the model over-predicts the high end
    # (vLLM's per-sequence scheduling cost is not modelled, methodology §6.6)
    s = scores["load points (vllm)"]
    assert s.n == 5 and s.spearman >= 0.99 and s.median_ratio <= 1.35


def test_small_moe_gap_is_held_where_it_is(scores: dict) -> None:
    # grouped-GEMM inefficiency of many small experts is not modelled (methodology §6.6):
    # the model over-predicts Qwen3-30B-A3B's prompt-heavy shapes; the host work per request
    # flattens its curve over shapes (rank 0.69). This floor stops it getting worse unnoticed
    s = scores["moe"]
    assert s.spearman >= 0.6 and s.median_ratio <= 1.8


def test_helpers(harness: ModuleType) -> None:
    assert harness.spearman([1, 2, 3], [3, 5, 9]) == pytest.approx(1.0)
    assert harness.median_ratio([2.0, 1.0, 1.0], [1.0, 2.0, 1.0]) == pytest.approx(2.0)


def test_rocm_vllm_static_batches_gap_is_held_where_it_is(scores: dict) -> None:
    # vLLM's static batches on 8x MI300X (tuning set: AMD's vLLM 0.10.0 table, 32 rows, and
    # OCI's 2024 405B table, 9): ordered, but every row over-predicted 1.0-1.8x (methodology
    # §6.6, "vLLM on MI300X, a tuning set"; 1.46 before the multi-XCD stream share and the
    # table's 16-bit KV cache, 1.35 after, 1.23 with vLLM's piecewise CUDA graphs' split per
    # layer; 1.29 once AMD's 2,048-token prompts are priced as the prefix-cache replays they
    # were, "A replayed prompt"); this floor stops the gap growing unnoticed
    s = scores["load points (vllm, rocm)"]
    assert s.n == 41 and s.spearman >= 0.98 and s.median_ratio <= 1.31


def test_a_replayed_prompt_finds_its_whole_blocks_before_the_last_token(harness) -> None:
    # vLLM V1 caps a prefix-cache hit at the prompt less one token and counts whole blocks
    cached = harness.cached_prompt_tokens
    assert [cached(n, 16) for n in (2048, 128, 17, 16, 1)] == [2032, 112, 16, 0, 0]
    # a row's own figure first, then its source's protocol, else nothing cached
    replay = {"cached_prompt": {"block_tokens": 16}}
    assert harness._cached({"cached_prompt_tokens": 7}, replay, 2048) == 7
    assert harness._cached({}, replay, 2048) == 2032
    assert harness._cached({}, {}, 2048) == 0


def test_amds_latency_rows_are_priced_as_prefix_cache_replays(harness) -> None:
    """AMD's benchmark_latency table replays the same prompts (methodology §6.6, "A replayed
    prompt"): its 2,048-token rows are priced as the decode of a 2,048-token context, which
    is slower than the 128-token rows' by the KV it reads, not by 128 x 2,048 prompt tokens."""
    path = ROOT / "tests" / "data" / "serving_rocm_vllm_latency.yaml"
    rows = {(r.model, r.isl, r.concurrency): r for r in harness.predict(ROOT / "data", [path])}
    for model in ("llama-3.1-70b", "llama-3.1-405b"):
        short, long = rows[(model, 128, 128)], rows[(model, 2048, 128)]
        assert 1.0 < short.predicted / long.predicted < 1.35

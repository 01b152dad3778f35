"""LLM pretraining throughput against published runs (tests/data/llm_pretrain.yaml), scored by
benchmarks/llm_pretrain.py: floors on the engine's accuracy, and the rows' completeness."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks import llm_pretrain
from tests.support import llm_training_rows

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "llm_pretrain.yaml"


@pytest.fixture(scope="module")
def scored() -> tuple[list[llm_pretrain.PretrainRow], list[str]]:
    return llm_pretrain.evaluate_pretrain(ROOT / "data", FILE)


def test_every_row_is_sourced_and_names_a_shape_and_a_catalog_gpu() -> None:
    for row in llm_training_rows(FILE):
        assert row["checkpointing"] in (True, False, "selective"), row
        assert row["tokens_per_s_per_gpu"] > 0 and row["micro_batch"] >= 1, row


def test_only_selective_checkpointing_rows_go_unscored(scored) -> None:
    rows, skipped = scored
    assert len(rows) == 194 and len(skipped) == 5
    assert all("selective" in s for s in skipped)
    assert all(math.isfinite(r.predicted) and r.predicted > 0 for r in rows)


def test_pretraining_floors(scored) -> None:
    """Median ratio error and rank order over all rows and on the H100 table (1.70 before
    FlashAttention-2's Hopper rate and the eager cross-entropy were priced; 1.45 before MPT's
    Triton attention kernel was, 1.23 after, 1.16 once training GEMMs ran at the H100's
    sustained rate, data/efficiency.yaml sustained_gemm_tflops). The H100 table's rank order
    fell from 0.997 to 0.988 with the Triton kernel: its attention-bound long-sequence rows run
    slightly slow (×0.89–0.97) while its GEMM-bound short ones keep part of the Hopper gap
    (×1.1–1.3), so the floor is 0.98 there."""
    rows, _ = scored
    overall = llm_pretrain.score("all", rows)
    assert overall.spearman >= 0.99
    assert overall.median_ratio <= 1.15
    h100 = llm_pretrain.score("h100", [r for r in rows if r.slug == "h100-sxm"])
    assert h100.median_ratio <= 1.2 and h100.spearman >= 0.98
    # the engine still runs faster than measured: a bias the tests keep in view
    assert 0.85 <= overall.bias <= 1.0


def test_scores_are_symmetric_and_rank_based() -> None:
    Row = llm_pretrain.PretrainRow
    rows = [
        Row("s", "t", "g", slug, "", m, 2 * m) for slug, m in (("a", 1.0), ("b", 2.0), ("c", 3.0))
    ]
    s = llm_pretrain.score("x", rows)
    assert s.median_ratio == pytest.approx(2.0) and s.bias == pytest.approx(0.5)
    assert s.spearman == pytest.approx(1.0)
    assert llm_pretrain.group_spearmans(rows) == [pytest.approx(1.0)]

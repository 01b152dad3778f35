"""LLM fine-tuning throughput against published runs (tests/data/finetune_throughput.yaml),
scored by benchmarks/finetune.py: floors on the engine's accuracy, and the rows' completeness."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks import finetune
from tests.support import llm_training_rows

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "finetune_throughput.yaml"


@pytest.fixture(scope="module")
def scored() -> tuple[list[finetune.FinetuneRow], list[str]]:
    return finetune.evaluate_finetune(ROOT / "data", FILE)


def test_every_row_is_sourced_and_names_a_shape_and_a_catalog_gpu() -> None:
    for row in llm_training_rows(FILE):
        assert row["peft"] in ("lora", "qlora", "none", "lora-emb"), row
        assert row["s_per_it"] > 0 and row["seq_len"] >= 1, row
        # the source's Q-LoRA loads GPTQ checkpoints: every 4-bit row says so
        assert (row["peft"] == "qlora") == (row.get("base_quant") == "gptq"), row


def test_only_partly_trained_base_rows_go_unscored(scored) -> None:
    rows, skipped = scored
    assert len(rows) == 48 and len(skipped) == 18
    assert all("lora-emb" in s for s in skipped)
    assert all(math.isfinite(r.predicted) and r.predicted > 0 for r in rows)


def test_tokens_per_second_follow_from_seconds_per_step(scored) -> None:
    rows, _ = scored
    r = next(r for r in rows if r.label == "qwen-7b lora s2048")
    assert r.measured == pytest.approx(1 * 8 * 2048 / 5.2)


def test_finetuning_floors(scored) -> None:
    """Median ratio error and rank order over all rows (1.38 and 0.907 before the eager host
    dispatch, the QLoRA dequantisation per linear and PEFT's adapter kernels were priced),
    and per method."""
    rows, _ = scored
    overall = finetune.score("all", rows)
    assert overall.median_ratio <= 1.2 and overall.spearman >= 0.92
    for method in ("lora", "qlora"):
        sub = finetune.score(method, [r for r in rows if r.method == method])
        assert sub.median_ratio <= 1.25 and sub.spearman >= 0.95, method
    # AutoGPTQ's unpack at half the achieved bandwidth (ms-swift's bf16 vs GPTQ timings): the
    # 7B-72B Q-LoRA rows were 1.2-1.7x fast at short sequences before (median 1.22, bias 0.89)
    qlora = finetune.score("qlora", [r for r in rows if r.method == "qlora"])
    assert qlora.median_ratio <= 1.1 and 0.9 <= qlora.bias <= 1.1
    # full fine-tuning under DeepSpeed (ZeRO-2 or -3) is still priced too fast at short sequences:
    # its host floor has no sourced price (docs/methodology.md, "LLM fine-tuning check")
    full = finetune.score("none", [r for r in rows if r.method == "none"])
    assert full.bias < 0.8
    assert 0.8 <= overall.bias <= 1.05


def test_short_sequences_rank_below_long_ones_within_a_model(scored) -> None:
    rows, _ = scored
    groups = finetune.group_spearmans(rows)
    assert len(groups) == 8 and min(groups) >= 0.85

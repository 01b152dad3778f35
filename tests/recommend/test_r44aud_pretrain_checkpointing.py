"""A preset's fine-tuning recipe does not set a pretraining run's activation checkpointing:
GPT-2 XL pretrained on 10 B tokens (batch 512, 8 GPUs, cheapest, rented) had been priced with
full recomputation on every row (~a third more compute; 8 × H100 9.23 h, $73.97), the
banner saying "as fine-tuning recipes run it", though each row holds the job with micro-batches
alone (7.59 h, $60.84): the recipe's checkpointing belongs to its own task, as its adapters
do. A card that needs recomputation still gets it, as the engine's saver, said on its row."""

from __future__ import annotations

from typing import Any

import pytest

from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from tests.support import GPT2_XL_PRETRAIN, recommend_with

PRETRAIN = GPT2_XL_PRETRAIN


@pytest.mark.parametrize("preset", ["gpt2-xl", "mistral-7b", "qwen2.5-7b"])
def test_the_fine_tuning_recipes_checkpointing_stays_with_fine_tuning(preset: str) -> None:
    tune, _ = resolve_workload(s.WorkloadIn(preset=preset))
    assert tune.task == "fine-tuning" and tune.gradient_checkpointing
    pre, _ = resolve_workload(s.WorkloadIn(preset=preset, task="training"))
    assert pre.task == "training" and not pre.gradient_checkpointing
    # asked, it is what is asked
    on, _ = resolve_workload(
        s.WorkloadIn(preset=preset, task="training", gradient_checkpointing=True)
    )
    assert on.gradient_checkpointing


def test_pretraining_is_not_priced_with_a_fine_tuning_recipes_recomputation(
    shipped_catalog: Any,
) -> None:
    answer = recommend_with(
        shipped_catalog,
        {
            "workload": PRETRAIN,
            "constraints": {"acquisition": "rent", "max_gpus": 8},
            "objective": "cheapest",
            "limit": 3,
        },
    )
    assert not any("fine-tuning recipes" in a for a in answer.advice)
    for row in answer.recommendations:
        recomputed = any("activation recomputation" in e for e in row.explanation)
        # recomputation only where the engine's saver turned it on for the card
        assert recomputed == ("gradient checkpointing" in row.memory_savers)
    asked = recommend_with(
        shipped_catalog,
        {
            "workload": {**PRETRAIN, "gradient_checkpointing": True},
            "constraints": {"acquisition": "rent", "max_gpus": 8},
            "objective": "cheapest",
            "limit": 1,
        },
    )
    top, with_ckpt = answer.recommendations[0], asked.recommendations[0]
    assert top.cost.job_cost_usd is not None and with_ckpt.cost.job_cost_usd is not None
    # recomputing every activation costs more than the micro-batches that make room
    assert top.cost.job_cost_usd < with_ckpt.cost.job_cost_usd

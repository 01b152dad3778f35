"""The answer's headline memory is the least the job needs with the savers the answer may add:
micro-batch 1, and, where the request left them open, gradient checkpointing and 8-bit AdamW,
as the rows run. A full fine-tune of Llama 3.1 8B had read 151 GB "the least" beside rows
holding it in 94 GB with 8-bit AdamW."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import load_presets
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = [g for g in read_gpu_specs(DATA) if g.slug in ("rtx-4090", "h100-sxm", "h200-sxm")]
RULES = load_rules(DATA)
PARAMS = load_presets(DATA)["llama-3.1-8b"].model.params


def _answer(**workload: object) -> s.RecommendationResponse:
    body = {"workload": {"preset": "llama-3.1-8b", "task": "fine-tuning", **workload}}
    return service.recommend(s.RecommendationRequest.model_validate(body), GPUS, RULES)


def test_the_least_uses_the_savers_left_open() -> None:
    r = _answer()
    least = r.memory.notes[0]
    assert least.startswith("the least the job needs: micro-batch 1")
    assert "8-bit AdamW" in least
    # 8-bit AdamW keeps 2 bytes a parameter of optimizer state, not AdamW's 8
    assert r.memory.breakdown["optimizer"] == pytest.approx(PARAMS * 2 / 1e9, rel=0.01)
    # no row on one GPU needs less than "the least"
    assert r.recommendations
    for row in r.recommendations:
        if row.num_gpus == 1:
            assert row.memory.required_gb >= r.memory.required_gb - 1e-6


def test_a_stated_optimizer_stays_in_the_least() -> None:
    stated = _answer(optimizer="adamw")
    assert "8-bit AdamW" not in stated.memory.notes[0]
    assert stated.memory.breakdown["optimizer"] == pytest.approx(PARAMS * 8 / 1e9, rel=0.01)
    assert stated.memory.required_gb > _answer().memory.required_gb + PARAMS * 6 / 1e9

"""The catalog's columns (app/domain/fleet.py) lay a card out only on GPU counts whose
tensor-parallel degree splits the model's heads, as ev.plan does (the fortieth session's
review found it): Phi-4's 10 KV heads split over neither 4 nor 8 GPUs under vLLM, which a
balanced answer (the columns' path) had ranked on 44 more cards than the same question under
'fastest' (plan's path), 30 rows on 4 GPUs and 14 on 8."""

from __future__ import annotations

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules

GPUS = list(read_gpu_specs(DATA_DIR))
RULES = load_rules(DATA_DIR)
BODY = {
    "workload": {"preset": "phi-4", "task": "inference", "batch_size": 4, "runtime": "vllm"},
    "objective": "balanced",
    "limit": 100,
}


def _answer(monkeypatch: pytest.MonkeyPatch, lazy: bool) -> s.RecommendationResponse:
    if not lazy:
        monkeypatch.setattr(service, "_lazy", lambda _r: False)
    return service.recommend(s.RecommendationRequest.model_validate(BODY), GPUS, RULES)


def test_no_row_or_alternative_runs_a_count_the_heads_do_not_split(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answer = _answer(monkeypatch, lazy=True)
    model = answer.recommendations[0]
    assert model is not None
    # what the case rests on: vLLM refuses 4 and 8, not 2
    phi4 = service.resolve_workload(s.WorkloadIn.model_validate(BODY["workload"]), DATA_DIR)[0]
    assert [llm_step.head_split_error(phi4.model, k) is None for k in (2, 4, 8)] == [
        True, False, False,
    ]  # fmt: skip
    counts = {r.num_gpus for r in answer.recommendations}
    counts |= {a.num_gpus for r in answer.recommendations for a in r.alternatives}
    assert counts <= {1, 2}


def test_the_columns_rank_what_plan_ranks(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _answer(monkeypatch, lazy=True)
    full = _answer(monkeypatch, lazy=False)
    assert fast.counts == full.counts
    assert sorted(x.slug for x in fast.excluded) == sorted(x.slug for x in full.excluded)

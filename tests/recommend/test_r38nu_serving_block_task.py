"""A serving block with no task is a serving question (a new user's walk, thirty-eighth
session): `{"preset": "qwen2.5-32b", "serving": {"concurrent_requests": 100}}` took the preset's
task, inference, ignored the load with a warning and led with a one-batch purchase answer. A
stated task still wins, the block then ignored as before."""

from __future__ import annotations

from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import A100, H100, RULES

LOAD = {"concurrent_requests": 20, "prompt_tokens": 500, "output_tokens": 100}


def _answer(workload: dict[str, object]) -> s.RecommendationResponse:
    body = {"workload": workload, "constraints": {"acquisition": "rent"}}
    return service.recommend(s.RecommendationRequest.model_validate(body), [A100, H100], RULES)


def test_a_serving_block_without_a_task_plans_serving() -> None:
    r = _answer({"preset": "llama-3-8b", "serving": LOAD})
    assert r.workload.task == "serving"
    assert r.workload.serving is not None and r.workload.serving.concurrent_requests == 20
    assert r.recommendations and r.recommendations[0].serving is not None
    assert "task not given: a serving block asks for task 'serving'" in r.warnings
    assert not any("ignored" in w for w in r.warnings), r.warnings


def test_a_stated_task_wins_over_the_block() -> None:
    r = _answer({"preset": "llama-3-8b", "task": "inference", "serving": LOAD})
    assert r.workload.task == "inference"
    assert "the serving block only applies to task 'serving'; ignored" in r.warnings


def test_no_block_keeps_the_presets_task() -> None:
    r = _answer({"preset": "llama-3-8b"})
    assert r.workload.task == "inference"
    assert not any("task not given" in w for w in r.warnings)

"""A serving verdict says the per-user pace the ranking weighs (review 30, vf): under a fixed
load (requests/s) every shape that carries it produces the same output tokens/s, and the
ranking's speed is the inter-token latency, so "Pick 8 × H100 … runs 3,000 output tokens/s"
beside a cheaper "Runner-up: 3 × B200 (3,000 output tokens/s …)" had not said why the dearer
pick won."""

from __future__ import annotations

import re

from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import A100, H100, RULES
from tests.support import summary_of

LOAD = {"requests_per_s": 4, "prompt_tokens": 1000, "output_tokens": 300}


def _answer(objective: str) -> s.RecommendationResponse:
    body = {
        "workload": {"preset": "llama-3-8b", "task": "serving", "serving": LOAD},
        "constraints": {"acquisition": "either"},
        "objective": objective,
    }
    request = s.RecommendationRequest.model_validate(body)
    return service.recommend(request, [A100, H100], RULES)


def _itl_said(sentence: str) -> list[float]:
    return [float(x) for x in re.findall(r"a token every ([\d.,]+) ms", sentence)]


def test_serving_verdict_names_each_rows_inter_token_latency() -> None:
    r = _answer("balanced")
    rows = r.recommendations
    assert len(rows) >= 2
    # the premise: a fixed load gives every row one output rate, so the rate cannot tell them
    assert rows[0].throughput.value == rows[1].throughput.value
    sentence = summary_of(r).sentence
    said = _itl_said(sentence)
    assert len(said) == 2, sentence  # the pick's and the runner-up's
    for got, row in zip(said, rows[:2], strict=True):
        assert row.serving is not None and row.serving.itl_ms
        assert abs(got - row.serving.itl_ms) <= 0.051 * row.serving.itl_ms  # 3 figures
    # the pick's first token is said too, and it comes after its rate, before its price
    assert "after a first token in" in sentence
    assert sentence.index("a token every") < sentence.index("Runner-up")


def test_non_serving_verdict_has_no_inter_token_clause() -> None:
    body = {"workload": {"preset": "llama-3-8b", "task": "inference"}, "objective": "balanced"}
    r = service.recommend(s.RecommendationRequest.model_validate(body), [A100, H100], RULES)
    assert "a token every" not in summary_of(r).sentence

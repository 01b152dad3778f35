"""Session 41 (tidy): a what-if's top pick is "(same)" only where it is the answer's card at the
answer's count; one H200 and 8 × H200 are two machines, and the page had marked them the same."""

from __future__ import annotations

from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import H200, RULES


def _answer() -> s.RecommendationResponse:
    body = {
        "workload": {"preset": "llama-3.1-8b", "task": "training"},
        "constraints": {"num_gpus": 1},
        "what_if": True,
    }
    return service.recommend(s.RecommendationRequest.model_validate(body), [H200], RULES)


def test_another_gpu_count_of_the_same_card_is_not_the_same_top() -> None:
    answer = _answer()
    assert [(r.gpu.slug, r.num_gpus) for r in answer.recommendations] == [(H200.slug, 1)]
    assert answer.what_if is not None
    (lifted,) = [v for v in answer.what_if if v.change.startswith("any GPU count")]
    assert (lifted.top_slug, lifted.num_gpus) == (H200.slug, 8)
    assert lifted.same_top is False


def test_the_same_card_at_the_same_count_is_still_the_same() -> None:
    answer = _answer()
    assert answer.what_if is not None
    kept = [v for v in answer.what_if if v.top_slug == H200.slug and v.num_gpus == 1]
    assert kept and all(v.same_top for v in kept)

"""A missed deadline for offline inference names a larger batch (review 30, vf): 1,000,000
Llama 3 8B samples at batch 1 had been offered 1844 copies of a B200 ("1844 × (…)", no
thousands separator) and "543 of the 1,000,000 samples (0%)", never the batch — the lever an
expert pulls first, since a decode step reads every weight once for the whole batch."""

from __future__ import annotations

import re

from app.recommend import deadline, service
from app.recommend import schemas as s
from tests.domain.fixtures import A100, H100, RULES

JOB = {"preset": "llama-3-8b", "task": "inference", "batch_size": 1, "output_tokens": 128}


def _answer(samples: float, hours: float, **workload: object) -> s.RecommendationResponse:
    body = {
        "workload": JOB | {"dataset_samples": samples, **workload},
        "constraints": {"max_hours": hours, "max_gpus": 1},
        "objective": "cheapest",
    }
    return service.recommend(s.RecommendationRequest.model_validate(body), [A100, H100], RULES)


def _fastest_h(samples: float, batch: int) -> float:
    body = {
        "workload": JOB | {"dataset_samples": samples, "batch_size": batch},
        "constraints": {"max_gpus": 1},
        "objective": "fastest",
    }
    r = service.recommend(s.RecommendationRequest.model_validate(body), [A100, H100], RULES)
    took = r.recommendations[0].time_to_finish_h
    assert took is not None
    return took


def test_a_larger_batch_is_named_first_where_it_meets_the_deadline() -> None:
    samples = 20_000
    one, sixteen = _fastest_h(samples, 1), _fastest_h(samples, 16)
    # the premise, from the engine's own rows: decode at batch 16 shares each weight read
    assert sixteen < one / 4
    limit = (sixteen + one / 4) / 2  # between batch 16's time and a quarter of batch 1's
    four = _fastest_h(samples, 4)
    assert four > limit, (four, limit)
    r = _answer(samples, limit)
    assert r.deadline is not None and r.deadline.met is False
    lines = [w for w in r.deadline.would if w.startswith(deadline.LARGER_BATCH)]
    assert len(lines) == 1, r.deadline.would
    assert "batch 16 instead of 1" in lines[0], lines[0]
    # it asks for no more cards, so it comes before copies and is what the verdict names
    assert r.deadline.would[0].startswith(deadline.LARGER_BATCH)
    said = deadline.needs(r.deadline)
    assert said is not None and "a larger batch: batch 16" in said


def test_no_batch_line_where_no_rung_meets_it_nor_past_the_samples() -> None:
    r = _answer(1_000_000, 0.01)
    assert r.deadline is not None and r.deadline.met is False
    assert not any(w.startswith(deadline.LARGER_BATCH) for w in r.deadline.would)
    # a dataset smaller than the first rung is not batched past itself
    tiny = _answer(3, 1e-6)
    assert tiny.deadline is not None and not tiny.deadline.met
    assert not any(w.startswith(deadline.LARGER_BATCH) for w in tiny.deadline.would)


def test_large_counts_and_small_shares_read_as_people_write_them() -> None:
    r = _answer(1_000_000, 0.01)
    assert r.deadline is not None
    copies = next(w for w in r.deadline.would if w.startswith(deadline.COPIES))
    n = re.search(r": ([\d,]+) × \(", copies)
    assert n is not None, copies
    if int(n.group(1).replace(",", "")) >= 1000:
        assert "," in n.group(1), copies
    shorter = next(w for w in r.deadline.would if w.startswith(deadline.SHORTER_JOB))
    share = re.search(r"\(([\d.]+)%\)", shorter)
    assert share is not None and float(share.group(1)) > 0, shorter

"""A missed deadline's "more GPUs" names the fewest GPUs on the engine's count ladder that
meet it, not the most the engine plans (512 × B200 in 17 min had been named where 8 × B200
already met a 3 h deadline)."""

from __future__ import annotations

import re

from app.domain.evaluate import COUNTS
from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import A100, H100, RULES

GPUS = [A100, H100]


def _rank(body: dict) -> s.RecommendationResponse:
    return service.recommend(s.RecommendationRequest.model_validate(body), GPUS, RULES)


def _fastest(job: dict, cap: int) -> float:
    r = _rank({"workload": job, "constraints": {"max_gpus": cap}, "objective": "fastest"})
    took = r.recommendations[0].time_to_finish_h
    assert took is not None
    return took


def test_more_gpus_names_the_fewest_on_the_ladder_that_meet_the_deadline() -> None:
    job = {"preset": "resnet-50", "task": "training", "batch_size": 1024, "epochs": 90}
    one = _fastest(job, 1)
    limit = one * 0.4  # more than one GPU is needed, far fewer than 512
    r = _rank({"workload": job, "constraints": {"max_gpus": 1, "max_hours": limit}})
    assert r.deadline is not None and r.deadline.met is False
    line = next(w for w in r.deadline.would if w.startswith("more GPUs"))
    found = re.search(r"more GPUs: (\d+) × .* \(constraints\.max_gpus (\d+)\)", line)
    assert found is not None, line
    count, cap = int(found.group(1)), int(found.group(2))
    assert cap in COUNTS and count <= cap < COUNTS[-1], line
    assert _fastest(job, cap) <= limit < _fastest(job, COUNTS[COUNTS.index(cap) - 1])


def test_no_more_gpus_line_when_even_the_most_miss() -> None:
    job = {"preset": "resnet-50", "task": "training", "batch_size": 1024, "epochs": 90}
    limit = _fastest(job, COUNTS[-1]) * 0.5
    r = _rank({"workload": job, "constraints": {"max_gpus": 1, "max_hours": limit}})
    assert r.deadline is not None and r.deadline.met is False
    assert not any(w.startswith("more GPUs") for w in r.deadline.would)

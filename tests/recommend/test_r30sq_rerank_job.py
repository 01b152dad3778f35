"""A request's re-rankings (what-if variations, the deadline's searches) run the asking
request's own job spec where a variation resolves to an equal job, so the terms derived from
it (WorkloadSpec.derived: its step operators and their columns, its share-of-batch jobs) are
worked out once per request; a variation that changes the job gets its own spec. The answer
is the one a re-ranking resolving its job afresh gives."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain import perf
from app.domain.workload import WorkloadSpec
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules
from tests.domain.fixtures import A100, H100, RTX4090

GPUS = [A100, H100, RTX4090]
ASK: dict[str, Any] = {
    "workload": {"preset": "resnet-50", "task": "training", "epochs": 90},
    "constraints": {"max_hours": 24},
}


def _recommend(body: dict[str, Any], job: WorkloadSpec | None = None) -> s.RecommendationResponse:
    req = s.RecommendationRequest.model_validate(body)
    return service.recommend(req, GPUS, load_rules(DATA_DIR), explain_empty=False, job=job)


def _job(body: dict[str, Any]) -> WorkloadSpec:
    return service._resolve(s.RecommendationRequest.model_validate(body), DATA_DIR)[0]


def test_an_equal_job_runs_the_asking_requests_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(ASK)
    seen: list[WorkloadSpec] = []
    step = perf._step_job

    def spy(work: WorkloadSpec, flash: bool, act_b: float) -> Any:
        seen.append(work)
        return step(work, flash, act_b)

    monkeypatch.setattr(perf, "_step_job", spy)
    fastest = {**ASK, "objective": "fastest", "constraints": {"max_gpus": 64}}
    answer = _recommend(fastest, job)
    assert any(w is job for w in seen)  # the spec itself, its derived terms with it
    assert job.derived  # the step's terms were kept on it for the next re-ranking
    assert answer == _recommend(fastest)  # what resolving afresh answers


@pytest.mark.parametrize(
    "change", [{"batch_size": 128}, {"precision": "fp32"}, {"channels_last": True}]
)
def test_a_changed_job_gets_its_own_spec(change: dict[str, Any]) -> None:
    job = _job(ASK)
    other = {**ASK, "workload": {**ASK["workload"], **change}}
    assert _job(other) != job
    before = dict(job.derived)
    assert _recommend(other, job) == _recommend(other)
    assert job.derived == before  # nothing of the other job was kept on this one

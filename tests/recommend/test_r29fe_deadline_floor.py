"""A missed deadline is searched from each configuration's least possible time (the job over
its loose throughput bound, service._hours_floor): a card every count of which surely misses it
is said at its fastest count after evaluating only the counts that could be fastest, and a
re-ranking read for its rows alone (a what-if variation, explain_empty false) leaves it out
unevaluated. Every count of every card had been evaluated, in each of a dozen re-rankings:
ResNet-50 rented under 30 minutes took 6 CPU s where no deadline took 0.4
(benchmarks/deadline_cpu.py). The answers are the ones the full evaluation gives."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain import evaluate as ev
from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import H100, RULES, T4

GPUS = [H100, T4]


def _answer(monkeypatch: pytest.MonkeyPatch, floors: bool, **body: Any) -> tuple[dict, int]:
    calls = 0
    evaluate = ev.evaluate

    def counted(*a: Any, **k: Any) -> ev.ConfigResult:
        nonlocal calls
        calls += 1
        return evaluate(*a, **k)

    monkeypatch.setattr(ev, "evaluate", counted)
    if not floors:
        monkeypatch.setattr(service, "_hours_floor", lambda planned, ctx: None)
    req = s.RecommendationRequest.model_validate(body)
    out = service.recommend(req, GPUS, RULES).model_dump()
    monkeypatch.undo()
    return out, calls


@pytest.mark.parametrize("hours", [0.5, 3.0])
def test_a_deadline_answer_is_the_full_evaluations_with_fewer_evaluations(
    monkeypatch: pytest.MonkeyPatch, hours: float
) -> None:
    body = {"workload": {"preset": "resnet-50"}, "constraints": {"max_hours": hours}}
    fast, few = _answer(monkeypatch, True, **body)
    full, every = _answer(monkeypatch, False, **body)
    assert fast == full
    if hours == 0.5:  # nothing meets it: the answer explains itself with its variations
        assert not fast["recommendations"] and fast["what_if"] and fast["deadline"]["would"]
        assert few < every / 2


def test_the_floor_is_never_above_the_time_evaluated() -> None:
    req = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "resnet-50"}, "constraints": {"max_hours": 0.5}}
    )
    work, _ = service._resolve(req, service.DATA_DIR)
    ctx = service._context(work, req, req.objective, RULES, None)
    checked = 0
    for gpu in GPUS:
        planned = ev.plan(gpu, ctx)
        if isinstance(planned, ev.Exclusion):
            continue
        floors = service._hours_floor(planned, ctx)
        assert floors is not None
        for cfg, floor in zip(planned, floors, strict=True):
            r = ev.evaluate(cfg, ctx)
            took = r.cost.time_to_finish_h if r.cost is not None else None
            if took is not None:
                assert floor <= took * (1 + 1e-12), (gpu.slug, cfg.num_gpus)
                checked += 1
    assert checked > 5


def test_a_brief_re_ranking_leaves_a_surely_late_card_out_unevaluated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    req = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "resnet-50"}, "constraints": {"max_hours": 0.01}}
    )
    work, _ = service._resolve(req, service.DATA_DIR)
    ctx = service._context(work, req, req.objective, RULES, None)
    monkeypatch.setattr(ev, "evaluate", lambda *a, **k: pytest.fail("evaluated"))
    monkeypatch.setattr(ev, "finish", lambda *a, **k: pytest.fail("finished"))
    out = service._evaluated(H100, ctx, brief=True)
    assert isinstance(out, ev.Exclusion) and out.code == "misses_deadline"

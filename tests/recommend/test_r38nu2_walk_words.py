"""A new user's walk (thirty-eighth session) read identifiers in each row's explanation —
"Assumes the pytorch runtime on cuda", a serving row's "vllm 0.10" — and a 2-GPU alternative
at batch 1 listed at the row's speed for twice its price. The explanations use the forms'
words; an alternative no faster than one listed (within rank.FASTEST_TIE) that costs more is
dominated and not listed."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain import rank
from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import A100, H100, RTX4090, RULES

GPUS = [A100, H100, RTX4090]


def _answer(body: dict[str, Any]) -> s.RecommendationResponse:
    return service.recommend(s.RecommendationRequest.model_validate(body), GPUS, RULES)


def _assumes(r: s.Recommendation) -> str:
    return next(line for line in r.explanation if line.startswith("Assumes"))


def test_the_runtime_line_names_runtime_and_backend_in_words() -> None:
    llm = _answer({"workload": {"preset": "llama-3-8b", "task": "inference"}})
    cnn = _answer({"workload": {"preset": "resnet-50", "task": "training"}})
    assert llm.recommendations and cnn.recommendations
    for r in llm.recommendations:
        assert _assumes(r) == "Assumes Hugging Face Transformers (eager generate) on CUDA."
    for r in cnn.recommendations:
        assert _assumes(r) == "Assumes PyTorch (eager) on CUDA."
    every = " ".join(line for a in (llm, cnn) for r in a.recommendations for line in r.explanation)
    assert "runtime on cuda" not in every and " on cuda" not in every


def test_a_weight_format_is_named_in_words() -> None:
    body = {"workload": {"preset": "llama-3-8b", "task": "inference", "quantization": "awq"}}
    line = _assumes(_answer(body).recommendations[0])
    assert line.endswith(", AWQ weights."), line


def test_a_serving_row_names_its_runtime() -> None:
    load = {"concurrent_requests": 10, "prompt_tokens": 500, "output_tokens": 200}
    answer = _answer({"workload": {"preset": "llama-3-8b", "task": "serving", "serving": load}})
    first = [r.explanation[0] for r in answer.recommendations]
    assert first and all("KV cache, vLLM 0.10 (V1 engine)." in line for line in first), first
    assert not any("vllm" in line for line in first)


def _dominated(row: s.Recommendation) -> list[s.AlternativeOut]:
    cost = row.cost.purchase_usd
    return [
        a
        for a in row.alternatives
        if a.throughput <= row.throughput.value * rank.FASTEST_TIE
        and cost is not None
        and a.purchase_usd is not None
        and a.purchase_usd > cost
    ]


BATCH_ONE = {
    "workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 1},
    "constraints": {"acquisition": "buy", "max_gpus": 4},
}


def test_extra_cards_that_add_no_speed_are_not_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _answer(BATCH_ONE).recommendations
    assert rows and all(r.num_gpus == 1 for r in rows)
    assert not any(_dominated(r) for r in rows)
    # the premise: the engine does evaluate them, a layer split of one token at the same speed
    monkeypatch.setattr(rank, "undominated", lambda _chosen, others: list(others or []))
    # (those the chosen row surely dominates are otherwise counted, not finished)
    monkeypatch.setattr(service._Proofs, "prove", lambda _self, _row, slots: list(slots))
    every = _answer(BATCH_ONE).recommendations
    listed = [a for r in every for a in _dominated(r)]
    assert listed and all(a.num_gpus > 1 for a in listed)


def test_an_alternative_that_is_faster_stays() -> None:
    # data-parallel training: a second card adds speed, so it is listed though it costs more
    body = {
        "workload": {"preset": "resnet-50", "task": "training"},
        "constraints": {"acquisition": "buy", "max_gpus": 2},
        "objective": "cheapest",
    }
    rows = _answer(body).recommendations
    faster = [
        a
        for r in rows
        for a in r.alternatives
        if a.throughput > r.throughput.value * rank.FASTEST_TIE and a.num_gpus > r.num_gpus
    ]
    assert faster
    assert not any(_dominated(r) for r in rows)


def _cand(n: int, speed: float, purchase: float | None) -> Any:
    """A Candidate's fields undominated reads, and nothing else."""
    from types import SimpleNamespace

    from app.domain import cost as costs

    cost = costs.CostEstimate(
        purchase_usd=purchase, hourly_usd=None, energy_usd_per_hour=None, power_w=None,
        time_to_finish_h=None, rent_to_finish_usd=None, energy_to_finish_usd=None,
        buy_to_finish_usd=None, break_even_hours=None, samples_per_usd_rent=None,
        samples_per_usd_buy=None, horizon_hours=1.0,
    )  # fmt: skip
    perf = SimpleNamespace(throughput=speed, unit="tokens/s")
    # roomy and with no latency target: speed and price alone decide (room and a target
    # met keep a configuration: tests/recommend/test_r38cr2_alternatives.py)
    memory = SimpleNamespace(total=10.0)
    return SimpleNamespace(
        n=n, perf=perf, cost=cost, acquisition="buy", memory=memory, available_gb=80.0,
        meets_latency=None,
    )  # fmt: skip


def test_the_rule_on_its_own() -> None:
    chosen = _cand(1, 100.0, 1000.0)
    same = _cand(2, 104.0, 2000.0)  # within 5 %, dearer: out
    faster = _cand(2, 190.0, 2000.0)  # faster: in
    after = _cand(4, 195.0, 4000.0)  # no faster than the 2-card one, dearer: out
    cheaper = _cand(1, 60.0, 800.0)  # slower but cheaper: in
    unpriced = _cand(2, 100.0, None)  # unpriced: more of the same card costs more, out
    got = rank.undominated(chosen, [cheaper, same, faster, after, unpriced])
    assert got == [cheaper, faster]

"""The engine's shortcuts give the answer the plain path gives, to the last digit: every
configuration evaluated, then rank.best_per_card (the reference), over the shipped catalog
and offers, for workloads where counts, memory savers and prices differ per card."""

from __future__ import annotations

from typing import Any

import pytest

from app.catalog.service import all_specs
from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.offers.service import gpu_offers
from app.recommend import presets, service
from app.recommend import schemas as s

REQUESTS: list[dict[str, Any]] = [
    {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4}},
    {"workload": {"preset": "llama-3-70b"}, "limit": 40},
    {"workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "none"}, "limit": 30},
    {"workload": {"preset": "mistral-7b", "task": "fine-tuning"}, "limit": 500},
    {"workload": {"preset": "gpt2-xl", "task": "training", "batch_size": 256}, "limit": 500},
    {
        "workload": {"preset": "resnet-50"},
        "constraints": {"acquisition": "rent", "max_hourly_usd": 6, "max_gpus": 8},
        "limit": 500,
    },
    {
        "workload": {"preset": "qwen2.5-72b", "task": "inference"},
        "constraints": {"acquisition": "buy", "max_purchase_usd": 40000},
        "limit": 500,
    },
]


# Cost objectives and budgets: cards without a price, or over budget at their fewest cards,
# are cut after one evaluation (service._priced_out).
PRICED: list[dict[str, Any]] = [
    {
        "workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4},
        "constraints": {"acquisition": "rent", "max_gpus": 2},
        "objective": "best_value",
    },
    {"workload": {"preset": "llama-3-70b"}, "objective": "cheapest", "limit": 500},
    {
        "workload": {"preset": "llama-3-70b", "task": "fine-tuning"},
        "objective": "best_value",
        "constraints": {"max_hourly_usd": 20, "acquisition": "rent"},
        "group_by": "config",
        "limit": 500,
    },
    {
        "workload": {"preset": "mistral-7b"},
        "objective": "cheapest",
        "constraints": {"max_purchase_usd": 2000},
        "limit": 500,
    },
    {
        "workload": {"preset": "gpt2-xl", "task": "training", "batch_size": 256},
        "constraints": {"max_purchase_usd": 30000, "acquisition": "either"},
        "limit": 500,
    },
    {  # over the job budget on 1 card but not on 2: only a price cut before the roofline cuts
        "workload": {"preset": "llama-3-8b", "task": "inference", "dataset_samples": 1e5},
        "objective": "cheapest",
        "constraints": {"max_job_cost_usd": 100, "acquisition": "rent"},
        "limit": 500,
    },
    {
        "workload": {"preset": "llama-3-8b", "task": "inference"},
        "constraints": {"exclude_marketplace": True, "acquisition": "rent", "num_gpus": 2},
        "objective": "cheapest",
        "limit": 500,
    },
]


@pytest.fixture
def catalog(settings: Settings) -> Any:
    engine = make_engine(settings.database_url)
    with session_scope(make_session_factory(engine)) as session:
        yield all_specs(session), gpu_offers(session), presets.load_rules(settings.data_dir)
    engine.dispose()


@pytest.mark.parametrize("body", REQUESTS, ids=lambda b: b["workload"]["preset"])
def test_balanced_cards_evaluated_lazily_answer_as_the_full_evaluation(
    body: dict[str, Any], catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpus, offers, rules = catalog
    req = s.RecommendationRequest.model_validate(body)
    assert service._lazy(req)
    fast = service.recommend(req, gpus, rules, offers=offers).model_dump()
    monkeypatch.setattr(service, "_lazy", lambda _r: False)
    reference = service.recommend(req, gpus, rules, offers=offers).model_dump()
    assert fast == reference
    assert any(r["alternatives"] for r in fast["recommendations"])


@pytest.mark.parametrize(
    "body", PRICED, ids=lambda b: f"{b['workload']['preset']}-{b.get('objective')}"
)
def test_cards_priced_out_at_their_fewest_cards_answer_as_the_full_evaluation(
    body: dict[str, Any], catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpus, offers, rules = catalog
    req = s.RecommendationRequest.model_validate(body)
    fast = service.recommend(req, gpus, rules, offers=offers).model_dump()
    monkeypatch.setattr(service, "_lazy", lambda _r: False)
    monkeypatch.setattr(service, "_price_cut", lambda _ctx: False)
    reference = service.recommend(req, gpus, rules, offers=offers).model_dump()
    assert fast == reference
    codes = {e["code"] for e in fast["excluded"]}
    assert codes & {"no_price", "over_budget"}

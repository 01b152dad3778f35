"""The engine's shortcuts give the answer the plain path gives, to the last digit: every
configuration evaluated, then rank.best_per_card (the reference), over the shipped catalog
and offers, for workloads where counts, memory savers and prices differ per card."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from app.domain import evaluate as ev
from app.domain import fleet, perf, rank
from app.recommend import schemas as s
from app.recommend import service
from tests.support import lazy_and_full


def _configurations(
    snap: fleet.Snapshot, ctx: ev.Context, count: Any
) -> list[ev.Configuration | None]:
    """Each card's configuration from its count (fleet.first_counts), None where it is 0, as
    the service makes the rows it walks (fleet.configuration)."""
    return [fleet.configuration(snap, ctx, count, i) if n else None for i, n in enumerate(count)]


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
    # extra GPUs as copies: planned card by card (no columns), each count laid out as copies
    {
        "workload": {
            "preset": "llama-3-70b",
            "task": "inference",
            "batch_size": 16,
            "extra_gpus": "copies",
        },
        "limit": 40,
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
def catalog(shipped_catalog: Any) -> Any:
    """The engine reads no database: the catalog is read once per session (conftest); each
    test gets its own list of it."""
    gpus, offers, rules = shipped_catalog
    return list(gpus), offers, rules


@pytest.mark.parametrize("body", REQUESTS, ids=lambda b: b["workload"]["preset"])
def test_balanced_cards_evaluated_lazily_answer_as_the_full_evaluation(
    body: dict[str, Any], catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gpus, offers, rules = catalog
    req = s.RecommendationRequest.model_validate(body)
    assert service._lazy(req)
    # every alternative compared, dominated ones too (rank.undominated, a pure function of
    # them, leaves out most of these: an LLM's extra cards at batch 1 are no faster)
    monkeypatch.setattr(rank, "undominated", lambda _chosen, others: list(others or []))
    # ... the ones the chosen row surely dominates finished too (otherwise only counted)
    monkeypatch.setattr(service._Proofs, "prove", lambda _self, _row, slots: list(slots))
    fast, reference = lazy_and_full(monkeypatch, req, gpus, rules, offers)
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


# 'fastest', 'best_value', 'cheapest', one row per card: cards whose bound is below the rows
# shown are counted, not evaluated (service._bounded). Limits small enough that most cards are
# cut.
FASTEST: list[dict[str, Any]] = [
    {"workload": {"preset": "resnet-50"}, "limit": 10},
    {"workload": {"preset": "resnet-50", "batch_size": 3}, "limit": 1},
    {"workload": {"preset": "gpt2-xl", "task": "training", "batch_size": 64}, "limit": 5},
    {"workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "none"}, "limit": 3},
    {"workload": {"preset": "mistral-7b", "task": "fine-tuning"}, "limit": 4},
    {"workload": {"preset": "llama-3-8b", "task": "inference"}, "limit": 5},
    {
        "workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4},
        "constraints": {"framework": "pytorch", "acquisition": "rent", "max_gpus": 2},
        "limit": 5,
    },
    {"workload": {"preset": "llama-3-70b", "task": "inference", "latency_target_ms": 60000}},
    {"workload": {"preset": "sdxl", "task": "inference"}, "limit": 2},
    {
        "workload": {"preset": "resnet-50"},
        "constraints": {"acquisition": "rent", "max_hourly_usd": 6, "exclude_marketplace": True},
        "limit": 3,
    },
    {"workload": {"preset": "bert-large"}, "constraints": {"vendors": ["amd"]}, "limit": 2},
    {"workload": {"preset": "resnet-50"}, "constraints": {"num_gpus": 2}, "limit": 4},
    # eager decoding is host-bound: one card beats two, whose step adds communication
    {
        "workload": {"preset": "llama-3-70b", "task": "inference"},
        "constraints": {"acquisition": "rent", "max_gpus": 2},
        "limit": 3,
    },
    {"workload": {"preset": "qwen2.5-72b", "task": "inference"}, "limit": 10},
    # extra GPUs as copies: a copy's share of the batch, bounded copy by copy
    {
        "workload": {
            "preset": "llama-3-8b",
            "task": "inference",
            "batch_size": 24,
            "extra_gpus": "copies",
        },
        "limit": 5,
    },
]


def _copies(gpus: list[Any], times: int) -> list[Any]:
    """The catalog and ``times - 1`` copies of it under other slugs: equal throughputs, so
    cut cards tie with the rows shown."""
    import dataclasses

    out = list(gpus)
    for i in range(1, times):
        out += [dataclasses.replace(g, slug=f"{g.slug}-copy{i}") for g in gpus]
    return out


@pytest.mark.parametrize("objective", ["fastest", "best_value", "cheapest"])
@pytest.mark.parametrize("copies", [1, 3], ids=["catalog", "catalog-x3"])
@pytest.mark.parametrize("body", FASTEST, ids=lambda b: b["workload"]["preset"])
def test_cards_that_cannot_reach_the_rows_shown_answer_as_the_full_evaluation(
    body: dict[str, Any],
    copies: int,
    objective: str,
    catalog: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpus, offers, rules = catalog
    gpus = _copies(gpus, copies)
    req = s.RecommendationRequest.model_validate({**body, "objective": objective})
    counted: list[int] = []
    census = service._census

    def counting(*args: Any) -> Any:
        counted.append(1)
        return census(*args)

    monkeypatch.setattr(service, "_census", counting)
    fast = service.recommend(req, gpus, rules, offers=offers).model_dump()
    monkeypatch.setattr(service, "_prunable", lambda _r, _c: False)
    reference = service.recommend(req, gpus, rules, offers=offers).model_dump()
    assert fast == reference
    assert counted, "no card was cut: the test shows nothing"


# balanced bounds cards only where it shows each with its fewest GPUs: not a training job,
# whose counts it weighs against each other (rank.best_per_card), every one evaluated
BALANCED_BOUNDED = [b for b in FASTEST if b["workload"].get("task") == "inference"]


@pytest.mark.parametrize("speed_weight", [0.5, 0.15, 1.0])
@pytest.mark.parametrize("copies", [1, 3], ids=["catalog", "catalog-x3"])
@pytest.mark.parametrize("body", BALANCED_BOUNDED, ids=lambda b: b["workload"]["preset"])
def test_balanced_cards_that_cannot_change_the_answer_answer_as_the_full_evaluation(
    body: dict[str, Any],
    copies: int,
    speed_weight: float,
    catalog: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Balanced scores are scaled by the best speed and value of every card ranked: a card is
    counted only when it can change neither those nor the rows shown."""
    gpus, offers, rules = catalog
    gpus = _copies(gpus, copies)
    req = s.RecommendationRequest.model_validate(
        {**body, "objective": "balanced", "speed_weight": speed_weight}
    )
    assert service._lazy(req)
    seen: list[Any] = []
    bounded = service._bounded_balanced

    def counting(*args: Any) -> Any:
        out = bounded(*args)
        seen.append(out[2])
        return out

    monkeypatch.setattr(service, "_bounded_balanced", counting)
    fast = service.recommend(req, gpus, rules, offers=offers).model_dump()
    monkeypatch.setattr(service, "_prunable", lambda _r, _c: False)
    reference = service.recommend(req, gpus, rules, offers=offers).model_dump()
    assert fast == reference
    assert seen and seen[0].ranked > 0, "no card was counted: the test shows nothing"


def test_cards_are_evaluated_only_where_they_can_reach_the_rows_shown(catalog: Any) -> None:
    gpus, offers, rules = catalog
    req = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "resnet-50"}, "objective": "fastest", "limit": 5}
    )
    work, _ = service.resolve_workload(req.workload)
    ctx = service._context(work, req, "fastest", rules, None, offers=offers)
    cands, excluded, census = service._bounded(sorted(gpus, key=lambda g: g.slug), ctx, 5)
    evaluated = {c.gpu.slug for c in cands}
    assert census.ranked > len(evaluated)  # most ranked cards were counted, not evaluated
    assert len(evaluated) + census.ranked + len(excluded) == len(gpus)


WORKLOADS = [
    {"preset": "resnet-50"},
    {"preset": "resnet-50", "batch_size": 2, "precision": "fp32"},
    {"preset": "gpt2-xl", "task": "training", "batch_size": 64},
    # a batch of 8: a full fine-tune shards over up to 8 GPUs, one sample each at least
    {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "none", "batch_size": 8},
    {"preset": "mistral-7b", "task": "fine-tuning"},
    {"preset": "sdxl", "task": "inference"},
    {"preset": "bert-large", "task": "inference", "batch_size": 1},
    {"preset": "llama-3-8b", "task": "inference", "batch_size": 4},
    {"preset": "llama-3-70b", "task": "inference"},
    {"preset": "mixtral-8x7b", "task": "inference", "batch_size": 2},
    # beyond one server: pipeline stages on top of tensor parallelism
    {"preset": "llama-3-70b", "task": "inference", "batch_size": 16, "max_gpus": 32},
    # an eager loop, whose decode steps are bound by host dispatch
    {"preset": "llama-3-8b", "task": "inference", "runtime": "pytorch", "max_gpus": 8},
]
# Extra GPUs as copies (workload.extra_gpus): their bounds, copy by copy
COPIES = [
    {"preset": "llama-3-70b", "task": "inference", "batch_size": 16, "extra_gpus": "copies"},
    {"preset": "llama-3-8b", "task": "inference", "batch_size": 6, "extra_gpus": "copies"},
    {
        "preset": "llama-3-8b",
        "task": "inference",
        "batch_size": 64,
        "runtime": "vllm",
        "extra_gpus": "copies",
    },
]


def _context_for(
    workload: dict[str, Any], catalog: Any, objective: str = "fastest"
) -> tuple[list[Any], Any, Any]:
    """The catalog, the resolved job and a request's context for a WORKLOADS row (its
    ``max_gpus`` and ``num_gpus`` are constraints)."""
    gpus, offers, rules = catalog
    workload = dict(workload)
    cons: dict[str, Any] = {"max_gpus": workload.pop("max_gpus", 8)}
    for key in ("num_gpus", "vendors"):
        if key in workload:
            cons[key] = workload.pop(key)
    req = s.RecommendationRequest.model_validate(
        {"workload": workload, "objective": objective, "constraints": cons}
    )
    work, _ = service.resolve_workload(req.workload)
    return gpus, work, service._context(work, req, objective, rules, None, offers=offers)


def _plans(gpus: list[Any], ctx: Any) -> Iterator[tuple[Any, list[Any]]]:
    """Each card of the catalog that plans, with its planned configurations."""
    for gpu in gpus:
        planned = ev.plan(gpu, ctx)
        if not isinstance(planned, ev.Exclusion):
            yield gpu, planned


@pytest.mark.parametrize("workload", [*WORKLOADS, *COPIES], ids=lambda w: w["preset"])
def test_a_card_bound_is_above_every_count_of_the_card(
    workload: dict[str, Any], catalog: Any
) -> None:
    """Not only above the widest count: an LLM on two cards can be slower than on one."""
    gpus, _, ctx = _context_for(workload, catalog)
    checked = 0
    for gpu, planned in _plans(gpus, ctx):
        ok = [r.perf.throughput for r in (ev.evaluate(c, ctx) for c in planned) if r.perf and r.ok]
        if ok:
            best = max(ok)
            assert best <= ev.card_bound(planned, ctx) * (1 + 1e-12), gpu.slug
            assert best <= ev.card_bound(planned, ctx, loose=True) * (1 + 1e-12), gpu.slug
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("workload", [*WORKLOADS, *COPIES], ids=lambda w: w["preset"])
def test_the_throughput_bound_is_never_exceeded(workload: dict[str, Any], catalog: Any) -> None:
    gpus, work, ctx = _context_for(workload, catalog)
    checked = many = 0
    for gpu, planned in _plans(gpus, ctx):
        for cfg in planned:
            r = ev.evaluate(cfg, ctx)
            if r.ok:
                assert r.perf is not None
                bound = ev.throughput_bound(cfg, ctx)
                assert r.perf.throughput <= bound * (1 + 1e-12), (gpu.slug, cfg.num_gpus)
                loose = ev.throughput_bound(cfg, ctx, loose=True)
                assert bound <= loose * (1 + 1e-12), (gpu.slug, cfg.num_gpus)
                checked += 1
                many += cfg.num_gpus > 1
                # single-GPU steps have no communication: the bound is the throughput
                if cfg.num_gpus == 1 and not work.is_llm_inference:
                    assert r.perf.throughput == pytest.approx(bound, rel=1e-12)
    assert checked > 50
    assert many > 10, "no multi-GPU configuration was checked"


ADMISSIONS = [
    *WORKLOADS,
    {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "qlora"},  # a gated feature
    # savers: 8-bit AdamW; checkpointing as asked (a fine-tuning preset's recipe does not
    # carry it into pretraining, and without it no card holds the batch as asked)
    {"preset": "gpt2-xl", "task": "training", "batch_size": 256, "gradient_checkpointing": True},
    {"preset": "resnet-50", "num_gpus": 1},
    {"preset": "llama-3-8b", "task": "inference", "vendors": ["nvidia"]},  # a filter
]


@pytest.mark.parametrize("workload", ADMISSIONS, ids=lambda w: w["preset"])
@pytest.mark.parametrize("objective", ["fastest", "best_value"])
def test_a_configuration_admitted_as_planned_is_admitted(
    workload: dict[str, Any], objective: str, catalog: Any
) -> None:
    """The census counts a card, and the price cut cuts it, from its plan alone (and its
    price) only where admit would say the same."""
    gpus, work, ctx = _context_for(workload, catalog, objective)
    said = cut = 0
    for gpu, planned in _plans(gpus, ctx):
        for cfg in planned:
            if not ev.only_price_left(cfg, ctx):
                assert not ev.admitted_as_planned(cfg, ctx)
                continue
            said += 1
            got = ev.admit(cfg, ctx)
            if objective == "fastest":
                assert ev.admitted_as_planned(cfg, ctx)
                assert isinstance(got, ev.Admitted), (gpu.slug, cfg.num_gpus)
                continue
            assert not ev.admitted_as_planned(cfg, ctx)
            verdict = ev.price_verdict(cfg, ctx)
            if verdict is None:
                assert isinstance(got, ev.Admitted), (gpu.slug, cfg.num_gpus)
            else:
                assert isinstance(got, ev.ConfigResult) and got.exclusion == verdict
                cut += 1
    if work.peft == "qlora":
        assert said == 0  # a feature to gate
    else:
        assert said > 0
    if objective == "best_value" and work.peft != "qlora":
        assert cut > 0  # cards without a price


@pytest.mark.parametrize("workload", ADMISSIONS, ids=lambda w: w["preset"])
@pytest.mark.parametrize("objective", ["balanced", "best_value"])
def test_the_first_configuration_found_without_planning_is_plans_first_admitted(
    workload: dict[str, Any], objective: str, catalog: Any
) -> None:
    """A balanced answer takes the shown configuration of most cards from the catalog's
    columns (fleet.first_counts) without planning them: it must be plan's first configuration
    by (count, savers) that admit passes, with the same software gate and job variant."""
    gpus, work, ctx = _context_for(workload, catalog, objective)
    snap = fleet.snapshot(_fleet(gpus, ctx), ctx)
    count = fleet.first_counts(snap, ctx)
    firsts = [None] * len(gpus) if count is None else _configurations(snap, ctx, count)
    found = many = 0
    for gpu, got in zip(gpus, firsts, strict=True):
        if got is None:
            continue
        found += 1
        many += got.num_gpus > 1
        planned = ev.plan(gpu, ctx)
        assert not isinstance(planned, ev.Exclusion), gpu.slug
        first = next(
            planned[i]
            for i in service._order(planned)
            if isinstance(ev.admit(planned[i], ctx), ev.Admitted)
        )
        assert (got.gpu, got.num_gpus, got.savers, got.micro_batch) == (
            first.gpu, first.num_gpus, first.savers, first.micro_batch
        ), gpu.slug  # fmt: skip
        assert got.variant == first.variant and got.offer is None and first.offer is None
    if objective == "best_value" or work.peft == "qlora" or ctx.limits.exact_gpus is not None:
        assert found == 0  # a price to check, a gated feature, an exact count: plan in full
    else:
        assert found > 0
    if workload["preset"] == "llama-3-70b" and found:
        assert many > 0  # inference on the fewest cards that hold it, admitted on the way
    if "vendors" in workload and found:
        assert found < len(gpus) - 10  # the filter left cards out


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w["preset"])
def test_the_columns_bound_each_card_as_loose_bounds(
    workload: dict[str, Any], catalog: Any
) -> None:
    """fleet.loose_bounds (every card's shown configuration stepped from the snapshot's card
    rows) is ev.loose_bounds of the same configurations, to the last bit, for LLM inference
    of a model without routed experts; None for the other jobs (where a card was found)."""
    gpus, work, ctx = _context_for(workload, catalog, "balanced")
    snap = fleet.snapshot(_fleet(gpus, ctx), ctx)
    count = fleet.first_counts(snap, ctx)
    assert count is not None
    configs = _configurations(snap, ctx, count)
    got = fleet.loose_bounds(snap, ctx, count)
    dense = work.is_llm_inference and not perf.llm_job(work).experts
    assert (got is not None) == dense or not count.any()  # no card found: nothing to step
    if got is not None and count.any():
        rows = [i for i, c in enumerate(configs) if c is not None]
        want = ev.loose_bounds([c for c in configs if c is not None], ctx)
        assert got[rows].tolist() == want
        again = fleet.loose_bounds(snap, ctx, count)  # from the snapshot's rows, kept
        assert again is not None and again.tolist() == got.tolist()
        assert len(rows) > 10


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w["preset"])
def test_an_estimate_from_the_bounds_steps_is_the_one_evaluate_makes(
    workload: dict[str, Any], catalog: Any
) -> None:
    """fleet.one_gpu_estimate (a one-GPU configuration's estimate from the steps its loose
    bound took) is the estimate evaluating it makes, to the last bit, for every card it
    makes one of; None for the others (more GPUs, or a job the columns do not step)."""
    gpus, _, ctx = _context_for(workload, catalog, "balanced")
    _, _, alone = _context_for(workload, catalog, "balanced")
    snap = fleet.snapshot(_fleet(gpus, ctx), ctx)
    count = fleet.first_counts(snap, ctx)
    assert count is not None
    done = fleet.stepped(snap, ctx, count)
    if done is None:
        return
    configs = _configurations(snap, ctx, count)
    made = 0
    for i, config in enumerate(configs):
        got = fleet.one_gpu_estimate(snap, ctx, count, done, i)
        if got is None:
            assert config is None or config.num_gpus > 1 or not done.bounds[i] < math.inf
            continue
        assert config is not None
        want = ev.evaluate(config, alone).perf
        assert got == want, config.gpu.slug
        made += 1
    assert made or not (count == 1).any()


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w["preset"])
def test_a_plan_from_the_columns_is_plans_own(workload: dict[str, Any], catalog: Any) -> None:
    """fleet.plan (a card's configurations from its count in fleet.first_counts) is ev.plan of
    the card, configuration by configuration with the same gate and job variant, for every
    card it plans; None for the others (not found, or a job that trains)."""
    gpus, work, ctx = _context_for(workload, catalog, "balanced")
    count, plans = plans_from_columns(gpus, ctx)
    for i, got in enumerate(plans):
        assert got is not None or count[i] == 0 or work.training
    assert any(plans) or work.training or not count.any()


def plans_from_columns(gpus: list[Any], ctx: Any) -> tuple[Any, list[list[Any] | None]]:
    """Each card's fleet.plan from its count in fleet.first_counts, checked to be ev.plan of the
    card, configuration by configuration with the same job variant (None where it plans none)."""
    snap = fleet.snapshot(_fleet(gpus, ctx), ctx)
    count = fleet.first_counts(snap, ctx)
    assert count is not None
    plans: list[list[Any] | None] = []
    for i, gpu in enumerate(snap.gpus):
        got = fleet.plan(snap, ctx, count, i)
        plans.append(got)
        if got is None:
            continue
        want = ev.plan(gpu, ctx)
        assert not isinstance(want, ev.Exclusion)
        assert got == want, gpu.slug
        assert [c.variant for c in got] == [c.variant for c in want]
    return count, plans


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w["preset"])
def test_a_one_device_card_that_cannot_hold_the_job_is_out_as_plan_says(
    workload: dict[str, Any], catalog: Any
) -> None:
    """fleet.one_device_misfit is ev.plan's exclusion of the card, reason and all, for every
    card it excludes; it excludes none that plans (laptops and Macs that hold the job)."""
    gpus, work, ctx = _context_for(workload, catalog, "balanced")
    snap = fleet.snapshot(_fleet(gpus, ctx), ctx)
    out = 0
    for i, gpu in enumerate(snap.gpus):
        got = fleet.one_device_misfit(snap, ctx, i)
        if got is not None:
            assert got == ev.plan(gpu, ctx), gpu.slug
            out += 1
    assert out or work.training or work.model.params < 3e9


def _fleet(gpus: list[Any], ctx: Any) -> fleet.Catalog:
    return fleet.Catalog(tuple(gpus), ctx.rules, ctx.calibration)


def test_a_catalogs_terms_are_kept_per_software_setting(catalog: Any) -> None:
    """The per-card terms are made once per catalog (fleet.Catalog) and software setting,
    found by the setting's value: another request with the same software gets the same
    snapshot; another precision, or another catalog (an edited spec), its own."""
    import dataclasses

    gpus, _, ctx = _context_for({"preset": "llama-3-8b", "task": "inference"}, catalog)
    kept = _fleet(gpus, ctx)
    snap = fleet.snapshot(kept, ctx)
    _, _, again = _context_for(
        {"preset": "llama-3-8b", "task": "inference", "batch_size": 7}, catalog
    )
    assert again is not ctx and again.work is not ctx.work
    assert fleet.snapshot(kept, again) is snap
    _, _, fp32 = _context_for(
        {"preset": "llama-3-8b", "task": "inference", "precision": "fp32"}, catalog
    )
    assert fleet.snapshot(kept, fp32) is not snap
    assert fleet.snapshot(kept, ctx) is snap  # both kept
    # (the memory CUDA reports, where the catalog has it, is what usable memory starts from)
    bigger = dataclasses.replace(gpus[0], memory_gb=gpus[0].memory_gb * 2, visible_memory_mib=None)
    edited = [bigger, *gpus[1:]]
    assert kept.serves(list(gpus), ctx.rules, None)
    assert not kept.serves(edited, ctx.rules, None)
    other = fleet.snapshot(_fleet(edited, ctx), ctx)
    assert other is not snap and other.avail[0] > snap.avail[0]


def test_the_service_uses_a_kept_catalog_only_for_its_own_cards(catalog: Any) -> None:
    """service.recommend works from the fleet.Catalog it is given where it was made for the
    request's cards, rules and calibration (the same answer as without one), and from its own
    where it was made for others (an edited catalog)."""
    import dataclasses

    gpus, offers, rules = catalog
    req = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "llama-3-8b", "task": "inference"}}
    )
    plain = service.recommend(req, gpus, rules, offers=offers).model_dump()
    kept = fleet.Catalog(tuple(sorted(gpus, key=lambda g: g.slug)), rules, None)
    assert service.recommend(req, gpus, rules, offers=offers, catalog=kept).model_dump() == plain
    assert len(kept.snapshots) == 1  # made and kept there
    edited = [dataclasses.replace(g, memory_gb=g.memory_gb * 4) for g in kept.gpus]
    stale = fleet.Catalog(tuple(edited), rules, None)
    again = service.recommend(req, gpus, rules, offers=offers, catalog=stale).model_dump()
    assert again == plain and not stale.snapshots


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w["preset"])
def test_every_loose_bound_taken_at_once_is_the_one_taken_alone(
    workload: dict[str, Any], catalog: Any
) -> None:
    """ev.loose_bounds (LLM inference stepped as arrays over every configuration of the
    catalog, the rest one by one) is throughput_bound(loose=True), to the last bit."""
    gpus, _, ctx = _context_for(workload, catalog)
    configs = [c for _, planned in _plans(gpus, ctx) for c in planned]
    assert ev.loose_bounds(configs, ctx) == [
        ev.throughput_bound(c, ctx, loose=True) for c in configs
    ]
    assert configs


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("body", FASTEST[8:9] + FASTEST[:1], ids=lambda b: b["workload"]["preset"])
def test_balanced_answers_as_the_full_evaluation_whichever_cards_have_no_price(
    body: dict[str, Any], seed: int, catalog: Any
) -> None:
    """A card without a price scores its speed alone and every score is divided by the top
    one: counting such a card unevaluated would change every score when it is the fastest.
    The shipped offers with a third of the cards' prices dropped at random."""
    import random

    gpus, offers, rules = catalog
    rng = random.Random(seed)
    dropped = {g.slug for g in gpus if rng.random() < 1 / 3}
    some = {k: v for k, v in offers.items() if k not in dropped}
    req = s.RecommendationRequest.model_validate({**body, "objective": "balanced"})
    assert service._lazy(req)
    fast = service.recommend(req, gpus, rules, offers=some).model_dump()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(service, "_prunable", lambda _r, _c: False)
        reference = service.recommend(req, gpus, rules, offers=some).model_dump()
    assert fast == reference


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w["preset"])
def test_configurations_finished_together_are_those_finished_one_by_one(
    workload: dict[str, Any], catalog: Any
) -> None:
    """ev.finish_all (LLM inference estimates stepped together as arrays first) is ev.finish
    of each admitted configuration, to the last bit: every configuration of the catalog, and
    a handful below the batch size (finished one by one), each on a fresh context."""
    gpus, _, ctx = _context_for(workload, catalog)
    _, _, alone = _context_for(workload, catalog)
    configs = [c for _, planned in _plans(gpus, ctx) for c in planned]
    admitted = [a for a in (ev.admit(c, ctx) for c in configs) if isinstance(a, ev.Admitted)]
    together = ev.finish_all(admitted, ctx)
    assert together == [ev.evaluate(a.config, alone) for a in admitted]
    few = admitted[:3]
    _, _, fresh = _context_for(workload, catalog)
    assert ev.finish_all(few, fresh) == together[:3]
    assert len(admitted) >= ev.BATCH_ESTIMATES
    assert any(r.ok for r in together)


def test_a_kept_snapshots_usable_memory_is_the_requests_models(catalog: Any) -> None:
    """Usable memory under a serving runtime keeps back the activations it sizes its KV pool
    with at startup, which grow with the model's vocabulary and widths (vLLM's sampler over
    its default batch): a snapshot kept from one model must not lend its usable memory to
    another model under the same runtime (found by the speed pass, 2026-12-03)."""
    base = {"task": "inference", "runtime": "vllm"}
    gpus, _, first = _context_for({"preset": "mistral-7b", **base}, catalog)
    kept = _fleet(gpus, first)
    fleet.snapshot(kept, first)
    _, _, other = _context_for({"preset": "llama-3-8b", **base}, catalog)
    assert other.work.model.vocab_size != first.work.model.vocab_size
    reused = fleet.snapshot(kept, other)
    fresh = fleet.snapshot(_fleet(gpus, other), other)
    assert np.array_equal(reused.avail, fresh.avail)


@pytest.mark.parametrize("seed", range(3))
def test_prices_taken_in_one_pass_are_each_configurations_price_terms(
    seed: int, catalog: Any
) -> None:
    """ev.price_columns (a balanced answer's prices of the catalog's cards at once) is
    ev.price_terms of each configuration, to the last bit: every planned configuration of the
    catalog under the shipped offers with some cards' offers dropped, on a fresh context (its
    table of prices filled by the pass itself), and under the catalog's own prices."""
    import random

    gpus, offers, rules = catalog
    rng = random.Random(seed)
    some = {k: v for k, v in offers.items() if rng.random() < 2 / 3}
    for priced in (some, None):
        req = s.RecommendationRequest.model_validate({"workload": {"preset": "llama-3-8b"}})
        work, _ = service.resolve_workload(req.workload)
        ctx = service._context(work, req, "balanced", rules, None, offers=priced)
        configs = [c for _, planned in _plans(gpus, ctx) for c in planned]
        want = [ev.price_terms(c, ctx) for c in configs]
        gpus_of, counts = [c.gpu for c in configs], [c.num_gpus for c in configs]
        # each configuration given, and (as the catalog's columns give them) only its card and
        # count where it has no offer of its own and is one replica
        column = [c if c.offer is not None or c.copies > 1 else None for c in configs]
        assert None in column
        for given in (configs, column):
            fresh = service._context(work, req, "balanced", rules, None, offers=priced)
            known, flat = ev.price_columns(given, gpus_of, counts, fresh)
            assert known == [t is not None for t in want]
            rows = [flat[4 * i : 4 * i + 4] for i in range(len(configs))]
            for got, t in zip(rows, want, strict=True):
                if t is None:
                    assert all(math.isnan(x) for x in got)
                else:
                    purchase, hourly, _, energy, horizon = t
                    expect = [purchase, hourly, energy, horizon]
                    assert [None if math.isnan(x) else x for x in got] == expect
            assert any(known) and (priced is None or not all(known))

"""The open question's finishing work made cheaper without changing a bit (issue 21, speed):
a stepped row's estimate built positionally from its set's figures (perf._figures_estimate)
is the keyword-built one (perf._stepped_estimate) and, through perf.llm_estimates, the scalar
perf.estimate of each row; an LLM inference configuration finishes without working out how
the job would shard (ev._split: its estimate reads none of it) to the same result as with it;
and the positional CostEstimate and ConfigResult hold each figure in its own field."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import llm_step, llm_totals, perf
from app.domain.compat import _default_backends
from app.domain.gpu import GpuSpec, Price
from app.domain.workload import WorkloadSpec
from app.recommend import schemas as s
from app.recommend import service
from tests.domain.test_llm_bound_arrays import _job

COUNTS = (1, 2, 4, 8)


@pytest.fixture(scope="module")
def shipped(shipped_catalog: Any) -> tuple[list[GpuSpec], Mapping[str, Any], Any]:
    gpus, offers, rules = shipped_catalog
    return list(gpus), offers, rules


def _bits(x: object) -> str:
    """A dataclass's fields as text: a float's repr is exact (the shortest that reads back),
    NaN reads as NaN, and -0.0 differs from 0.0."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return repr(dataclasses.astuple(x))
    return repr(x)


JOBS = {
    "llama-3-8b vllm": lambda: _job("llama-3-8b", runtime="vllm", batch_size=4),
    "llama-3-8b transformers": lambda: _job("llama-3-8b", runtime="transformers", batch_size=17),
    "llama-3-70b llama.cpp q4_k_m": lambda: _job(
        "llama-3-70b", runtime="llama.cpp", precision="int4", weight_bits=4.84, seq_len=512
    ),
}


def _cards(
    catalog: list[GpuSpec], work: WorkloadSpec
) -> list[tuple[GpuSpec, WorkloadSpec, int, str]]:
    """Every catalog GPU that steps (a peak for both phases) at 1, 2, 4 and 8 GPUs."""
    out = []
    for gpu in catalog:
        backend = (_default_backends(gpu)[:1] or ("cpu",))[0]
        card = perf.llm_card(gpu, work, perf.efficiencies(gpu, None), backend)
        if card.flops > 0 and card.attn_flops > 0:
            out += [(gpu, work, n, backend) for n in COUNTS]
    return out


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_a_rows_positional_estimate_is_the_keyword_one_field_for_field(
    shipped: Any, job: str
) -> None:
    """Every row of a set stepped with its links: ``_figures_estimate`` (the card's words
    worked out once) is ``_stepped_estimate``, bit for bit."""
    gpus, _, _ = shipped
    work = JOBS[job]()
    rows = _cards(gpus, work)
    terms: list[llm_step.CardTerms] = []
    effs: list[perf.Efficiency] = []
    backends: list[str] = []
    for gpu, _, _, backend in rows[:: len(COUNTS)]:
        eff = perf.efficiencies(gpu, None)
        terms.append(perf.llm_card(gpu, work, eff, backend))
        effs.append(eff)
        backends.append(backend)
    card = [i // len(COUNTS) for i in range(len(rows))]
    counts = [n for _, _, n, _ in rows]
    cols = llm_step.dense_columns(
        perf.llm_job(work),
        llm_step.card_rows(terms),
        np.array(card, np.intp),
        np.array(counts, np.float64),
        gpus=[g for g, _, _, _ in rows],
    )
    b, seq, out = work.batch_size, work.seq_len, max(1, work.output_tokens)
    pre = cols.parts(0.0, 0.0, float(b * seq), float(seq))
    dec = cols.parts(float(b), seq + out / 2.0, 0.0, float(seq))
    steps = perf.decode_steps(work)
    alone = (pre.seconds + steps * dec.seconds).tolist()
    single = [alone[j - COUNTS.index(n)] for j, n in enumerate(counts)]
    figures = llm_totals.totals(
        b * out, steps, np.array(counts, np.float64), pre, dec, np.array(single)
    )
    for j, (c, n) in enumerate(zip(card, counts, strict=True)):
        t, e, be = terms[c], effs[c], backends[c]
        got = perf._figures_estimate(figures, j, work.runtime, be, n, perf._card_words(t, e))
        want = perf._stepped_estimate(figures, j, work, n, t, e, be)
        assert _bits(got) == _bits(want), (rows[j][0].slug, n)
    assert len(rows) > 100


@pytest.mark.parametrize("job", JOBS, ids=str)
def test_the_arrays_estimates_are_the_scalar_ones_row_by_row(shipped: Any, job: str) -> None:
    """perf.llm_estimates (the set stepped as arrays, each row's estimate positional) is
    perf.estimate of each row alone, bit for bit: each path on a job of its own, so neither
    reads what the other kept."""
    gpus, _, _ = shipped
    together = _cards(gpus, JOBS[job]())
    got = perf.llm_estimates(together)
    alone = JOBS[job]()
    for (gpu, _, n, backend), est in zip(together, got, strict=True):
        want = perf.estimate(gpu, alone, num_gpus=n, backend=backend)
        assert _bits(est) == _bits(want), (gpu.slug, n)


REQUESTS = [
    {"preset": "llama-3-8b", "task": "inference", "batch_size": 17},
    {"preset": "llama-3-8b", "task": "inference", "batch_size": 4, "runtime": "vllm"},
    # a model most cards hold only over several GPUs: configurations the split calls sharded
    {"preset": "llama-3-70b", "task": "inference", "batch_size": 8},
]


def _context(workload: dict[str, Any], shipped: Any) -> Any:
    _, offers, rules = shipped
    req = s.RecommendationRequest.model_validate(
        {"workload": workload, "objective": "balanced", "constraints": {"max_gpus": 8}}
    )
    work, _ = service.resolve_workload(req.workload)
    return service._context(work, req, "balanced", rules, None, offers=offers)


def _with_split(a: ev.Admitted, ctx: ev.Context, words: bool) -> ev.ConfigResult:
    """``finish`` as it was: the split worked out, then passed on (an inference job has no
    training layout)."""
    n = max(1, a.config.num_gpus)
    sharded, steps, need = ev._split(ctx, a.key, a.run, a.gate, n, a.available_gb)
    return ev._finish_priced(a, ctx, a.run, a.memory, None, sharded, steps, need, words)


@pytest.mark.parametrize("workload", REQUESTS, ids=lambda w: f"{w['preset']}-{w['batch_size']}")
@pytest.mark.parametrize("words", [True, False])
def test_an_llm_configuration_finishes_as_it_did_with_the_split(
    shipped: Any, workload: dict[str, Any], words: bool
) -> None:
    """Every planned configuration of the catalog for an LLM inference job: ``finish`` (no
    split) and the split's path give equal results, figures and words alike, including the
    configurations the split calls sharded; each path on a context of its own."""
    gpus = shipped[0]
    ctx, ref = _context(workload, shipped), _context(workload, shipped)
    finished = sharded = 0
    for gpu in gpus:
        planned = ev.plan(gpu, ctx)
        if isinstance(planned, ev.Exclusion):
            continue
        for config in planned:
            a, b = ev.admit(config, ctx), ev.admit(config, ref)
            if not isinstance(a, ev.Admitted):
                assert not isinstance(b, ev.Admitted)
                continue
            assert isinstance(b, ev.Admitted) and a.run.is_llm_inference
            n = max(1, config.num_gpus)
            sharded += ev._split(ref, b.key, b.run, b.gate, n, b.available_gb)[0]
            got, want = ev.finish(a, ctx, words), _with_split(b, ref, words)
            assert got == want, (gpu.slug, n)
            assert _bits(got.perf) == _bits(want.perf) and _bits(got.cost) == _bits(want.cost)
            finished += 1
    assert finished > 100
    if workload["preset"] == "llama-3-70b":
        assert sharded > 10


def test_a_cost_estimate_holds_each_figure_in_its_field() -> None:
    """estimate_cost builds its result positionally: each figure lands in the field named
    for it (a known card, count, speed and job length, catalog prices)."""
    gpu = GpuSpec(
        slug="t",
        name="T",
        vendor="nvidia",
        architecture="ampere",
        segment="datacenter",
        memory_gb=80.0,
        memory_bandwidth_gbs=2000.0,
        tdp_w=400.0,
        street_price=Price(usd=10_000.0, as_of="2026-01-01", source="x"),
        cloud_price=Price(usd=2.0, as_of="2026-02-01", source="y", provider="p"),
    )
    usage = costs.Usage()
    c = costs.estimate_cost(gpu, 2, 100.0, 5.0, 0.2, None, usage)
    energy_h = 800.0 / 1000.0 * 0.2
    assert c.purchase_usd == 20_000.0
    assert c.hourly_usd == 4.0
    assert c.power_w == 800.0
    assert c.energy_usd_per_hour == energy_h
    assert c.time_to_finish_h == 5.0
    assert c.rent_to_finish_usd == costs.rent_job_usd(4.0, 5.0)
    assert c.rent_startup_usd == 4.0 * costs.RENT_STARTUP_H
    assert c.energy_to_finish_usd == energy_h * 5.0
    assert c.buy_to_finish_usd == 20_000.0 + energy_h * 5.0
    assert c.break_even_hours == 20_000.0 / (4.0 - energy_h)
    assert c.horizon_hours == usage.hours
    assert c.samples_per_usd_rent == 100.0 * 3600.0 * 5.0 / c.rent_to_finish_usd
    assert c.samples_per_usd_buy == 100.0 * 3600.0 * usage.hours / (
        20_000.0 + energy_h * usage.hours
    )
    assert (c.purchase_as_of, c.hourly_as_of, c.hourly_provider) == (
        "2026-01-01",
        "2026-02-01",
        "p",
    )
    assert c.purchase_basis is None
    assert math.isfinite(c.break_even_hours)


def test_a_finished_result_holds_each_part_in_its_field(shipped: Any) -> None:
    """_finish_priced builds its result positionally: the job, backend, memory, estimate,
    costs, acquisition, micro-steps and offers are each the admission's or the estimate's."""
    gpus = shipped[0]
    ctx = _context(REQUESTS[0], shipped)
    checked = 0
    for gpu in gpus:
        planned = ev.plan(gpu, ctx)
        if isinstance(planned, ev.Exclusion):
            continue
        for config in planned:
            a = ev.admit(config, ctx)
            if not isinstance(a, ev.Admitted):
                continue
            r = ev.finish(a, ctx)
            if not r.ok:
                continue
            assert r.config is config and r.work is a.run and r.backend == a.gate.backend
            assert r.memory is a.memory and r.available_gb == a.available_gb
            assert r.perf is not None and r.perf.num_gpus == max(1, config.num_gpus)
            assert r.cost is not None and r.cost.time_to_finish_h is None
            assert r.acquisition == ctx.limits.acquisition
            assert r.accumulation_steps == 1 and r.pricing is a.pricing
            assert r.framework_status == ("experimental" if a.caveats else a.gate.status)
            assert r.derived_peak == a.gate.derived_peak and r.meets_latency is None
            checked += 1
    assert checked > 100


OBJECTIVES = ("balanced", "fastest", "best_value", "cheapest")
ACQUISITIONS = ("either", "buy", "rent")


def _costs_seen(gpu: GpuSpec) -> list[costs.CostEstimate]:
    """Costs a finished row can carry: priced both ways, one way or neither; a job of known
    length or not."""
    out = []
    for n in (1, 2, 8):
        for hours in (None, 0.5, 300.0):
            for buy, rent in ((True, True), (True, False), (False, True), (False, False)):
                card = dataclasses.replace(
                    gpu,
                    street_price=gpu.street_price if buy else None,
                    launch_price_usd=gpu.launch_price_usd if buy else None,
                    cloud_price=gpu.cloud_price if rent else None,
                )
                out.append(costs.estimate_cost(card, n, 50.0, hours, None, None, costs.Usage()))
    return out


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("acquisition", ACQUISITIONS)
def test_limits_without_a_budget_or_deadline_pass_every_cost_as_asked(
    objective: str, acquisition: str
) -> None:
    """Where ``Limits.judges_costs`` is false (``_finish_priced`` then skips the three calls),
    ``budget`` passes every finished row's costs the way asked with no exclusion, ``deadline``
    excludes none and ``left_out`` takes no way out; a budget or a deadline makes it true."""
    gpu = GpuSpec(
        slug="t",
        name="T",
        vendor="nvidia",
        architecture="ampere",
        segment="datacenter",
        memory_gb=24.0,
        memory_bandwidth_gbs=900.0,
        tdp_w=300.0,
        launch_price_usd=1500.0,
        street_price=Price(usd=1200.0, as_of="2026-01-01"),
        cloud_price=Price(usd=0.8, as_of="2026-01-01", provider="p"),
    )
    limits = ev.Limits(objective=objective, acquisition=acquisition)
    want_judged = limits.needs_price
    assert limits.judges_costs == want_judged
    if not limits.judges_costs:
        for c in _costs_seen(gpu):
            for n in (1, 2, 8):
                assert ev.budget(c, limits, "r", "b", gpus=n) == (acquisition, None)
                assert ev.deadline(c.time_to_finish_h, limits) is None
                assert ev.left_out(c, limits, acquisition, n) is None
    for judged in (
        ev.Limits(objective=objective, acquisition=acquisition, max_hours=1.0),
        ev.Limits(objective=objective, acquisition=acquisition, max_purchase_usd=1000.0),
        ev.Limits(objective=objective, acquisition=acquisition, max_hourly_usd=1.0),
        ev.Limits(objective=objective, acquisition=acquisition, max_job_cost_usd=5.0),
        ev.Limits(objective=objective, acquisition=acquisition, priced_only=True),
    ):
        assert judged.judges_costs
        assert dataclasses.replace(judged, exact_gpus=1).judges_costs


@pytest.mark.parametrize("workload", REQUESTS[:1], ids=lambda w: w["preset"])
def test_a_deadline_or_budget_still_judges_each_finished_configuration(
    shipped: Any, workload: dict[str, Any]
) -> None:
    """With a deadline no configuration meets (the job made long), finishing excludes them as
    before the skip: ``finish`` gives the deadline's exclusion."""
    gpus, offers, rules = shipped
    req = s.RecommendationRequest.model_validate(
        {
            "workload": {**workload, "dataset_samples": 10_000_000},
            "objective": "balanced",
            "constraints": {"max_gpus": 8, "max_hours": 0.01},
        }
    )
    work, _ = service.resolve_workload(req.workload)
    ctx = service._context(work, req, "balanced", rules, None, offers=offers)
    assert ctx.limits.judges_costs
    late = 0
    for gpu in gpus[:40]:
        planned = ev.plan(gpu, ctx)
        if isinstance(planned, ev.Exclusion):
            continue
        for config in planned:
            a = ev.admit(config, ctx)
            if isinstance(a, ev.Admitted):
                r = ev.finish(a, ctx)
                assert r.exclusion is not None
                assert r.exclusion.code in ("misses_deadline", "no_figures"), gpu.slug
                late += r.exclusion.code == "misses_deadline"
    assert late > 10


def test_no_startup_rule_reserves_nothing_as_the_rule_says(shipped: Any) -> None:
    """startup_reserve_gb returns 0 where the runtime has no startup rule without reading
    the model's widths: the same figure ``runtime_startup_activations_gb`` (None) gives, and
    every runtime's figure is unchanged, at 1 to 8 GPUs on each catalog GPU."""
    from app.domain import efficiency

    gpus = shipped[0]
    base = _job("llama-3-8b", batch_size=4)
    assert base.efficiency is not None
    runtimes = [*sorted(base.efficiency.serving), "pytorch"]
    ruled = 0
    for runtime in runtimes:
        work = dataclasses.replace(base, runtime=runtime)
        m = work.model
        h = float(m.hidden_size or 0)
        for gpu in gpus:
            for n in (1, 2, 8):
                want = (
                    efficiency.runtime_startup_activations_gb(
                        work.efficiency,
                        runtime,
                        gpu,
                        vocab=m.vocab_size,
                        hidden=h,
                        intermediate=float(m.intermediate_size or 4 * h),
                        tp=n,
                        rows=work.batch_size,
                    )
                    or 0.0
                )
                got = ev.startup_reserve_gb(gpu, work, n)
                assert repr(got) == repr(want), (runtime, gpu.slug, n)
                ruled += want > 0.0
    assert ruled > 100

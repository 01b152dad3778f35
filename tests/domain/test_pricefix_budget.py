"""Under acquisition 'either' a purchase over the budget is shown, never offered: the verdict
names renting, no break-even is said, and the purchase caveats go with the purchase."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import A100, RESNET50, RULES

NODE4 = costs.CloudOffer("lab", "4x-a100", 4, 8.0, None, "on-demand", "2026-11-01", "test")
CARD = costs.PurchaseOffer(10_000.0, "new", "2026-09", "shop")
OFFERS = {A100.slug: costs.GpuOffers((NODE4,), (CARD,))}
JOB = WorkloadSpec(task="training", model=RESNET50, batch_size=64, dataset_samples=1e6)
HEAVY = costs.Usage(hours_per_week=100, years=3)  # owning pays: the verdict alone says buy


def _run(**limits: object) -> ev.ConfigResult:
    ctx = ev.Context(
        work=JOB,
        rules=RULES,
        limits=ev.Limits(objective="fastest", acquisition="either", **limits),  # type: ignore[arg-type]
        offers=OFFERS,
        usage=HEAVY,
    )
    return ev.evaluate(ev.Configuration(A100, 4), ctx)


def test_a_purchase_over_the_budget_is_not_the_cheaper_way_and_says_why() -> None:
    res = _run(max_purchase_usd=5000.0)
    assert res.ok and res.acquisition == "rent"
    assert res.pricing is not None and res.cost is not None
    assert res.pricing.left_out == "buy"
    assert res.pricing.left_out_why == (
        "buying the 4 cards costs $40,000, over the $5,000 purchase budget"
    )
    v = res.pricing.verdict(res.cost.energy_usd_per_hour)
    assert v is not None and v.cheaper == "rent" and v.break_even_hours is None
    assert v.over_budget == res.pricing.left_out_why
    assert v.buy_total_usd < v.rent_total_usd  # the totals alone favour the purchase
    # no "buying beats renting after N hours" on a row that cannot buy
    assert res.cost.break_even_hours is None
    # the module caveat (it needs an HGX server, bought) goes with the purchase
    assert not any("module" in w for w in res.warnings)


def test_within_the_budget_the_purchase_stays_with_its_verdict_and_caveats() -> None:
    res = _run(max_purchase_usd=50_000.0)
    assert res.ok and res.acquisition == "either"
    assert res.pricing is not None and res.cost is not None and res.pricing.left_out is None
    v = res.pricing.verdict(res.cost.energy_usd_per_hour)
    assert v is not None and v.cheaper == "buy" and v.over_budget is None
    assert res.cost.break_even_hours == pytest.approx(v.break_even_hours)
    assert any("module" in w for w in res.warnings)


def test_a_rental_over_its_budget_leaves_buying_as_the_verdict() -> None:
    light = costs.Usage(hours_per_week=2, years=1)  # renting is cheaper on the totals
    ctx = ev.Context(
        work=JOB,
        rules=RULES,
        limits=ev.Limits(objective="fastest", acquisition="either", max_hourly_usd=4.0),
        offers=OFFERS,
        usage=light,
    )
    res = ev.evaluate(ev.Configuration(A100, 4), ctx)
    assert res.ok and res.acquisition == "buy" and res.pricing is not None
    assert res.pricing.left_out == "rent"
    assert res.pricing.left_out_why == "renting costs $8.00/h, over the $4.00/h budget"
    v = res.pricing.verdict(res.cost.energy_usd_per_hour if res.cost else None)
    assert v is not None and v.cheaper == "buy" and v.rent_total_usd < v.buy_total_usd


def test_a_job_budget_names_the_way_that_breaks_it() -> None:
    c = costs.CostEstimate(
        purchase_usd=40_000.0, hourly_usd=8.0, energy_usd_per_hour=1.0, power_w=1600.0,
        time_to_finish_h=10.0, rent_to_finish_usd=80.0, energy_to_finish_usd=10.0,
        buy_to_finish_usd=40_010.0, break_even_hours=1.0, samples_per_usd_rent=1.0,
        samples_per_usd_buy=1.0, horizon_hours=6240.0,
    )  # fmt: skip
    limits = ev.Limits(acquisition="either", max_job_cost_usd=1000.0)
    assert ev.left_out(c, limits, "rent", 4) == (
        "buy", "the job bought costs $40,010, over the $1,000 job budget",
    )  # fmt: skip
    # asked to rent (or to buy) only, nothing was taken out: the question did
    assert ev.left_out(c, dataclasses.replace(limits, acquisition="rent"), "rent", 4) is None
    assert ev.left_out(c, limits, "either", 4) is None

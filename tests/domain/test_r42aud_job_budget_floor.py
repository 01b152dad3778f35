"""A job budget asked to buy: the purchase alone is the floor of the job's cost.

A bought job costs the whole purchase plus its electricity (``costs.job_cost``). Where the
electricity is unknown (the catalog has no power figure: Apple's machines), the job cost was
None and passed any job budget: asked to buy ResNet-50's training for at most $10, a $3,499
M4 Max headed the answer (API and ``gpu-advisor recommend``)."""

from __future__ import annotations

from app.domain import cost as costs
from app.domain import evaluate as ev


def _unpowered(purchase: float, hourly: float | None = None) -> costs.CostEstimate:
    """A card with a purchase price and no power figure: no electricity, so no bought job
    cost, over a job of known length."""
    return costs.CostEstimate(
        purchase_usd=purchase, hourly_usd=hourly, energy_usd_per_hour=None, power_w=None,
        time_to_finish_h=100.0, rent_to_finish_usd=None if hourly is None else hourly * 100,
        energy_to_finish_usd=None, buy_to_finish_usd=None, break_even_hours=None,
        samples_per_usd_rent=None, samples_per_usd_buy=None, horizon_hours=6240.0,
    )  # fmt: skip


def test_a_purchase_over_the_job_budget_is_over_it_without_its_electricity() -> None:
    c = _unpowered(3499.0)
    assert costs.job_cost(c, "buy") is None  # the cost the old check read, and let pass
    acquired, out = ev.budget(c, ev.Limits(acquisition="buy", max_job_cost_usd=10.0))
    assert acquired is None and out is not None
    assert out.code == "over_budget"
    assert out.reason == "job cost (buy) at least $3,499, the purchase alone > $10"


def test_a_purchase_within_the_job_budget_still_passes() -> None:
    # the floor excludes nothing it cannot show is over: $900 under a $1,000 budget passes
    acquired, out = ev.budget(_unpowered(900.0), ev.Limits(acquisition="buy", max_job_cost_usd=1e3))
    assert acquired == "buy" and out is None


def test_either_keeps_the_rental_and_says_why_buying_went() -> None:
    c = _unpowered(3499.0, hourly=0.05)
    limits = ev.Limits(acquisition="either", max_job_cost_usd=10.0)
    acquired, out = ev.budget(c, limits)
    assert acquired == "rent" and out is None
    assert ev.left_out(c, limits, "rent") == (
        "buy", "the job bought costs at least $3,499, over the $10 job budget",
    )  # fmt: skip

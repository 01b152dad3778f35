"""Review 25 (a lab PI's buy-versus-rent read): what the verdict says of its rent side at
on-demand prices (#2) and of a resale fraction above what used GPUs fetch (#5); words in
cost."""

from __future__ import annotations

import pytest

from app.domain import cost

HEAVY = cost.Usage(hours_per_week=168, years=3)


def _offer(tier: str = "on-demand") -> cost.CloudOffer:
    return cost.CloudOffer("aws", "p5.48xlarge", 8, 98.32, 40.0, tier, "2026-11", "aws")


def _pricing(usage: cost.Usage, tier: str = "on-demand", spot: bool = False) -> cost.Pricing:
    offer = _offer(tier)
    rate = offer.spot_usd_per_hour if spot and offer.spot_usd_per_hour else offer.usd_per_hour
    rent = cost.OfferChoice(offer, 1, 8, rate, spot)
    buy = cost.PurchaseOffer(30_000.0, "new", "2026-09", "a shop")
    return cost.Pricing(rent, buy, 8, usage)


# ---------------------------------------------------------------- #2: on-demand rent, committed use


def test_heavy_long_use_says_the_rent_is_on_demand_and_a_commitment_costs_less() -> None:
    v = _pricing(HEAVY).verdict(0.5)
    assert v is not None
    said = " | ".join(v.caveats)
    assert "the rent is the on-demand price" in said
    assert "168 h a week for 3 years" in said
    assert "1- or 3-year commitment" in said and "up to 57% off GPUs" in said


def test_the_threshold_is_where_a_commitment_at_its_deepest_discount_pays() -> None:
    """A commitment bills every hour of its term: at 57 % off it pays past 43 % of 168 h."""
    assert pytest.approx(72.24) == cost.COMMITMENT_HOURS_PER_WEEK
    at = cost.Usage(hours_per_week=73, years=1)
    below = cost.Usage(hours_per_week=72, years=3)
    short = cost.Usage(hours_per_week=168, years=0.5)
    assert cost.verdict_caveats(at, on_demand=True)
    assert not cost.verdict_caveats(below, on_demand=True)  # the lab's 60 h is below too
    assert not cost.verdict_caveats(short, on_demand=True)  # no term is shorter than a year


@pytest.mark.parametrize(("tier", "spot"), [("on-demand", True), ("marketplace", False)])
def test_spot_and_marketplace_rents_say_nothing_of_commitments(tier: str, spot: bool) -> None:
    v = _pricing(HEAVY, tier, spot).verdict(0.5)
    assert v is not None and not any("commitment" in x for x in v.caveats)


def test_a_rent_left_out_over_budget_says_nothing_of_commitments() -> None:
    p = _pricing(HEAVY)
    left = cost.Pricing(p.rent, p.buy, 8, HEAVY, left_out="rent", left_out_why="over $1")
    v = left.verdict(0.5)
    assert v is not None and v.cheaper == "buy" and not v.caveats


def test_the_default_usage_says_nothing() -> None:
    v = _pricing(cost.Usage()).verdict(0.5)
    assert v is not None and v.caveats == ()


# ---------------------------------------------------------------- #5: resale fraction


def test_a_whole_resale_is_warned_of_and_the_break_even_words_say_energy_only() -> None:
    """resale_fraction 1 had read "Buying beats renting after about 0 hours"."""
    whole = cost.Usage(resale_fraction=1.0)
    v = _pricing(whole).verdict(0.5)
    assert v is not None and v.break_even_hours == 0.0
    said = " | ".join(v.caveats)
    assert "resale fraction of 100% is more than used GPUs fetch" in said
    assert "buying then costs only its energy" in said
    words = cost.break_even_said(v.break_even_hours)
    assert "about 0 hours" not in words and "costs only its energy" in words


def test_the_resale_threshold() -> None:
    assert cost.HIGH_RESALE_FRACTION == 0.8
    assert cost.resale_caveat(0.79) is None
    high = cost.resale_caveat(0.8)
    assert high is not None and "80%" in high and "only its energy" not in high
    assert cost.resale_caveat(0.0) is None


def test_break_even_words() -> None:
    assert cost.break_even_said(7_600.4) == "Buying beats renting after about 7,600 hours of use."
    assert "within the first hour" in cost.break_even_said(0.3)

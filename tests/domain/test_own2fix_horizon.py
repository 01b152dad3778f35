"""Review 5 #2: a bought row whose job outlasts the hours its purchase is spread over says
so (the cheapest answer had been 64 used MI210s taking 1,300 days on a one-year plan)."""

from __future__ import annotations

from app.domain import cost
from app.recommend.rows import ownership_warning
from tests.domain.fixtures import RTX4090

ONE_YEAR = cost.Usage(hours_per_week=168.0, years=1.0, resale_fraction=0.5)


def _cost(hours: float) -> cost.CostEstimate:
    return cost.estimate_cost(RTX4090, 1, 10.0, hours, usage=ONE_YEAR)


def test_a_job_longer_than_the_ownership_period_is_measured() -> None:
    assert ONE_YEAR.hours == 8736.0
    long = _cost(31_084.0)
    assert long.purchase_usd is not None  # the catalog prices the card
    times = cost.outlasts_horizon(long, "buy")
    assert times is not None and abs(times - 31_084.0 / 8736.0) < 1e-12
    assert cost.outlasts_horizon(long, "either") == times
    assert cost.outlasts_horizon(long, "rent") is None  # renting is paid by the hour
    assert cost.outlasts_horizon(_cost(8_000.0), "buy") is None
    assert cost.outlasts_horizon(_cost(8_736.0), "buy") is None


def test_the_row_warns_in_words_with_the_period() -> None:
    said = ownership_warning(_cost(31_084.0), "buy")
    assert said is not None
    assert "31,084 h of use" in said and "3.6× the 8,736 h" in said
    assert "verdict" in said and "resale" in said
    assert ownership_warning(_cost(100.0), "buy") is None
    assert ownership_warning(_cost(31_084.0), "rent") is None

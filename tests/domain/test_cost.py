"""Purchase, rent, energy, break-even; unknown prices stay None."""

from __future__ import annotations

import pytest

from app.domain import cost
from tests.domain.fixtures import A100, RTX4090, T4


def test_energy_and_rent_to_finish() -> None:
    c = cost.estimate_cost(
        RTX4090, 2, throughput=100.0, time_to_finish_h=10.0, electricity_usd_per_kwh=0.2
    )
    assert c.purchase_usd == 3600
    assert c.hourly_usd == 1.0
    assert c.power_w == 900
    assert c.energy_usd_per_hour == pytest.approx(0.9 * 0.2)
    assert c.rent_to_finish_usd == pytest.approx(10.0)
    assert c.energy_to_finish_usd == pytest.approx(1.8)
    assert c.buy_to_finish_usd == pytest.approx(3601.8)
    # buying beats renting once purchase = (hourly − energy) × hours
    assert c.break_even_hours == pytest.approx(3600 / (1.0 - 0.18))


def test_missing_prices_are_none_never_zero() -> None:
    c = cost.estimate_cost(T4, 1, throughput=10.0, time_to_finish_h=5.0)
    assert c.purchase_usd is None and c.hourly_usd is None
    assert c.rent_to_finish_usd is None and c.break_even_hours is None
    assert c.samples_per_usd_rent is None and c.samples_per_usd_buy is None
    assert cost.job_cost(c, "either") is None and cost.value(c, "either") is None


def test_no_break_even_when_energy_exceeds_rent() -> None:
    c = cost.estimate_cost(RTX4090, 1, 1.0, None, electricity_usd_per_kwh=5.0)
    assert c.break_even_hours is None


def test_acquisition_choice() -> None:
    c = cost.estimate_cost(RTX4090, 1, throughput=100.0, time_to_finish_h=100.0)
    assert cost.job_cost(c, "rent") == pytest.approx(50.0)
    assert cost.job_cost(c, "buy") == pytest.approx(1800 + 100 * 0.45 * 0.15)
    assert cost.job_cost(c, "either") == pytest.approx(50.0)
    assert cost.value(c, "rent") == pytest.approx(100 * 3600 / 0.5)
    rent_only = cost.estimate_cost(A100, 1, throughput=100.0, time_to_finish_h=1.0)
    assert cost.job_cost(rent_only, "buy") is None

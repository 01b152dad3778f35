"""Purchase, rent, energy, break-even; unknown prices stay None."""

from __future__ import annotations

import pytest

from app.domain import cost
from app.domain.gpu import Price
from tests.domain.fixtures import A100, RTX4090, T4


def test_energy_and_rent_to_finish() -> None:
    c = cost.estimate_cost(
        RTX4090, 2, throughput=100.0, time_to_finish_h=10.0, electricity_usd_per_kwh=0.2
    )
    assert c.purchase_usd == 3600
    assert c.hourly_usd == 1.0
    assert c.power_w == 900
    assert c.energy_usd_per_hour == pytest.approx(0.9 * 0.2)
    # ten hours and the instance's minute of start-up (cost.RENT_STARTUP_H), bought: none
    assert c.rent_to_finish_usd == pytest.approx(10.0 + 1.0 / 60)
    assert c.rent_startup_usd == pytest.approx(1.0 / 60)
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
    rent = 0.5 * (100.0 + cost.RENT_STARTUP_H)  # the instance's start-up billed too
    assert cost.job_cost(c, "rent") == pytest.approx(rent)
    assert cost.job_cost(c, "buy") == pytest.approx(1800 + 100 * 0.45 * 0.15)
    assert cost.job_cost(c, "either") == pytest.approx(rent)
    # the work per dollar is over the job, its start-up paid: 100 h of work for `rent`
    assert cost.value(c, "rent") == pytest.approx(100 * 3600 * 100.0 / rent)
    rent_only = cost.estimate_cost(A100, 1, throughput=100.0, time_to_finish_h=1.0)
    assert cost.job_cost(rent_only, "buy") is None


def test_a_bought_card_is_spread_over_the_users_usage_not_a_fixed_horizon() -> None:
    light = cost.Usage(hours_per_week=10, years=1)  # 520 h
    heavy = cost.Usage(hours_per_week=80, years=4)  # 16,640 h
    lc = cost.estimate_cost(RTX4090, 1, throughput=100.0, time_to_finish_h=None, usage=light)
    hc = cost.estimate_cost(RTX4090, 1, throughput=100.0, time_to_finish_h=None, usage=heavy)
    assert lc.horizon_hours == 520 and hc.horizon_hours == 16_640
    energy = 0.45 * cost.DEFAULT_ELECTRICITY_USD_PER_KWH  # $/h at 450 W
    assert lc.samples_per_usd_buy == pytest.approx(100 * 3600 * 520 / (1800 + energy * 520))
    # more hours of use: the same purchase does more work per dollar
    assert hc.samples_per_usd_buy is not None and lc.samples_per_usd_buy is not None
    assert hc.samples_per_usd_buy > 10 * lc.samples_per_usd_buy
    # renting for the same hours is what buying is weighed against when there is no job length
    assert cost.upfront(lc, "rent") == pytest.approx(0.5 * 520)
    assert cost.upfront(hc, "either") == pytest.approx(1800)  # renting 16,640 h costs more
    # the default is the request's default usage: 40 h a week for 3 years
    assert cost.estimate_cost(RTX4090, 1, 1.0, None).horizon_hours == cost.Usage().hours == 6240


def test_offers_pricing_carries_the_usage_horizon() -> None:
    usage = cost.Usage(hours_per_week=20, years=2)
    offers = cost.GpuOffers(purchase=(cost.PurchaseOffer(1600, "used", "2026-09", "poet"),))
    pricing = cost.price_configuration(offers, 1, cost.RentalPolicy(), usage)
    c = cost.estimate_cost(RTX4090, 1, 100.0, None, pricing=pricing)
    assert c.horizon_hours == 2080 and c.purchase_usd == 1600
    energy = 0.45 * cost.DEFAULT_ELECTRICITY_USD_PER_KWH
    assert c.samples_per_usd_buy == pytest.approx(100 * 3600 * 2080 / (1600 + energy * 2080))


@pytest.mark.parametrize("resale", [0.0, 0.4])
@pytest.mark.parametrize("acquisition", ["either", "rent", "buy"])
def test_values_as_columns_are_each_rows_value(acquisition: str, resale: float) -> None:
    """cost.values (a balanced answer's value bounds over the catalog at once) is
    value(estimate_cost(...)) row by row, to the last bit, with prices missing or zero."""
    import dataclasses
    import random

    import numpy as np

    rng = random.Random(1)
    usage = cost.Usage(resale_fraction=resale)
    terms, speeds, want = [], [], []
    for _ in range(400):
        gpu = dataclasses.replace(
            rng.choice([A100, RTX4090, T4]),
            launch_price_usd=rng.choice([None, 0, rng.uniform(100, 40000)]),
            street_price=None,
            cloud_price=rng.choice([None, Price(0.0, "2024-01-01", "x"), A100.cloud_price]),
            tdp_w=rng.choice([None, 300.0]),
        )
        n, t = rng.choice([1, 2, 8]), rng.uniform(0.1, 5000.0)
        kwh = rng.choice([None, 0.0, 0.3])
        est = cost.estimate_cost(gpu, n, t, None, kwh, usage=usage)
        terms.append(cost.rates(gpu, n, kwh, usage=usage))
        speeds.append(t)
        want.append(cost.value(est, acquisition))
    rows = [[np.nan if x is None else x for x in (p, h, e, z)] for p, h, _, e, z in terms]
    got = cost.values(
        np.array(speeds), np.array(rows, np.float64), acquisition, usage.resale_fraction
    ).tolist()
    assert [None if np.isnan(v) else v for v in got] == want
    assert any(w is None for w in want) and any(w is not None for w in want)


def test_the_break_even_nets_the_resale_the_verdict_nets() -> None:
    """With half the price resold, the row's "buying beats renting after N hours" read the
    whole price (15,200 h) beside its own verdict's 7,600 h."""
    usage = cost.Usage(hours_per_week=20, years=1, resale_fraction=0.5)
    est = cost.estimate_cost(RTX4090, 1, 100.0, None, 0.15, usage=usage)
    assert est.purchase_usd is not None and est.hourly_usd is not None
    v = cost.verdict(est.purchase_usd, est.energy_usd_per_hour, est.hourly_usd, usage)
    assert est.break_even_hours == pytest.approx(v.break_even_hours)
    whole = cost.estimate_cost(RTX4090, 1, 100.0, None, 0.15, usage=cost.Usage())
    assert whole.break_even_hours is not None
    assert est.break_even_hours == pytest.approx(whole.break_even_hours / 2)


def test_the_value_of_a_bought_card_nets_the_resale_the_verdict_nets() -> None:
    """A bought card's work per dollar spreads the price less its resale: on the whole price
    an RTX A5000 ranked renting ahead (365,854 tokens/$ bought, 704,781 rented) beside its own
    verdict's "buy"."""
    usage = cost.Usage(hours_per_week=20, years=1, resale_fraction=0.6)
    est = cost.estimate_cost(RTX4090, 1, 100.0, None, 0.15, usage=usage)
    energy = 0.45 * 0.15
    hours = usage.hours
    assert est.samples_per_usd_buy == pytest.approx(
        100 * 3600 * hours / (1800 * 0.4 + energy * hours)
    )
    kept = cost.estimate_cost(RTX4090, 1, 100.0, None, 0.15, usage=cost.Usage(20, 1))
    assert kept.samples_per_usd_buy is not None and est.samples_per_usd_buy is not None
    assert est.samples_per_usd_buy > kept.samples_per_usd_buy


# ---------------------------------------------------------------- auto: new unless outdated


def _p(usd: float, condition: str, as_of: str) -> cost.PurchaseOffer:
    return cost.PurchaseOffer(usd, condition, as_of, f"{condition} {as_of}")


def test_auto_drops_a_new_price_more_than_six_months_older_than_a_used_one() -> None:
    # the A40: one Amazon listing of June 2025 against a market price of March 2026
    new, used = _p(5809.0, "new", "2025-06-09"), _p(4150.0, "used", "2026-03")
    assert cost.choose_purchase([new, used]) is used
    assert cost.choose_purchase([new, used], "new") is new  # asked by name, still paid


def test_auto_keeps_a_new_price_within_six_months_of_the_used_one() -> None:
    new, used = _p(449.0, "new", "2026-03"), _p(599.99, "used", "2026-08-11")
    assert cost.choose_purchase([new, used]) is new
    # a month is read as its last day in the new price's favour: March 2026 + 6 months ends
    # 2026-09-30, and a market price of that month does not demote it (one above it: a lower
    # as-current market price is paid instead, tests/domain/test_r25hw_market_below_new.py)
    assert cost.choose_purchase([new, _p(500.0, "market", "2026-09-15")]) is new
    later = _p(400.0, "market", "2026-10")
    assert cost.choose_purchase([new, later]) is later


def test_a_newer_new_price_still_beats_an_older_used_one() -> None:
    new, used = _p(900.0, "new", "2024"), _p(500.0, "used", "2025-06")
    # a bare year reads as its last day: 2024-12-31 + 6 months is after 2025-06-01
    assert cost.choose_purchase([new, used]) is new
    newer = _p(900.0, "new", "2026-01")
    assert cost.choose_purchase([newer, used]) is newer


def test_a_stale_launch_price_is_no_reason_to_drop_a_new_one() -> None:
    new = _p(1000.0, "new", "2024-01")
    launch = cost.PurchaseOffer(1500.0, "launch", "2026-01", "launch", stale=False)
    assert cost.choose_purchase([new, launch]) is new  # only used/market prices outdate it

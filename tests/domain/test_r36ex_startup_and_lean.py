"""Review ex (issue 23, 2026-12-06): a rented job pays its instance's start-up (one minute,
cost.RENT_STARTUP_H), so a seconds-long job is not rented on many cards; a row whose own band
says its estimate likely overstates the speed is ranked by balanced on that band's low end."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any, cast

import pytest

from app.domain import bands, rank
from app.domain import cost as costs
from app.domain.gpu import Price
from tests.domain.fixtures import H100

MINUTE_H = 1 / 60


def _rented(
    hourly_per_gpu: float, n: int, throughput: float, hours: float | None
) -> costs.CostEstimate:
    gpu = dataclasses.replace(H100, cloud_price=Price(hourly_per_gpu, "2026-11-30", "x"))
    return costs.estimate_cost(gpu, n, throughput, hours)


def test_the_start_up_is_a_minute_of_the_instance_on_top_of_the_run() -> None:
    c = _rented(4.9, 4, 58_686.0, 17 / 3600)
    assert pytest.approx(MINUTE_H) == costs.RENT_STARTUP_H
    assert c.hourly_usd == pytest.approx(19.6)
    assert c.rent_startup_usd == pytest.approx(19.6 / 60)
    assert c.rent_to_finish_usd == pytest.approx(19.6 * (17 + 60) / 3600)
    # the work per dollar is over the whole bill: 17 s of work for 77 s paid
    rate = 58_686.0 * 3600 / 19.6
    assert c.samples_per_usd_rent == pytest.approx(rate * 17 / 77)


def test_a_long_job_moves_by_the_fixed_term_only() -> None:
    hours = 1000.0
    c = _rented(2.0, 8, 10_000.0, hours)
    assert c.rent_to_finish_usd == pytest.approx(16.0 * hours + 16.0 / 60)
    assert c.samples_per_usd_rent == pytest.approx(10_000.0 * 3600 / 16.0, rel=2e-5)


def test_without_a_length_there_is_no_start_up_and_the_rate_stands() -> None:
    c = _rented(2.0, 1, 100.0, None)
    assert c.rent_to_finish_usd is None and c.rent_startup_usd is None
    assert c.samples_per_usd_rent == pytest.approx(100.0 * 3600 / 2.0)


def _finish(c: costs.CostEstimate) -> float:
    stand_in = cast(Any, SimpleNamespace(cost=c, perf=SimpleNamespace(throughput=0.0)))
    return rank._finish_score(stand_in, rank.DEFAULT_SPEED_WEIGHT)


def test_balanced_rents_one_card_for_a_seconds_long_job_and_four_for_an_hour_long_one() -> None:
    """4 B200s that run a LoRA job in 17 s against one in 50 s (the CLI's default LoRA answer
    had been 4 of them, start-up unpriced): 33 s saved of 110 waited, for 2.8 times the
    money. The same cards on a job 200 times longer: the four win, as before."""
    one = _rented(4.82, 1, 20_214.0, 50 / 3600)
    four = _rented(4.9, 4, 58_686.0, 17 / 3600)
    assert _finish(one) > _finish(four)
    one_long = _rented(4.82, 1, 20_214.0, 200 * 50 / 3600)
    four_long = _rented(4.9, 4, 58_686.0, 200 * 17 / 3600)
    assert _finish(four_long) > _finish(one_long)


def test_the_column_values_bound_the_rented_value_with_a_length() -> None:
    """cost.values (a balanced answer's value bounds) is the rate without a length; with
    one the start-up only lowers the value, so the bound still bounds."""
    import numpy as np

    c = _rented(2.0, 1, 100.0, 0.05)
    terms = costs.rates(dataclasses.replace(H100, cloud_price=Price(2.0, "2026-11-30", "x")), 1)
    row = [[np.nan if x is None else x for x in (terms[0], terms[1], terms[3], terms[4])]]
    bound = costs.values(np.array([100.0]), np.array(row, np.float64), "rent")[0]
    assert c.samples_per_usd_rent is not None and c.samples_per_usd_rent < bound


def test_the_vendors_that_lean_high_are_those_whose_reason_says_so() -> None:
    assert {"amd", "intel"} == bands.CONV_LEAN_VENDORS
    for vendor in bands.CONV_LEAN_VENDORS:
        assert bands.LEANS_HIGH in bands.vendor_widening(vendor, "RDNA 4").reason
    assert bands.LEANS_HIGH not in bands.UNMEASURED_VENDOR.reason

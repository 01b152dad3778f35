"""A bought card resold whole and run on free power costs nothing to own: no work per dollar,
and no division by zero (the API fuzzer's resale_fraction 1.0 with electricity 0)."""

from __future__ import annotations

import numpy as np

from app.domain import cost
from tests.domain.fixtures import RTX4090


def test_a_card_resold_whole_on_free_power_has_no_bought_value() -> None:
    usage = cost.Usage(resale_fraction=1.0)
    est = cost.estimate_cost(RTX4090, 1, 100.0, None, 0.0, usage=usage)
    assert est.purchase_usd and est.samples_per_usd_buy is None
    assert cost.value(est, "buy") is None
    p, h, _, e, z = cost.rates(RTX4090, 1, 0.0, usage=usage)
    got = cost.values(np.array([100.0]), np.array([[p, h, e, z]], np.float64), "buy", 1.0)
    assert np.isnan(got[0])
    # renting still has its value
    assert cost.value(est, "rent") == est.samples_per_usd_rent

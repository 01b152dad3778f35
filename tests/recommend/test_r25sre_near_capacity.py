"""A serving row chosen near its own capacity says so (serving.near_capacity): past 80 % of
the modelled saturation throughput, under random arrivals, with the band's low edge named
where it does not carry the load. A closed loop of clients is not weighed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from app.domain.workload import ServingSpec
from app.recommend.serving import NEAR_CAPACITY, near_capacity


def _result(load: float, most: float) -> Any:
    return SimpleNamespace(output_tokens_per_s=load, max_output_tokens_per_s=most)


def _spec(**kw: Any) -> ServingSpec:
    return ServingSpec(prompt_tokens=1000, output_tokens=300, **kw)


def test_the_reviews_h100_at_97_percent_is_warned_with_its_low_band() -> None:
    said = near_capacity(_result(4800, 4959), _spec(requests_per_s=16), 0.678)
    assert said is not None
    assert "97 % of modelled capacity (4,800 of 4,959 output tokens/s)" in said
    assert "queueing delay grows without bound" in said
    # 4,959 × 0.678 = 3,362 < 4,800: the band's low edge does not carry the load
    assert "its band's low edge carries 3,362, under the load" in said


def test_a_band_that_carries_the_load_is_not_named() -> None:
    said = near_capacity(_result(850, 1000), _spec(requests_per_s=2), 0.9)
    assert said is not None and "85 %" in said and "low edge" not in said


def test_below_the_share_or_in_a_closed_loop_nothing_is_said() -> None:
    assert near_capacity(_result(799, 1000), _spec(requests_per_s=2), 0.5) is None
    assert NEAR_CAPACITY == 0.8
    assert near_capacity(_result(950, 1000), _spec(concurrent_requests=20), 0.5) is None
    assert near_capacity(_result(0, 0), _spec(requests_per_s=2), 0.5) is None

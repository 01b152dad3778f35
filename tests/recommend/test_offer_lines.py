"""A row's offer in words (rows.offer_lines): what is rented and what it costs."""

from __future__ import annotations

from app.domain import cost as costs
from app.recommend.rows import offer_lines


def _offer() -> costs.CloudOffer:
    return costs.CloudOffer(
        "hyperbolic", "1x-RTX4090-64-271", 1, 0.23, None, "marketplace", "2026-11-30", "test"
    )


def test_several_instances_say_the_price_is_all_of_them() -> None:
    """ "Rent 6× … (1 GPU, marketplace) at $1.38/h" read as $1.38 each; it is the six."""
    six = costs.OfferChoice(_offer(), instances=6, gpus_used=6, usd_per_hour=1.38, spot=False)
    pricing = costs.Pricing(rent=six, buy=None, num_gpus=6, usage=costs.Usage())
    (line, *_) = offer_lines(pricing)
    assert line.startswith("Rent 6× hyperbolic 1x-RTX4090-64-271 (1 GPU, marketplace)")
    assert "at $1.38/h for all 6 ($0.23/h per" in line and "-GPU instance)" in line
    one = costs.OfferChoice(_offer(), instances=1, gpus_used=1, usd_per_hour=0.23, spot=False)
    (single, *_) = offer_lines(costs.Pricing(rent=one, buy=None, num_gpus=1, usage=costs.Usage()))
    assert "at $0.23/h, as of 2026-11-30" in single and "for all" not in single


def test_a_spot_price_is_said_as_spot_not_as_the_hosts_on_demand_tier() -> None:
    """ "(8 GPUs, on-demand) at $80.00/h spot" read as an on-demand price; a spot one says
    spot where the tier goes, and a marketplace host's keeps its tier beside it."""
    demand = costs.CloudOffer("aws", "p5.48xlarge", 8, 98.0, 80.0, "on-demand", "2026-11-30", "t")
    at_spot = costs.OfferChoice(demand, instances=1, gpus_used=8, usd_per_hour=80.0, spot=True)
    (line, *_) = offer_lines(costs.Pricing(rent=at_spot, buy=None, num_gpus=8, usage=costs.Usage()))
    assert "(8 GPUs, spot) at $80.00/h," in line and "on-demand" not in line
    market = costs.OfferChoice(_offer(), instances=1, gpus_used=1, usd_per_hour=0.2, spot=True)
    (other, *_) = offer_lines(costs.Pricing(rent=market, buy=None, num_gpus=1, usage=costs.Usage()))
    assert "(1 GPU, marketplace, spot) at $0.20/h," in other

"""Review 5 #11: a spot training job over several instances says one reclaimed instance
stops all of them."""

from __future__ import annotations

from app.domain.cost import (
    CloudOffer,
    GpuOffers,
    Pricing,
    RentalPolicy,
    Usage,
    price_configuration,
)
from app.recommend.rows import spot_warning

OFFER = CloudOffer(
    "azure", "Standard_ND96asr_v4", 8, 27.2, 2.99, "on-demand", "2026-11-30", "t", 1, "A100"
)


def _priced(n: int) -> Pricing:
    policy = RentalPolicy(allow_spot=True, multi_node=True)
    return price_configuration(GpuOffers(cloud=(OFFER,)), n, policy, Usage(), node_gpus=8)


def test_four_spot_instances_say_one_reclaim_stops_all_four() -> None:
    p = _priced(32)
    assert p.rent is not None and p.rent.instances == 4 and p.rent.spot
    said = spot_warning(p, training=True)
    assert said is not None
    assert "one reclaimed instance stops the whole job" in said
    assert "all 4 instances (32 GPUs)" in said
    # serving replicas share nothing: no such words
    served = spot_warning(p, training=False)
    assert served is not None and "whole job" not in served


def test_one_spot_instance_says_nothing_of_others() -> None:
    said = spot_warning(_priced(8), training=True)
    assert said is not None and "whole job" not in said

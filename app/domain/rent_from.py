"""What a GPU rents from: the one cloud price the catalog, GPU and compare pages show.

Only launchable offers count (a provider's own catalog; data/offers/README.md): a price
quoted in a note or a blog (``CloudOffer.quoted``) is never a "from" price. The figure is
the on-demand price, as a recommendation rents by default (``cost.RentalPolicy``); a spot
price is reported apart, and only where it is the lower.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.domain.cost import CloudOffer


@dataclass(frozen=True, slots=True)
class RentFrom:
    # The lowest on-demand price per GPU-hour among the launchable offers (None when every
    # one of them is a spot instance) and who rents at it.
    usd_per_gpu_hour: float | None
    provider: str | None
    offers: int  # launchable offers, every tier
    as_of: str  # the newest date among them
    # The lowest spot price per GPU-hour, only where it is a cent or more below the on-demand.
    spot_usd_per_gpu_hour: float | None = None


def _spot_per_gpu_hour(offer: CloudOffer) -> float | None:
    # A spot-tier row's own price is a spot price; another tier's spot column may add one.
    prices = [p for p in (offer.spot_usd_per_hour,) if p is not None]
    if offer.tier == "spot":
        prices.append(offer.usd_per_hour)
    return min(prices) / offer.gpus if prices else None


def rent_from(offers: Iterable[CloudOffer]) -> RentFrom | None:
    """The GPU's "from" price over its offers; None when it has no launchable offer."""
    launchable = [o for o in offers if not o.quoted and o.gpus > 0]
    if not launchable:
        return None
    on_demand = [o for o in launchable if o.tier != "spot"]
    cheapest = min(
        on_demand, key=lambda o: (o.usd_per_gpu_hour, o.provider, o.instance_type), default=None
    )
    spots = [p for p in map(_spot_per_gpu_hour, launchable) if p is not None]
    spot = min(spots, default=None)
    # A spot price is worth a word only when it saves at least a cent per GPU-hour.
    if spot is not None and cheapest is not None and spot > cheapest.usd_per_gpu_hour - 0.01:
        spot = None
    return RentFrom(
        usd_per_gpu_hour=cheapest.usd_per_gpu_hour if cheapest else None,
        provider=cheapest.provider if cheapest else None,
        offers=len(launchable),
        as_of=max(o.as_of for o in launchable),
        spot_usd_per_gpu_hour=spot,
    )

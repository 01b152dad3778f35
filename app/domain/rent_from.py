"""What a GPU rents from: the one cloud price the catalog, GPU and compare pages show.

Only launchable offers count (a provider's own catalog; data/offers/README.md): a price
quoted in a note or a blog (``CloudOffer.quoted``) is never a "from" price, nor is an offer
whose two prices contradict each other (``inconsistency``). The figure is the on-demand
price, as a recommendation rents by default (``cost.RentalPolicy``); a spot price is
reported apart, and only where it is the lower.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.domain.cost import CloudOffer


def inconsistency(usd_per_hour: float, spot_usd_per_hour: float | None) -> str | None:
    """Why an offer row's prices contradict each other, else None.

    A spot price is an interruptible discount on the same instance: one above the on-demand
    price says that one of the two is wrong (RunPod's L40S rows in the SkyPilot snapshot list
    $0.43 on demand and $0.86 spot, the pair swapped against RunPod's own list), and nothing
    says which. Such a row is shown, flagged, but neither price is ranked, used as a "from"
    price or launched (data/offers/README.md)."""
    if spot_usd_per_hour is not None and spot_usd_per_hour > usd_per_hour:
        return (
            f"spot price ${spot_usd_per_hour:,.4g}/h above the on-demand ${usd_per_hour:,.4g}/h: "
            "one of the two is wrong (swapped?), so neither is used"
        )
    return None


def usable(offer: CloudOffer) -> bool:
    """A launchable offer whose prices can be used: not quoted, not self-contradicting."""
    return (
        not offer.quoted
        and offer.gpus > 0
        and inconsistency(offer.usd_per_hour, offer.spot_usd_per_hour) is None
    )


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
    # The instance behind the on-demand "from" price: a floor per GPU-hour is only honest with
    # its shape ("$0.26/GPU-h" was a 2-GPU community host, not one card on demand).
    instance_type: str | None = None
    instance_gpus: int | None = None
    tier: str | None = None


def _spot_per_gpu_hour(offer: CloudOffer) -> float | None:
    # A spot-tier row's own price is a spot price; another tier's spot column may add one.
    prices = [p for p in (offer.spot_usd_per_hour,) if p is not None]
    if offer.tier == "spot":
        prices.append(offer.usd_per_hour)
    return min(prices) / offer.gpus if prices else None


def rent_from(offers: Iterable[CloudOffer]) -> RentFrom | None:
    """The GPU's "from" price over its offers; None when it has no usable launchable offer."""
    launchable = [o for o in offers if usable(o)]
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
        instance_type=cheapest.instance_type if cheapest else None,
        instance_gpus=cheapest.gpus if cheapest else None,
        tier=cheapest.tier if cheapest else None,
    )

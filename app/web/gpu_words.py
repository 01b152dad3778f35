"""What the GPU and compare pages say where a catalog field is empty for a reason the field
cannot hold: an Apple SoC's launch price is a whole machine's (a `launch` purchase offer,
data/offers/README.md), and its GPU has no link to another GPU at all.

The compare page had read "Launch price —" above "Price used for buying: $3,499 launch" for
the M4 Max (the first the catalog's empty field, the second the purchase offer a
recommendation buys at), and "GPU interconnect: PCIe only" for a GPU with no PCIe link."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.domain.cost import PurchaseOffer

# topology.fabric gives an Apple or SoC GPU a one-GPU "unified" fabric: no multi-GPU link
SOC_INTERCONNECT = "none: the GPU is part of the SoC, on its unified memory (one per machine)"


def on_soc(gpu: Any) -> bool:
    return bool(gpu.vendor == "apple" or gpu.segment == "soc")


def interconnect_said(gpu: Any) -> str:
    """The catalog's interconnect, else what an empty field means for this GPU: none for a
    GPU on an SoC, else a card that talks to others over PCIe alone."""
    if gpu.interconnect:
        return str(gpu.interconnect)
    return SOC_INTERCONNECT if on_soc(gpu) else "PCIe only"


@dataclass(frozen=True)
class LaunchOnFile:
    """A launch price the purchase offers hold where the catalog's launch field is empty."""

    usd: float
    as_of: str
    source: str
    machine: bool  # a whole machine's price (an Apple SoC), not a card's

    @property
    def basis(self) -> str:
        what = (
            "the whole machine's launch price at this configuration"
            if self.machine
            else ("launch price")
        )
        return f"{what} ({self.as_of}), from the purchase offers"


def launch_on_file(gpu: Any, purchase: Iterable[PurchaseOffer]) -> LaunchOnFile | None:
    """The newest `launch` purchase offer of a GPU whose catalog entry has no launch price:
    the figure buying uses (buy_at "launch"), so the launch-price cell says it too. None
    where the catalog has one (it is shown) or no launch offer exists."""
    if gpu.launch_price_usd is not None:
        return None
    launches = [o for o in purchase if o.condition == "launch"]
    if not launches:
        return None
    o = max(launches, key=lambda x: x.as_of)
    return LaunchOnFile(o.usd, o.as_of, o.source, on_soc(gpu))

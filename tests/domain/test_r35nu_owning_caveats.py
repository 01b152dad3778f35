"""New user's walk (thirty-fifth session): asked to buy or rent, an RTX 4090 the verdict rents at
$0.23/h was given the caveat "the price and electricity are the card alone (450 W of board
power, a lower bound): no host computer nor cooling (PUE)". ``compat.is_owning_caveat`` tells
the words on owning the hardware from the rest, which the verdict keeps for a rented pick."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from app.domain import compat, cost
from app.domain.gpu import GpuSpec

Catalog = tuple[list[GpuSpec], Mapping[str, cost.GpuOffers], object]

COUNTS = (1, 2, 3, 4, 8, 16, 64)


def _phrases(catalog: Catalog) -> set[str]:
    """Every purchase caveat the shipped catalog makes: each GPU, at each count, at each of its
    purchase prices and at none, renting offered or not."""
    gpus, offers, _ = catalog
    said: set[str] = set()
    for gpu in gpus:
        prices: list[cost.PurchaseOffer | None] = [None]
        if gpu.slug in offers:
            prices.extend(offers[gpu.slug].purchase)
        for buy in prices:
            for n in COUNTS:
                for rents in (True, False):
                    said.update(compat.purchase_caveats(gpu, n, True, rents, buy))
    return said


def test_every_caveat_on_owning_the_hardware_is_known_as_one(shipped_catalog: Catalog) -> None:
    said = _phrases(shipped_catalog)
    assert len(said) > 50  # the catalog's cards, counts and prices make many
    slow_fp16 = {x for x in said if " runs fp16 arithmetic at " in x}
    assert slow_fp16  # a P40's: it holds rented too, so it is not one
    missed = sorted(x for x in said - slow_fp16 if not compat.is_owning_caveat(x))
    assert not missed, missed
    assert not any(compat.is_owning_caveat(x) for x in slow_fp16)


@pytest.mark.parametrize(
    "text",
    [
        # a row's other warnings stay the verdict's caveat for a rented pick
        "the estimate is loose (0.17–0.43 images/s)",
        "bf16 cannot run on NVIDIA TITAN RTX: estimated at fp16 (see those rows' warnings)",
        "Only 2.94 GiB headroom: watch torch.cuda.max_memory_allocated()",
        "NVIDIA GeForce RTX 4090 Laptop GPU: its speed follows the power limit (TGP) its "
        "laptop's maker set",
        "spot: the instance can be interrupted",
    ],
)
def test_other_warnings_are_not(text: str) -> None:
    assert not compat.is_owning_caveat(text)

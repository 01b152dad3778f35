"""The words a serving row says alike for a decoder (app/recommend/serving.py) and an encoder
(app/recommend/serving_encoder.py): its price and what it rests on, its cost block, its
band, its warnings in order, its bottleneck and another shape of its card. Each takes the
figures the caller's units give (output tokens or embeddings); one function, two callers."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from app.domain import compat, serving_step
from app.domain import serving as sv
from app.domain.gpu import GpuSpec
from app.recommend import schemas as s
from app.recommend.rows import chosen_offer_out, priced_parts, spot_warning

# the bottlenecks a serving row names as they are; any other (the KV cache's or the weights'
# reads) is said as memory bandwidth
NAMED_BOTTLENECKS = ("compute", "interconnect", "kernel launches", "host overhead")


class ServedRow(Protocol):
    """What the shared words read of a ranked serving row (recommend/serving._Row)."""

    @property
    def served(self) -> serving_step.Served: ...
    @property
    def warnings(self) -> tuple[str, ...]: ...
    @property
    def result(self) -> sv.ServingResult: ...


def bottleneck_word(bottleneck: str) -> str:
    return bottleneck if bottleneck in NAMED_BOTTLENECKS else "memory bandwidth"


def price_words(priced: serving_step.Price) -> str:
    """What the row's hourly price rests on (its provenance)."""
    if priced.pricing is None:
        return "catalog" if priced.basis is not None else "unknown"
    rent = priced.pricing.rent
    if priced.basis == "rent" and rent is not None:
        o = rent.offer
        return f"rented: {o.provider} {o.instance_type} ({o.tier}, {o.as_of}; {o.source})"
    buy = priced.pricing.buy
    if priced.basis == "buy" and buy is not None:
        return (
            f"bought: {buy.condition} price ({buy.as_of}) less resale over "
            f"{priced.pricing.usage.hours:,.0f} h of use, plus energy at TDP"
        )
    return "unknown"


def served_cost(
    gpu: GpuSpec,
    result: sv.ServingResult,
    priced: serving_step.Price,
    per_million: tuple[float | None, float | None],
    blended: float | None,
) -> tuple[s.CostOut, dict[str, Any]]:
    """The row's cost block and the fields beside it (its offer, what it is priced on):
    ``per_million`` the rented $ per million of its two units (output, input), ``blended`` its
    whole-hour $ per million of the unit it is ranked on."""
    cost = serving_step.cost_of(gpu, result, priced)
    if priced.pricing is not None and priced.pricing.left_out is not None:
        # a way in the budget took out has no break-even with the way offered (evaluate.finish)
        cost = dataclasses.replace(cost, break_even_hours=None)
    # priced on a basis the question accepts (Price.basis): a rented-only card asked to buy
    # has no price, whatever its offers say
    extra: dict[str, Any] = {"price_known": priced.basis is not None}
    rent_out = buy_out = None
    if priced.pricing is not None:  # the offers chosen (None: the catalog's prices)
        extra, rent_out, buy_out = priced_parts(
            priced.pricing,
            cost,
            per_million,
            priced.placed.note if priced.placed is not None else None,
            blended=blended,
        )
        extra["price_known"] = priced.basis is not None
    out = s.CostOut(
        **dataclasses.asdict(cost) | {"job_cost_usd": None, "rent": rent_out, "buy": buy_out}
    )
    return out, extra


def uncertainty_out(
    tput: float, band: tuple[float, float, str], first: s.TimeBandOut | None
) -> s.UncertaintyOut:
    """The row's band on its throughput, and ``first`` on its first answer's time."""
    lo, hi, basis = band
    return s.UncertaintyOut(
        low=tput * lo,
        high=tput * hi,
        factor_low=lo,
        factor_high=hi,
        basis=basis,
        time_to_first_token_ms=first,
    )


def row_warnings(row: ServedRow, gpu: GpuSpec, middle: list[str]) -> list[str]:
    """The row's warnings in the order every serving row says them: its software's, the
    ranking's, the result's notes, then ``middle`` (the caller's own), the GeForce licence,
    and what the bought hardware needs besides the cards."""
    return (
        list(row.served.warnings)
        + list(row.warnings)
        + list(row.result.notes)
        + middle
        # the GeForce licence before what the hardware bought needs besides the cards (as
        # training and inference rows say it): the verdict quotes the first that applies
        + ([g] if (g := compat.geforce_caveat(gpu)) else [])
        + list(row.served.caveats)
    )


def spot_words(priced: serving_step.Price) -> list[str]:
    return [w for w in (spot_warning(priced.pricing, False),) if w]


def alternative_out(
    res: sv.ServingResult,
    priced: serving_step.Price,
    *,
    gpus_per_replica: int,
    latency: tuple[float | None, float | None],
    required_gb: float,
    throughput: float,
    unit: str,
) -> s.AlternativeOut:
    """Another shape of the row's card that meets the targets, with the instance it rents;
    ``latency``: its (inter-token, first-answer) milliseconds."""
    c = res.config
    rent = priced.pricing.rent if priced.pricing is not None else None
    return s.AlternativeOut(
        num_gpus=res.total_gpus,
        replicas=c.replicas,
        gpus_per_replica=gpus_per_replica,
        precision=c.weight_precision,
        kv_cache_precision=c.kv_precision,
        itl_ms=latency[0],
        ttft_ms=latency[1],
        required_gb=round(required_gb, 3),
        throughput=throughput,
        unit=unit,
        scaling_efficiency=1.0,
        purchase_usd=priced.purchase_usd,
        hourly_usd=priced.rent_usd_per_hour,
        offer=chosen_offer_out(rent, priced.placed.note if priced.placed else None)
        if rent is not None
        else None,
        price_known=priced.basis is not None,
    )

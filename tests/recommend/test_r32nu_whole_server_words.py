"""New-user walk (thirty-second session): one H100 SXM, sold only as whole 8-GPU servers, is
priced at the server's $317,000, but the row's words said "Buy: 1× $39,625" and the verdict
gave the $317,000 beside a note on the price of one GPU ("an 8-GPU server's price ÷ 8")."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

from app.domain import cost
from app.offers.loader import read_seed_purchase_offers
from app.recommend import schemas as s
from app.recommend.rows import offer_lines
from app.recommend.summary import _price

DATA = Path(__file__).resolve().parents[2] / "data"


def _h100_sxm() -> cost.GpuOffers:
    rows = [r for r in read_seed_purchase_offers(DATA) if r.gpu_slug == "h100-sxm"]
    return cost.GpuOffers(
        purchase=tuple(
            cost.PurchaseOffer(r.usd, r.condition, r.as_of, r.source, note=r.note) for r in rows
        )
    )


def _buy_line(n: int) -> str:
    pricing = cost.price_configuration(
        _h100_sxm(), n, cost.RentalPolicy(), cost.Usage(), node_gpus=8
    )
    return next(x for x in offer_lines(pricing) if x.startswith("Buy:"))


def test_the_buy_line_counts_the_gpus_a_whole_server_pays_for() -> None:
    assert _buy_line(1).startswith("Buy: 8× $39,625 (new price")
    assert _buy_line(4).startswith("Buy: 8× $39,625 (new price")
    assert _buy_line(16).startswith("Buy: 16× $39,625 (new price")


def _row(usd: float, unit: float, n: int, note: str | None) -> s.Recommendation:
    buy = s.BuyCostOut(usd=usd, unit_usd=unit, condition="new", as_of="2024-08-22", source="q",
                       stale=True, note=note)  # fmt: skip
    row = SimpleNamespace(
        cost=SimpleNamespace(rent=None, buy=buy), offer=None, serving=None, num_gpus=n,
        verdict=None,
    )  # fmt: skip
    return cast(s.Recommendation, row)


def test_the_verdict_says_how_many_gpus_its_server_price_pays_for() -> None:
    note = "an 8-GPU server's price ÷ 8 (one vendor's quote): sold only as whole servers"
    said = _price(_row(317_000.0, 39_625.0, 1, note), "buy")
    assert said is not None
    assert said.startswith(
        "costs $317,000 to buy new as of 2024-08-22 (8 GPUs at $39,625, 1 used: an 8-GPU "
        "server's price ÷ 8"
    ), said


def test_cards_bought_one_by_one_keep_their_words() -> None:
    assert _price(_row(4_940.0, 2_470.0, 2, None), "buy") == (
        "costs $4,940 to buy new as of 2024-08-22"
    )
    said = _price(_row(1_095.0, 1_095.0, 1, "new old stock"), "buy")
    assert said == "costs $1,095 to buy new as of 2024-08-22 (new old stock)"

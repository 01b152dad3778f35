"""Review 5 #1: the H100 SXM, sold only as 8-GPU servers, is priced per GPU from one whole
server's dated quote, and its note says so wherever the price is shown."""

from __future__ import annotations

from pathlib import Path

from app.domain import cost
from app.offers.loader import read_seed_purchase_offers
from app.recommend.rows import offer_lines

DATA = Path(__file__).resolve().parents[2] / "data"


def _offers(slug: str) -> list[cost.PurchaseOffer]:
    return [
        cost.PurchaseOffer(r.usd, r.condition, r.as_of, r.source, note=r.note)
        for r in read_seed_purchase_offers(DATA)
        if r.gpu_slug == slug
    ]


def test_the_h100_sxm_is_priced_as_an_eighth_of_a_quoted_server() -> None:
    (row,) = _offers("h100-sxm")
    assert (row.usd, row.condition, row.as_of) == (317_000 / 8, "new", "2024-08-22")
    assert row.note is not None and "8-GPU" in row.note and "÷ 8" in row.note
    assert "whole servers" in row.note and "Thinkmate" in row.source
    assert cost.choose_purchase([row]) == row  # 'auto' pays it


def test_the_buy_line_says_it_is_a_servers_price() -> None:
    offers = cost.GpuOffers(purchase=tuple(_offers("h100-sxm")))
    pricing = cost.price_configuration(offers, 64, cost.RentalPolicy(), cost.Usage())
    line = next(x for x in offer_lines(pricing) if x.startswith("Buy:"))
    assert "64× $39,625 (new price" in line and "an 8-GPU server's price ÷ 8" in line


def test_the_other_hgx_and_oam_parts_stay_unpriced() -> None:
    # no dated single-figure server price was found for them (data/offers/README.md)
    for slug in ("h200-sxm", "b200", "mi300x", "mi325x"):
        assert _offers(slug) == [], slug

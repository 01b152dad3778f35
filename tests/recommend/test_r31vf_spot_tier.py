"""r31 review (vf): a spot offer whose own tier is "spot" (Mithril's H100 nodes) read
"Rent mithril h100-80gb.sxm.8x (8 GPUs, spot, spot) at $8.00/h": the tier is said once."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.domain import cost as costs
from app.recommend.rows import offer_lines


def test_a_spot_tier_offer_rented_at_spot_says_spot_once() -> None:
    offer = costs.CloudOffer("mithril", "h100-80gb.sxm.8x", 8, 8.0, 8.0, "spot", "2026-11-30", "t")
    choice = costs.OfferChoice(offer, instances=1, gpus_used=8, usd_per_hour=8.0, spot=True)
    (line, *_) = offer_lines(costs.Pricing(rent=choice, buy=None, num_gpus=8, usage=costs.Usage()))
    assert "(8 GPUs, spot) at $8.00/h," in line, line
    assert "spot, spot" not in line


def test_the_page_gives_no_on_demand_price_for_a_spot_only_offer(read_client: TestClient) -> None:
    """The page said "8 GPUs, spot, $8.00/h (on demand $8.00/h)" of Mithril's spot-tier H100
    node, which has no on-demand price; an on-demand offer rented at spot keeps its own."""
    page = read_client.get(
        "/recommendations?preset=llama-3-8b&task=training&dataset_samples=1000000&epochs=1"
        "&acquisition=rent&allow_spot=on&max_hours=72&objective=cheapest&limit=10"
    )
    assert page.status_code == 200
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text))
    offers = re.findall(
        r"Rent (\w+) · [^:]*: \d+ GPUs?, spot , (\$[\d.,]+/h)( \(on demand [^)]*\))?", text
    )
    assert offers, text[:2000]
    by_provider = {p: on_demand for p, _, on_demand in offers}
    assert "mithril" in by_provider and by_provider["mithril"] == "", offers
    assert any(on_demand for p, _, on_demand in offers if p == "azure"), offers

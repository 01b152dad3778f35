"""GET /api/v1/gpus/{slug}'s ``buy_at`` for the RTX 50 cards GPU Poet's September 2026 report
prices twice: the best deal (market, listings new or used) below the "New on Amazon" figure of
the same month is what 'auto' pays (cost.choose_purchase)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

# (slug, market, new) as data/offers/purchase.yaml and the catalog give them for 2026-09
SEPT_2026 = (("rtx-5060-ti-16gb", 600.0, 875.0), ("rtx-5090", 4795.0, 5258.0))


@pytest.mark.parametrize(("slug", "market", "new"), SEPT_2026, ids=lambda v: str(v))
def test_buy_at_is_the_lower_same_month_market_price(
    read_client: TestClient, slug: str, market: float, new: float
) -> None:
    buy = read_client.get(f"/api/v1/gpus/{slug}").json()["buy_at"]
    assert (buy["condition"], buy["usd"], buy["as_of"]) == ("market", market, "2026-09")
    assert f"${new:,.0f}" in (buy["note"] or "")

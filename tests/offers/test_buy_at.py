"""What GET /api/v1/gpus/{slug} says a card costs to buy (``buy_at``): dated, flagged stale as an
offer is, with the data's caveat on the price (purchase.yaml ``note``)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.domain.cost import BuyPrice, PurchaseOffer
from app.offers import service
from app.offers.files import OfferFileError
from app.offers.loader import read_seed_purchase_offers

SOURCES = "sources:\n  s:\n    title: a shop\n    url: https://shop.example/a40\n"


def _purchase_yaml(tmp_path: Path, prices: str) -> Path:
    (tmp_path / "offers").mkdir()
    (tmp_path / "offers" / "purchase.yaml").write_text(SOURCES + "prices:\n" + prices)
    return tmp_path


def test_the_loader_reads_a_price_note(tmp_path: Path) -> None:
    data = _purchase_yaml(
        tmp_path,
        '  - {gpu: a40, condition: new, usd: 5809, as_of: "2025-06-09", source: s,'
        ' note: "one Amazon listing, not a market average"}\n'
        '  - {gpu: a40, condition: used, usd: 4150, as_of: "2026-03", source: s}\n',
    )
    noted, plain = read_seed_purchase_offers(data)
    assert noted.note == "one Amazon listing, not a market average"
    assert plain.note is None


@pytest.mark.parametrize("note", ["42", '""', '"x\\ny"', '"' + "x" * 301 + '"', "{a: 1}"])
def test_a_note_that_is_not_one_line_of_text_rejects_the_file(tmp_path: Path, note: str) -> None:
    data = _purchase_yaml(
        tmp_path,
        f'  - {{gpu: a40, condition: new, usd: 5809, as_of: "2025-06", source: s, note: {note}}}\n',
    )
    with pytest.raises(OfferFileError, match="'note'"):
        read_seed_purchase_offers(data)


def test_buy_at_carries_the_note_and_a_stale_flag() -> None:
    offer = PurchaseOffer(5809.0, "new", "2025-06-09", "shop", note="one listing")
    out = service.buy_at(BuyPrice(offer), cutoff="2025-07-01")
    assert out is not None
    assert (out.usd, out.note, out.stale) == (5809.0, "one listing", True)
    fresh = service.buy_at(BuyPrice(offer), cutoff="2025-06-09")
    assert fresh is not None and fresh.stale is False  # on the cutoff day: not older
    stale_launch = PurchaseOffer(999.0, "launch", "2018", "maker", stale=True)
    none = service.buy_at(BuyPrice(None, stale_launch), cutoff="2025-07-01")
    assert none is not None and none.usd is None and none.stale is None
    assert none.note is not None and "more than 3 years old" in none.note


def test_the_api_flags_a_buy_price_as_offers_are_flagged(
    read_client: TestClient, read_settings: Settings
) -> None:
    cutoff = (date.today() - timedelta(days=read_settings.offer_stale_days)).isoformat()
    for slug in ("a40", "rtx-4090", "l40s"):
        buy = read_client.get(f"/api/v1/gpus/{slug}").json()["buy_at"]
        assert buy["usd"] is not None, slug
        assert buy["stale"] is (buy["as_of"] < cutoff), slug
    # the A40: its March 2026 market price (GPU Poet's best deal, listings new or used), not
    # the June 2025 new listing (cost.choose_purchase)
    a40 = read_client.get("/api/v1/gpus/a40").json()["buy_at"]
    assert (a40["condition"], a40["usd"], a40["as_of"]) == ("market", 4150.0, "2026-03")


def test_the_api_carries_a_shipped_prices_note(read_client: TestClient) -> None:
    """The note is stored with the price (purchase_offers.note, migration 0013), not only read:
    H200 NVL's market price is a mean of listings its source calls qualification samples."""
    buy = read_client.get("/api/v1/gpus/h200-nvl").json()["buy_at"]
    assert buy["usd"] is not None and "qualification samples" in (buy["note"] or "")
    plain = read_client.get("/api/v1/gpus/a40").json()["buy_at"]
    assert plain["usd"] is not None and plain["note"] is None

"""Purchase prices are labelled by what their source is: a set of listings "new or used" is
a market price, whatever the card; reseeding drops a seeded price the data relabelled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import select

from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.offers import loader, repository
from app.offers.models import PurchaseOfferRow

DATA = Path(__file__).resolve().parents[2] / "data"
DOC = yaml.safe_load((DATA / "offers" / "purchase.yaml").read_text(encoding="utf-8"))
ROWS: list[dict[str, Any]] = DOC["prices"]


def _title(row: dict[str, Any]) -> str:
    return str(DOC["sources"][row["source"]]["title"])


def test_no_used_label_rests_on_listings_new_or_used() -> None:
    """The L40S, A40, RTX 4060, RTX 4070 Super, A10, A30 and H200 NVL best deals had been
    `used` while the RTX 4090's, from the same reports, was `market`."""
    mixed = [r["gpu"] for r in ROWS if r["condition"] == "used" and "new or used" in _title(r)]
    assert mixed == []
    best_deals = {
        r["gpu"]: r["condition"] for r in ROWS if r["source"].startswith("gpupoet-2026-0")
    }
    for slug in ("l40s", "a40", "rtx-4060", "rtx-4070-super", "a10", "a30"):
        assert best_deals[slug] == "market", slug
    h200 = next(r for r in ROWS if r["gpu"] == "h200-nvl")
    assert h200["condition"] == "market"


def test_reseeding_drops_a_seeded_price_the_data_no_longer_holds(settings: Settings) -> None:
    l40s = next(r for r in ROWS if r["gpu"] == "l40s")
    engine = make_engine(settings.database_url)
    factory = make_session_factory(engine)
    source = next(o.source for o in loader.read_seed_purchase_offers(DATA) if o.gpu_slug == "l40s")
    old = {"gpu_slug": "l40s", "condition": "used", "usd": float(l40s["usd"]),
           "as_of": l40s["as_of"], "source": source}  # fmt: skip
    try:
        with session_scope(factory) as s:
            # as an earlier seed wrote it (condition used), and a user's own row of the card
            repository.add_purchase(s, {**old, "origin": "seed"})
            repository.add_purchase(s, {**old, "source": "my shop", "origin": "import"})
        with session_scope(factory) as s:
            result = loader.seed(s, DATA)
            assert result.removed == 1 and result.inserted == 0
        with session_scope(factory) as s:
            rows = s.scalars(select(PurchaseOfferRow).where(PurchaseOfferRow.gpu_slug == "l40s"))
            kept = sorted((r.condition, r.origin) for r in rows)
            assert kept == [("market", "seed"), ("used", "import")]
        with session_scope(factory) as s:
            assert loader.seed(s, DATA).removed == 0
    finally:
        engine.dispose()

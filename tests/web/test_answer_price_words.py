"""The answer page's buy-versus-rent verdict says when the rent side is a whole node the job
barely uses, and a purchase price's caveat goes with it (a title on the Buy cell, kept short
for the page's byte budget)."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from fastapi.testclient import TestClient

from app.config import Settings
from app.web.templating import make_templates

USAGE = {"hours_per_week": 40, "years": 3, "resale_fraction": 0, "electricity_usd_per_kwh": 0.15}


def _verdict(**extra: Any) -> dict[str, Any]:
    return {
        "cheaper": "buy",
        "break_even_hours": 117.9,
        "buy_total_usd": 2872.8,
        "rent_total_usd": 137479.68,
        "hours": 6240.0,
        **extra,
    }


def _render(name: str, **context: Any) -> str:
    env = make_templates(Settings.model_construct()).env
    return env.get_template(name).render(**context)


def test_the_verdict_says_the_rent_side_is_a_whole_node() -> None:
    note = "renting a whole 8-GPU Standard_ND40rs_v2, 1 of 8 GPUs used"
    html = _render(
        "_verdict.html",
        r={"verdict": _verdict(rent_gpus_paid=8, gpus_used=1, note=note)},
        usage=USAGE,
        query={},
    )
    text = " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())
    assert f"buy $2,873 against rent $137,480 ({note})" in text
    plain = _render("_verdict.html", r={"verdict": _verdict()}, usage=USAGE, query={})
    assert "data-verdict-rent-gpus" not in plain and "GPUs used" not in plain


def _buy_cell(note: str | None) -> str:
    buy = {"usd": 2592.0, "condition": "new", "as_of": "2099-01", "note": note, "job_usd": None}
    r = {"cost": {"buy": buy, "rent": None, "purchase_usd": 2592.0}, "price_known": True}
    return _render("_offers_cells.html", r=r, show_rent=False, show_buy=True, calm=True)


def test_a_buy_price_carries_its_caveat() -> None:
    html = _buy_cell("one Amazon listing's buy box, not a market average")
    assert 'title="one Amazon listing&#39;s buy box, not a market average">new price' in html
    assert "title" not in _buy_cell(None)


def test_the_answer_page_shows_a_buy_prices_note(read_client: TestClient) -> None:
    query = "preset=llama-3-70b&task=inference&acquisition=either"
    rows = read_client.get(f"/recommendations.json?{query}").json()["recommendations"]
    noted = [r for r in rows if r["cost"]["buy"] and r["cost"]["buy"]["note"]]
    assert noted, "the shipped purchase prices of this answer carry notes"
    html = unescape(read_client.get(f"/recommendations?{query}").text)
    for r in noted:
        assert f'title="{r["cost"]["buy"]["note"]}"' in html

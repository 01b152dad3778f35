"""Session 41 (words): an answer row quoted one seen price two ways, "$0.14/h per GPU" in its
Rent cell and its details (the pages' ``usd`` filter, to the cent) and "$0.136/h per GPU" in
its explanation (``cost.seen_text``). Both now write it to three significant figures."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest

from app.config import Settings
from app.domain import cost
from app.web.templating import make_templates


def _text(name: str, **context: Any) -> str:
    env = make_templates(Settings.model_construct()).env
    html = env.get_template(name).render(**context)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def _row(usd: float) -> dict[str, Any]:
    seen = {"usd_per_gpu_hour": usd, "provider": "vast", "as_of": "2026-09-09"}
    return {
        "offer": None,
        "cost": {"rent": None, "buy": None, "purchase_usd": None},
        "seen_prices": [seen],
        "verdict": None,
        "price_known": True,
        "gpu": {"slug": "rtx-4090"},
    }


@pytest.mark.parametrize("usd", [0.136, 0.5, 1.985, 2.09])
def test_the_cell_details_and_explanation_write_one_figure(usd: float) -> None:
    said = cost.seen_text(usd, "vast", "a note", "2026-09-09")
    figure = said.removeprefix("seen at ").split("/h", 1)[0]
    details = _text("_offer_details.html", r=_row(usd), show_rent=True, show_buy=False)
    cell = _text("_offers_cells.html", r=_row(usd), show_rent=True, show_buy=False)
    for shown in (details, cell):
        assert f"{figure}/h per GPU (vast, 2026-09-09)" in shown, (figure, shown)


def test_the_rtx_4090s_quote_reads_0_136_everywhere() -> None:
    details = _text("_offer_details.html", r=_row(0.136), show_rent=True, show_buy=False)
    assert "Seen at $0.136/h per GPU" in details and "$0.14/" not in details
    assert cost.seen_text(0.136, "vast", "x", "d").startswith("seen at $0.136/h per GPU")

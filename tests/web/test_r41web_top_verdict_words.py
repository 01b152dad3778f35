"""The top pick's buy-versus-rent line says what its buy figure counts: "buy $2,891" had sat
beside the row's "Buy $2,470" with no word that the first adds the card's electricity over
the user's hours (a new user's walk, 2026-12-07)."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

LLM_INF = "/recommendations?preset=llama-3-8b&task=inference&batch_size=4&seq_len=4096"


def _usd(text: str) -> float:
    return float(text.replace("$", "").replace(",", ""))


def test_top_verdict_says_its_buy_total_adds_electricity(read_client: TestClient) -> None:
    page = read_client.get(LLM_INF)
    assert page.status_code == 200
    block = re.search(r"<div class=\"small\" data-top-verdict>(.*?)</div>", page.text, re.S)
    assert block, "the top pick rents and buys: its verdict is in the header"
    line = unescape(re.sub(r"<[^>]+>", "", block.group(1)))
    total = re.search(r"buy (\$[\d,]+), rent", line)
    assert total
    row = re.search(
        r'id="rec-1".*?data-label="Buy" data-buy data-value="([\d.e+]+)"', page.text, re.S
    )
    assert row
    # two different figures, both called "buy": the line says why
    assert _usd(total[1]) > float(row[1])
    assert "buying counts the price plus its electricity" in line


def test_resale_is_named_where_asked(read_client: TestClient) -> None:
    page = read_client.get(f"{LLM_INF}&resale_fraction=0.3")
    assert page.status_code == 200
    assert "buying counts the price less resale plus its electricity" in unescape(page.text)

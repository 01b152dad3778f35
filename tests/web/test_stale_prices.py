"""Old prices are marked stale on the pages (docs/guide.md) by the offers API's own rule: a
review found "costs $453 to buy used as of 2026-09" unmarked on the answer page while
GET /api/v1/offers called that very price stale."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.web.offer_words import price_is_stale

# The review's question: llama.cpp on a 4-bit Llama 3 8B, bought; an RTX 3080 Ti at a used
# price of 2026-09 leads it.
BUY_Q = (
    "preset=llama-3-8b&task=inference&runtime=llama.cpp&quantization=q4_k_m&precision=int4"
    "&acquisition=buy"
)


def _rows(html: str) -> dict[str, str]:
    """slug → the ranking row's HTML."""
    return {
        m.group(1): m.group(0)
        for m in re.finditer(
            r'<tr id="rec-\d+" data-rank="\d+" data-slug="([^"]+)">.*?</tr>', html, re.S
        )
    }


def _buy_cell(row: str) -> str:
    found = re.search(r'<td class="num offer-cell" data-label="Buy".*?</td>', row, re.S)
    assert found is not None, row
    return found.group(0)


def _api_answer(client: TestClient) -> dict[str, Any]:
    r = client.get(f"/recommendations.json?{BUY_Q}")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_the_page_decides_stale_as_the_offers_api_does(
    read_client: TestClient, read_settings: Settings
) -> None:
    items = read_client.get("/api/v1/offers?limit=500").json()["items"]
    assert {o["stale"] for o in items} == {True, False}, "the shipped offers have both"
    for o in items:
        assert price_is_stale(o["as_of"], read_settings) is o["stale"], o


def test_a_buy_price_the_offers_api_calls_stale_is_marked_on_the_answer(
    read_client: TestClient,
) -> None:
    answer = _api_answer(read_client)
    rows = _rows(read_client.get(f"/recommendations?{BUY_Q}").text)
    checked = 0
    for rec in answer["recommendations"]:
        buy = rec["cost"]["buy"]
        if buy is None:
            continue
        offers = read_client.get(
            f"/api/v1/offers?gpu={rec['gpu']['slug']}&kind=purchase&limit=500"
        ).json()["items"]
        same = [
            o for o in offers if o["as_of"] == buy["as_of"] and o["condition"] == buy["condition"]
        ]
        assert same, (rec["gpu"]["slug"], buy)
        stale = same[0]["stale"]
        cell = _buy_cell(rows[rec["gpu"]["slug"]])
        assert ("data-stale" in cell) is stale, cell
        checked += 1
    assert checked


@pytest.fixture(scope="module")
def clients(read_settings: Settings) -> Iterator[dict[int, TestClient]]:
    """Apps on the same data whose prices are all stale (1 day) or none (100 years)."""
    apps = {
        days: create_app(read_settings.model_copy(update={"offer_stale_days": days}))
        for days in (1, 36500)
    }
    with TestClient(apps[1]) as all_stale, TestClient(apps[36500]) as none_stale:
        yield {1: all_stale, 36500: none_stale}
    for app in apps.values():
        app.state.engine.dispose()


def test_every_old_price_is_marked_with_the_rule_in_its_tooltip(
    clients: dict[int, TestClient],
) -> None:
    client = clients[1]
    answer = _api_answer(client)
    html = client.get(f"/recommendations?{BUY_Q}").text
    rows = _rows(html)
    bought = [r for r in answer["recommendations"] if r["cost"]["buy"] is not None]
    assert bought
    for rec in bought:
        cell = _buy_cell(rows[rec["gpu"]["slug"]])
        mark = re.search(r'<span class="badge warn" data-stale title="([^"]+)">stale</span>', cell)
        assert mark is not None, cell
        assert mark.group(1) == "price over 1 day old"
        # the row's "Why" dates the price and marks it again
        why = re.search(rf'<tr id="rec-{rec["rank"]}".*?<li data-buy-detail>(.*?)</li>', html, re.S)
        assert why is not None
        assert (
            f'as of {rec["cost"]["buy"]["as_of"]} <span class="badge warn" data-stale'
            in why.group(1)
        )
    # the verdict quotes the pick's price with its date: marked after the sentence
    verdict = re.search(r'<p class="lead">(.*?)</p>', html, re.S)
    assert verdict is not None
    top = bought[0]["cost"]["buy"]["as_of"]
    assert f"as of {top}" in verdict.group(1)
    assert re.search(
        r"data-stale title=\"[^\"]+\">The prices? as of [^<]*" + re.escape(top) + r"[^<]* stale\.<",
        verdict.group(1),
    )
    # the column definitions say what the mark means
    assert "<dt>stale</dt><dd>a price over 1 day old" in html


def test_current_prices_carry_no_mark(clients: dict[int, TestClient]) -> None:
    client = clients[36500]
    for url in (f"/recommendations?{BUY_Q}", "/gpus", "/gpus/rtx-3080-ti"):
        html = client.get(url).text
        assert "data-stale" not in html, url


def test_catalog_and_gpu_page_mark_an_old_buy_price(clients: dict[int, TestClient]) -> None:
    client = clients[1]
    card = re.search(r"data-buy-card>(.*?)</div></div>", client.get("/gpus/rtx-3080-ti").text, re.S)
    assert card is not None and "data-stale" in card.group(1)
    catalog = client.get("/gpus?q=rtx+3080+ti").text
    cell = re.search(r'<span data-buy="[^"]*">.*?</td>', catalog, re.S)
    assert cell is not None and "data-stale" in cell.group(0)

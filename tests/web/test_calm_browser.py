"""The calmer ranking in Chromium: at 1440×900 the first rows are whole without scrolling
the table sideways; on a 390 px phone nothing scrolls sideways, a row's "Why" open; a
changed question compares itself with the one before."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)
from tests.web.test_pages_browser import DESKTOP, PHONE, no_sideways_scroll

pytestmark = pytest.mark.browser

# the grad student buying one card for QLoRA; and a training job priced both ways
BUY_Q = "/recommendations?preset=llama-3-8b&task=fine-tuning&peft=qlora&acquisition=buy"
EITHER_Q = "/recommendations?preset=resnet-50&task=training&acquisition=either"


def _page(browser: Browser, watch: Any, server: str, size: Any) -> Iterator[Page]:
    context = browser.new_context(base_url=server, viewport=size)
    pg = watch.attach(context.new_page())
    pg.set_default_timeout(60_000)
    yield pg
    context.close()


@pytest.fixture
def desktop(browser: Browser, watch: Any, server: str) -> Iterator[Page]:
    yield from _page(browser, watch, server, DESKTOP)


@pytest.fixture(params=["desktop", "phone"])
def view(
    request: pytest.FixtureRequest, browser: Browser, watch: Any, server: str
) -> Iterator[Page]:
    yield from _page(browser, watch, server, DESKTOP if request.param == "desktop" else PHONE)


@pytest.mark.parametrize("url", [BUY_Q, EITHER_Q])
def test_first_rows_whole_at_1440_without_sideways_scroll(desktop: Page, url: str) -> None:
    pg = desktop
    pg.goto(url)
    wrap = pg.locator("[data-scroll-wrap]").first
    assert wrap.evaluate("w => w.scrollWidth <= w.clientWidth + 1"), "the table scrolls sideways"
    edge = wrap.evaluate("w => w.getBoundingClientRect().right")
    for rank in (1, 2, 3):
        row = pg.locator(f"tr[data-rank='{rank}']")
        assert row.is_visible()
        box = row.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= edge + 1
    # the column that explains the order is on screen, with the price of the asked basis
    assert pg.locator("th[data-score-head]").is_visible()
    if "acquisition=buy" in url:
        assert pg.locator("th[data-rent-head]").count() == 0
        assert pg.locator("th[data-buy-head]").is_visible()
    # the three rows together fit one screen: nothing in a cell runs to many lines
    top = pg.locator("tr[data-rank='1']").bounding_box()
    third = pg.locator("tr[data-rank='3'] + tr.explain-row").bounding_box()
    assert top and third and third["y"] + third["height"] - top["y"] <= DESKTOP["height"]


@pytest.mark.parametrize("url", [BUY_Q, EITHER_Q])
def test_phone_never_scrolls_sideways_with_why_open(view: Page, url: str) -> None:
    view.goto(url)
    no_sideways_scroll(view)
    why = view.locator("details[data-explain]").first
    why.locator("summary").click()
    assert why.locator("[data-offer-details]").count() <= 1
    no_sideways_scroll(view)


def test_instance_and_verdict_are_one_click_away(desktop: Page) -> None:
    pg = desktop
    pg.goto(EITHER_Q)
    row = pg.locator("tr[data-rank] td[data-offer]:has([data-offer-provider])").first
    assert row.is_visible()
    rank = row.evaluate("td => td.closest('tr').dataset.rank")
    why = pg.locator(f"#rec-{rank} + tr details[data-explain]")
    name = why.locator("[data-offer-name]")
    assert not name.is_visible()
    why.locator("summary").click()
    assert name.is_visible()
    provider = row.locator("[data-offer-provider]").inner_text()
    assert name.inner_text().startswith("Rent ") and provider in name.inner_text()


def test_compare_with_the_previous_question(view: Page) -> None:
    pg = view
    pg.goto(BUY_Q)
    pg.locator("[data-change-question]").click()
    pg.wait_for_url(re.compile(r"/\?.*prev="))
    pg.select_option("#f-objective", "fastest")
    pg.get_by_role("button", name="Recommend GPUs").first.click()
    pg.wait_for_url(re.compile(r"/recommendations\?.*prev="))
    link = pg.locator("[data-compare-link]")
    assert link.is_visible()
    link.click()
    pg.wait_for_url(re.compile(r"compare=1"))
    diff = pg.locator("table[data-compare-diff]")
    assert diff.is_visible()
    text = diff.inner_text()
    assert re.search(r"Rank by\s+Balanced\s+Fastest", text), text
    assert "Top pick" in text and "Throughput" in text and "Price" in text
    # the previous answer is a link away
    assert pg.locator("table[data-compare-diff] th a").get_attribute("href", timeout=5000)
    no_sideways_scroll(pg)


SERVING_Q = "/recommendations?preset=llama-3-70b&task=serving&concurrent_requests=50"


@pytest.mark.parametrize("url", [BUY_Q, EITHER_Q, SERVING_Q])
def test_phone_why_tables_keep_each_label_beside_its_figure(view: Page, url: str) -> None:
    """The memory breakdown, time per step and cost inside a row's "Why" keep each name beside
    its figure on a phone: a line's name and figure share one line (name–figure lists, dl.kv,
    since the forty-second session; tables before)."""
    view.goto(url)
    # the serving page's "Why" is its own details; the others' is the first data-explain
    why = view.locator("details[data-serving-why], details[data-explain]").first
    why.locator("> summary").click()
    rows = why.locator("dl.kv dt")
    assert rows.count() >= 3  # memory breakdown (and time per step) at least
    tops = rows.evaluate_all(
        "ts => ts.map(t => [t, t.nextElementSibling].map(c => "
        "Math.round(c.getBoundingClientRect().top)))"
    )
    stacked = [t for t in tops if len(set(t)) > 1]
    assert not stacked, f"cells of a row stacked: {stacked[:3]}"

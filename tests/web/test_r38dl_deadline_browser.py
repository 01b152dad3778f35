"""r38 audit of issue 23's deadline in Chromium: a row's "may miss" word sits in its time
cell, visible without opening the row's "Why", and the ranking still fits 1440 px without
sideways scrolling; on a phone nothing scrolls sideways."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.support import browser_page
from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)
from tests.web.test_pages_browser import DESKTOP, PHONE

pytestmark = pytest.mark.browser

ASK = "/recommendations?preset=resnet-50&task=training&max_hours=24&objective=cheapest&acquisition=rent"


@pytest.fixture(params=["desktop", "phone"])
def view(
    request: pytest.FixtureRequest,
    browser: Browser,  # noqa: F811
    watch: Any,  # noqa: F811
    server: str,  # noqa: F811
) -> Iterator[Page]:
    size = DESKTOP if request.param == "desktop" else PHONE
    with browser_page(browser, watch, server, size) as pg:
        yield pg


def test_the_may_miss_word_is_visible_in_the_row_and_the_page_fits(view: Page) -> None:
    view.goto(ASK)
    badge = view.locator("tr[data-rank='1'] [data-may-miss]")
    assert badge.is_visible()
    assert badge.inner_text().startswith("may miss 24 h: up to ")
    assert view.locator("[data-deadline-rule]").is_visible()
    sw, width = view.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert sw <= width
    if view.viewport_size and view.viewport_size["width"] >= 1440:
        wrap = view.locator("[data-scroll-wrap]").first
        assert wrap.evaluate("w => w.scrollWidth <= w.clientWidth + 1"), "table scrolls sideways"

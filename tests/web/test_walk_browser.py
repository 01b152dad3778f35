"""A new user's walk in Chromium (session 14), at 1440×900 and 390×844: what the pages look
like, not only what they say."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)
from tests.web.test_pages_browser import no_sideways_scroll, view  # noqa: F401

pytestmark = pytest.mark.browser

NO_ANSWER = (
    "/recommendations?preset=llama-3.1-70b&task=fine-tuning&peft=none&acquisition=buy"
    "&max_purchase_usd=300"
)


def test_on_a_phone_each_excluded_reason_reads_at_full_width(view: Page) -> None:  # noqa: F811
    # Three columns at 390 px left the reason about 70 px wide: "needs / 658.9 GB / on one /
    # GPU; ..." a dozen lines per group. On a phone the reason now spans the list.
    view.goto(NO_ANSWER)
    table = view.locator("table[data-excluded]")
    assert table.is_visible()  # an empty answer opens the list
    width = table.bounding_box()["width"]  # type: ignore[index]
    reasons = table.locator("td.src")
    assert reasons.count() > 3
    phone = (view.viewport_size or {"width": 0})["width"] < 720
    for i in range(3):
        box = reasons.nth(i).bounding_box()
        assert box is not None
        if phone:
            assert box["width"] > 0.6 * width, (box["width"], width)
    no_sideways_scroll(view)

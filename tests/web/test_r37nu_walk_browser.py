"""New user's walk (thirty-seventh session), as a person fills the form on a phone and a
desktop: a student's first ResNet-50 card under $500 that must finish within a day, and
Llama 3 70B served to 20 users. Each answer stays within the screen's width with no console
error; the memory banner is headed for what it holds (a 70B serving answer's "Before adding
cards" had stood over "Raise Most GPUs from 8 to 16"); and the missed day names the cheapest
card past the budget that meets it, in the form's words, not 8 × H200 NVL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser


@pytest.fixture(params=[390, 1440], ids=["phone", "desktop"])
def sized(
    request: pytest.FixtureRequest,
    browser: Browser,  # noqa: F811
    watch: Any,  # noqa: F811
    server: str,  # noqa: F811
) -> Iterator[Page]:
    context = browser.new_context(base_url=server, viewport={"width": request.param, "height": 900})
    p = watch.attach(context.new_page())
    p.set_default_timeout(60_000)
    yield p
    context.close()


def _ask(pg: Page, fields: dict[str, str]) -> None:
    pg.goto("/")
    pg.evaluate("document.querySelectorAll('form details').forEach(d => d.open = true)")
    for name, value in fields.items():
        sel = f"[name='{name}']"
        if pg.eval_on_selector(sel, "e => e.tagName") == "SELECT":
            pg.select_option(sel, value)
        else:
            pg.fill(sel, value)
    pg.locator("form[data-question-form] button[type=submit]").first.click()
    pg.wait_for_url("**/recommendations?**")
    width = pg.evaluate("document.documentElement.clientWidth")
    assert pg.evaluate("document.documentElement.scrollWidth") <= width


def test_the_students_missed_day_names_the_cheapest_card_that_meets_it(sized: Page) -> None:
    _ask(
        sized,
        {
            "preset": "resnet-50",
            "task": "training",
            "acquisition": "buy",
            "max_purchase_usd": "$500",
            "max_hours": "1 day",
        },
    )
    would = sized.locator("li", has_text="a faster card:").first.inner_text()
    assert "to buy)" in would and "the cheapest that finishes in time" in would, would
    assert "Most to spend buying (USD)" in would and "max_purchase_usd" not in would, would
    assert "H200" not in would, would


def test_the_70b_serving_banner_says_what_it_holds(sized: Page) -> None:
    _ask(
        sized,
        {
            "preset": "llama-3-70b",
            "task": "serving",
            "acquisition": "rent",
            "concurrent_requests": "20",
        },
    )
    banner = sized.locator("[data-advice] strong").first.inner_text()
    assert banner == "How the job fits in memory", banner

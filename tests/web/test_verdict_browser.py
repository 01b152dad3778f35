"""The verdict first: on a desktop and on a phone the answer's one sentence is on the first
view, and opening a row's "Why" never makes the page scroll sideways."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)
from tests.web.test_pages_browser import PHONE, no_sideways_scroll, view  # noqa: F401

pytestmark = pytest.mark.browser

QUESTIONS = (
    "/recommendations?preset=llama-3-8b&task=inference&acquisition=rent",
    "/recommendations?preset=resnet-50&acquisition=buy",
)


@pytest.mark.parametrize("url", QUESTIONS)
def test_the_verdict_is_on_the_first_screen(view: Page, url: str) -> None:
    view.goto(url)
    verdict = view.locator("[data-answer-verdict]")
    box = verdict.bounding_box()
    assert box is not None
    height = view.viewport_size["height"] if view.viewport_size else 0
    assert box["y"] + box["height"] <= height, (box, height)
    sentence = verdict.locator(".lead").inner_text()
    top = view.locator("tr[data-rank]").first.locator("td").nth(1).inner_text()
    assert sentence.startswith("Pick ")
    # the sentence names the first row's card
    assert top.split("\n")[0].split(" × ")[-1].strip()[:12] in sentence, (top, sentence)
    assert "Assuming" in verdict.inner_text()


def test_opening_why_keeps_the_phone_page_narrow(browser: Browser, watch: Any, server: str) -> None:
    context = browser.new_context(base_url=server, viewport=PHONE)
    pg = watch.attach(context.new_page())
    pg.goto(QUESTIONS[0])
    for summary in pg.locator("details[data-explain] > summary").all()[:3]:
        summary.click()
        no_sideways_scroll(pg)
    context.close()


def test_the_methodology_for_users_is_short_on_a_phone(
    browser: Browser, watch: Any, server: str
) -> None:
    context = browser.new_context(base_url=server, viewport=PHONE)
    pg = watch.attach(context.new_page())
    pg.goto("/methodology")
    assert pg.locator("h1").first.inner_text() == "How to read an answer"
    height = pg.evaluate("document.scrollingElement.scrollHeight")
    # a reader's page, not the maintainers' 46,000 px of notes
    assert height < 15_000, height
    no_sideways_scroll(pg)
    pg.locator("a[href='/methodology/details']").first.click()
    pg.wait_for_url("**/methodology/details")
    no_sideways_scroll(pg)
    context.close()

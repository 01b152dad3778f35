"""A new user's review in Chromium: Back keeps what was typed; the phone sees the column
that matters on a GPU's page."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.web.test_browser import browser, page, server, watch  # noqa: F401  (fixtures)
from tests.web.test_pages_browser import PHONE, no_sideways_scroll

pytestmark = pytest.mark.browser


def test_back_after_submitting_keeps_the_typed_numbers(page: Page) -> None:  # noqa: F811
    # autocomplete="off" on the generated inputs stopped Chromium restoring them on Back
    page.goto("/")
    page.select_option("#f-preset", "resnet-50")
    page.select_option("#f-task", "training")
    typed = {"epochs": "3", "batch_size": "64", "max_purchase_usd": "$1,500"}
    for name, text in typed.items():
        field = page.locator(f"#f-{name}")
        if not field.is_visible():
            field.evaluate("el => { for (let d = el.closest('details'); d; "
                           "d = d.parentElement.closest('details')) d.open = true; }")  # fmt: skip
        field.fill(text)
    page.locator("form[data-question-form] [type=submit]").first.click()
    page.wait_for_url("**/recommendations**")
    page.go_back()
    page.wait_for_load_state("load")
    for name, text in typed.items():
        assert page.locator(f"#f-{name}").input_value() == text, name


def test_the_phone_sees_the_throughput_of_what_fits(
    browser: Browser,  # noqa: F811
    watch: Any,  # noqa: F811
    server: str,  # noqa: F811
) -> None:
    context = browser.new_context(base_url=server, viewport=PHONE)
    pg = watch.attach(context.new_page())
    try:
        pg.goto("/gpus/rtx-3060-12gb")
        no_sideways_scroll(pg)
        cells = pg.locator("[data-fit-table] td[data-label='Typical throughput']")
        assert cells.count() > 0
        for i in range(min(3, cells.count())):
            box = cells.nth(i).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    finally:
        context.close()

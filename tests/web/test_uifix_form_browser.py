"""The form's script keeps the blank "Activation checkpointing" option saying what the
engine will do as the preset, task, adapters or model family change (Playwright driving
Debian's chromium, as every browser test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

# The browser guard (skip or fail without chromium), the live server and the watch on
# console errors and foreign requests are the ones every browser test uses.
from tests.web.test_browser import Watch, browser, server, watch  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser


@pytest.fixture
def page(browser: Browser, watch: Watch, server: str) -> Iterator[Page]:  # noqa: F811 (fixtures)
    context = browser.new_context(base_url=server, viewport={"width": 1280, "height": 900})
    pg = watch.attach(context.new_page())
    pg.set_default_timeout(30_000)
    yield pg
    context.close()


def test_the_label_follows_the_task_preset_and_adapters(page: Page) -> None:
    page.goto("/")
    blank = page.locator("#f-gradient_checkpointing option[data-default-option]")
    page.select_option("#f-preset", "llama-3-8b")
    page.select_option("#f-task", "training")
    assert blank.text_content() == "No (preset)"
    page.select_option("#f-task", "fine-tuning")
    assert blank.text_content() == "Yes (fine-tuning default)"
    page.select_option("#f-preset", "bert-base")
    assert blank.text_content() == "No (preset)"
    page.select_option("#f-peft", "lora")
    assert blank.text_content() == "Yes (fine-tuning default)"
    page.select_option("#f-peft", "")
    page.select_option("#f-preset", "")
    page.select_option("#f-family", "decoder")
    assert blank.text_content() == "Yes (fine-tuning default)"
    page.select_option("#f-task", "training")
    assert blank.text_content() == "Default"

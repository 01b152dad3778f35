"""The form's script keeps the blank batch size saying what the engine assumes as the task
changes (Playwright driving Debian's chromium, as every browser test): an inference preset
fine-tuned reads Alpaca's 128, not the preset's 1."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

# the browser, server and console watch every browser test uses, and the form tests' page
from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)
from tests.web.test_uifix_form_browser import page  # noqa: F401  (fixture)

pytestmark = pytest.mark.browser


def test_the_blank_batch_follows_the_task(page: Page) -> None:  # noqa: F811 (fixture)
    page.goto("/")
    batch = page.locator("#f-batch_size")
    blank_precision = page.locator("#f-precision option[data-default-option]")
    page.select_option("#f-preset", "llama-3.1-8b")
    assert batch.get_attribute("placeholder") == "1"
    said = blank_precision.text_content()
    page.select_option("#f-task", "fine-tuning")
    assert batch.get_attribute("placeholder") == "128"
    # a task change rewrites placeholders only, not the selects' blank words
    assert blank_precision.text_content() == said
    page.select_option("#f-task", "inference")
    assert batch.get_attribute("placeholder") == "1"
    page.select_option("#f-task", "")
    assert batch.get_attribute("placeholder") == "1"
    # a preset picked under a task reads that task's batch
    page.select_option("#f-task", "fine-tuning")
    page.select_option("#f-preset", "qwen3-8b")
    assert batch.get_attribute("placeholder") == "128"
    page.select_option("#f-preset", "mistral-7b")  # a fine-tuning preset: its own batch
    assert batch.get_attribute("placeholder") == "4"

"""Issue 24's journeys in Chromium, at 1440×900 and 390×844: the researcher measuring their
machine sees the workers before Run; the CTO serving a 70B model finds a deploy block to copy;
the grad student's fine-tuning answer has its time to finish filled and memory in one unit;
the engineer pasting a 90 KB config.json gets an answer, or the form back naming the line."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page

from tests.web.test_big_question import _big_config
from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)
from tests.web.test_pages_browser import no_sideways_scroll, view  # noqa: F401

pytestmark = pytest.mark.browser


def test_the_device_page_says_who_would_run_a_benchmark(view: Page) -> None:
    view.goto("/device")
    workers = view.locator("[data-workers]")
    assert workers.is_visible()
    listed = workers.locator("[data-worker]")
    if listed.count() == 0:  # nobody would take a run: the page says how to start a worker
        assert "gpu-advisor worker" in workers.inner_text()
    for i in range(listed.count()):
        w = listed.nth(i)
        state = w.get_attribute("data-worker-state") or ""
        assert state in ("online", "busy", "offline")
        assert state in w.inner_text()
    if not workers.locator("[data-worker-state='online'], [data-worker-state='busy']").count():
        assert view.locator("[data-no-worker]").is_visible()
    no_sideways_scroll(view)


def test_a_serving_answer_has_a_deploy_block_to_copy(view: Page) -> None:
    view.goto(
        "/recommendations?preset=llama-3.3-70b&task=serving&concurrent_requests=50&acquisition=rent"
    )
    why = view.locator("[data-serving-why]").first
    why.locator(":scope > summary").click()
    command = why.locator("[data-deploy-command]")
    assert command.is_visible()
    text = command.inner_text()
    assert text.startswith(("vllm serve", "python -m sglang", "trtllm-serve", "llama-server"))
    assert why.get_by_role("button", name="Copy command").is_visible()
    no_sideways_scroll(view)


def test_fine_tuning_rows_have_a_time_to_finish_and_one_memory_unit(view: Page) -> None:
    view.goto("/recommendations?preset=llama-3-8b&task=fine-tuning&peft=qlora&acquisition=buy")
    rows = view.locator("tr[data-rank]")
    assert rows.count() > 0
    for i in range(min(5, rows.count())):
        finish = rows.nth(i).locator("[data-label='Time to finish']").inner_text()
        assert finish.strip() not in ("", "—"), finish
    # a 16 GB card reads 16 GiB, what its vendor's "GB" is
    memory = " ".join(view.locator("[data-label='Memory per GPU']").all_inner_texts())
    assert "17.2 GiB" not in memory and re.search(r"/ (8|10|11|12|16|20|24|32|48) GiB", memory)


def _pasted(view: Page, text: str) -> None:
    view.goto("/")
    view.select_option("#f-preset", "")
    view.select_option("#f-task", "inference")
    view.locator("details[data-group='shape'] > summary").click()
    box = view.locator("#f-hf_config")
    assert box.is_visible()
    # A paste lands in one input event; typing 90 KB key by key is not what a user does.
    box.evaluate("(el, text) => { el.value = text; el.dispatchEvent(new Event('input')); }", text)
    view.locator("form[data-question-form] [type=submit]").first.click()
    view.wait_for_load_state("domcontentloaded")


def test_a_pasted_big_config_json_is_answered_in_the_browser(view: Page) -> None:
    _pasted(view, _big_config())
    assert view.locator("[data-ranking]").first.is_visible()
    assert view.locator("[data-share-too-long]").count() == 1
    assert "Invalid HTTP request" not in view.content()
    no_sideways_scroll(view)


def test_a_broken_big_config_comes_back_with_line_and_column(view: Page) -> None:
    broken = _big_config().replace('"hidden_size": 4096,', '"hidden_size": 4096', 1)
    _pasted(view, broken)
    box = view.locator("#f-hf_config")
    assert box.get_attribute("aria-invalid") == "true"
    message = view.locator("#f-hf_config-err")
    text = message.inner_text()
    assert "line " in text and "column " in text, text
    # nothing the user pasted is lost
    assert "LABEL_5999" in box.input_value()
    no_sideways_scroll(view)

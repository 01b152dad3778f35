"""New user's walk (thirty-sixth session): a researcher pretraining a 1B model picked "Custom —
describe my model". The blank "Model family" kept the first preset's words, "Decoder LLM (GPT,
Llama) (preset)", so it looked chosen; the form then refused it ("give a preset or model
family"), and, once a family was picked, refused again for the layers and hidden size the
note over the form had not named ("give at least the task, the model family and its size").
Picking Custom now puts back each blank's words without a preset, the family's saying it must
be chosen, and the note names what a custom model needs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)
from tests.web.test_pages_browser import SELECT_ROOM

pytestmark = pytest.mark.browser


@pytest.fixture
def pg(browser: Browser, watch: Any, server: str) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context(base_url=server, viewport={"width": 1280, "height": 900})
    p = watch.attach(context.new_page())
    p.set_default_timeout(60_000)
    yield p
    context.close()


def _blank(pg: Page, name: str) -> str:
    return pg.locator(f"select[name='{name}'] option[data-default-option]").inner_text()


def test_custom_model_blanks_say_no_preset(pg: Page) -> None:
    pg.goto("/")
    # the page opens on a preset, whose values the blanks name
    assert _blank(pg, "family").endswith("(preset)")
    pg.select_option("#f-preset", "")
    assert _blank(pg, "family") == "Choose one (no preset)"
    for name in ("task", "precision", "optimizer", "quantization", "runtime"):
        assert "(preset)" not in _blank(pg, name), (name, _blank(pg, name))
    assert _blank(pg, "runtime") == "Default: Picked for the job"
    note = pg.locator("[data-preset-note]").inner_text()
    assert "Layers" in note and "Hidden size" in note and "GFLOPs" in note, note
    # and back on a preset, its values again
    pg.select_option("#f-preset", "resnet-50")
    assert _blank(pg, "family") == "Convolutional network (preset)"


def test_a_custom_decoder_as_the_note_says_is_answered_first_time(pg: Page) -> None:
    """What the note names is enough: the family, the size, the layers and the hidden size."""
    pg.goto("/")
    pg.select_option("#f-preset", "")
    pg.select_option("#f-task", "training")
    pg.select_option("#f-family", "decoder")
    pg.fill("#f-params", "1B")
    pg.evaluate("document.querySelectorAll('form details').forEach(d => d.open = true)")
    pg.fill("#f-layers", "16")
    pg.fill("#f-hidden_size", "2048")
    pg.fill("#f-max_hours", "48h")
    pg.select_option("#f-acquisition", "rent")
    pg.locator("form[data-question-form] button[type=submit]").first.click()
    pg.wait_for_url("**/recommendations?**")
    assert pg.locator("#form-errors").count() == 0
    assert pg.locator("h1").inner_text().startswith("GPUs for a 1B decoder model")


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


def test_the_custom_blanks_read_whole(sized: Page) -> None:
    """The words Custom puts back, and the runtime list's "llama.cpp (Ollama, LM Studio)", fit
    their select boxes on a phone and in the desktop grid, as every other choice does."""
    sized.goto("/")
    sized.select_option("#f-preset", "")
    sized.select_option("#f-task", "inference")
    selects = {s["name"]: s for s in sized.evaluate(SELECT_ROOM)}
    assert "llama.cpp (Ollama, LM Studio)" in sized.locator("#f-runtime").inner_text()
    for name in ("family", "runtime", "task", "precision"):
        assert selects[name]["cut"] == [], selects[name]

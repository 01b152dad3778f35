"""The answer pages this session's words changed, drawn at 1440 and 390 px: the memory chart
with every card on scale, the deadline notice, the verdict's runner-up, and no horizontal
overflow."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

PAGES = [
    "/recommendations?preset=llama-3-8b&task=inference&precision=int4",
    "/recommendations?preset=resnet-50&task=training&dataset_samples=1.28M&epochs=90"
    "&max_hours=24&acquisition=rent&objective=cheapest",
]


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


@pytest.mark.parametrize("path", PAGES, ids=["int4", "deadline"])
def test_the_changed_words_fit_the_page(sized: Page, path: str) -> None:
    sized.goto(path)
    chart = sized.locator("figure[data-bar-chart]", has_text="Memory needed vs available")
    assert chart.count() == 1
    assert chart.locator(".badge", has_text="off scale").count() == 0
    verdict = sized.locator("body").inner_text()
    assert "Runner-up: " in verdict
    if "max_hours" in path:
        assert "Finish within 24 h:" in verdict
    sw, width = sized.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert sw <= width, (path, sw, width)

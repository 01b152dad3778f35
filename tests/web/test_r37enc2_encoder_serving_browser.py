"""The serving page for an encoder in a browser (issue 21), at a desktop's 1440 px and a phone's
390 px: BERT-large's shape (BGE-large's) on TEI for 64 clients within 200 ms. Its table shows
latency, embeddings/s and $ per million embeddings, and the page does not scroll sideways."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.support import browser_page
from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

Q = (
    "/recommendations?preset=bert-large&task=serving&concurrent_requests=64&prompt_tokens=256"
    "&ttft_ms_target=200&acquisition=rent"
)


@pytest.fixture(params=[1440, 390])
def view(
    request: pytest.FixtureRequest,
    browser: Browser,  # noqa: F811
    watch: Any,  # noqa: F811
    server: str,  # noqa: F811
) -> Iterator[Page]:
    width = int(request.param)
    with browser_page(browser, watch, server, {"width": width, "height": 900}) as pg:
        yield pg


def test_an_encoders_serving_page(view: Page) -> None:
    view.goto(Q)
    banner = view.locator("[data-serving-banner='met']")
    assert banner.is_visible()
    assert "latency ≤ 200 ms" in banner.inner_text()
    row = view.locator("tr[data-serving-row]").first
    assert row.is_visible()
    latency = row.locator("[data-latency]").inner_text()
    assert latency.strip().endswith("ms"), latency
    assert row.locator("[data-embeddings]").is_visible()
    assert row.locator("[data-usd-embeddings]").is_visible()
    assert row.locator("[data-itl]").count() == 0
    table = view.locator("table[data-serving-table]").inner_text()
    assert "TTFT" not in table and "ITL" not in table and "Output tokens" not in table
    sw, width = view.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert sw <= width, f"the encoder's serving page scrolls sideways: {sw} > {width}"

"""New user's walk (thirty-fifth session), serving 70B to 20 users on a 390 px phone: each
serving row is a card, but its Rent and Buy cells kept the desktop table's 9rem limit, so the
offer ("primeintellect · 8× A5000 24GB via runpod (64 vCPU, 232 GB RAM)", its price, its
per-token share) read one or two words a line down half the card. They take the card's width."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

Q = "/recommendations?preset=llama-3.3-70b&task=serving&concurrent_requests=20&acquisition=rent"


@pytest.fixture
def phone(browser: Browser, watch: Any, server: str) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context(base_url=server, viewport={"width": 390, "height": 844})
    pg = watch.attach(context.new_page())
    pg.set_default_timeout(60_000)
    yield pg
    context.close()


def test_a_serving_cards_offer_takes_the_cards_width(phone: Page) -> None:
    phone.goto(Q)
    row = phone.locator("tr[data-serving-row]").first
    card = row.bounding_box()
    assert card is not None
    for cell in row.locator("td.offer-cell").all():
        box = cell.bounding_box()
        assert box is not None
        # the card's width less its padding, not a 9rem (144 px) column
        assert box["width"] > 0.8 * card["width"], (cell.inner_text()[:80], box, card)
    # the line over the cards says what TTFT is, in the phone's view
    intro = phone.locator("section[data-serving] p.muted.small", has_text="time to first token")
    assert intro.first.is_visible()
    sw, width = phone.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert sw <= width, f"the serving page scrolls sideways: {sw} > {width}"

"""Accessibility audit (thirty-third session, WCAG 2.1 AA) in Chromium: what only a rendered
page shows.

- On a 390 px phone a row's "Why" tables scroll sideways on their own, and none could take
  the keyboard's focus: a keyboard user could not read their right-hand columns (2.1.1; axe's
  scrollable-region-focusable, which the page-wide scan misses with the "Why" folded).
- The focus ring and a placeholder as rendered: 3:1 and 4.5:1 on the page (1.4.11, 1.4.3).
- The question asked with the keyboard alone (2.1.1), and each page's structure: its
  language, one h1, no skipped heading level, every control labelled, a title of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.web.test_browser import browser, server, watch  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

AXE = Path(__file__).parent / "vendor" / "axe-core-4.11.0" / "axe.min.js"
INFERENCE = "/recommendations?preset=llama-3-8b&task=inference"
SERVING = "/recommendations?preset=llama-3-8b&task=serving&concurrent_requests=20"


def _page(b: Browser, w: Any, base: str, width: int, **kw: Any) -> Iterator[Page]:
    context = b.new_context(
        base_url=base, viewport={"width": width, "height": 900}, bypass_csp=True, **kw
    )
    pg = w.attach(context.new_page())
    pg.set_default_timeout(60_000)
    yield pg
    context.close()


@pytest.fixture
def phone(browser: Browser, watch: Any, server: str) -> Iterator[Page]:  # noqa: F811
    yield from _page(browser, watch, server, 390)


@pytest.fixture
def desktop(browser: Browser, watch: Any, server: str) -> Iterator[Page]:  # noqa: F811
    yield from _page(browser, watch, server, 1440)


# every element that scrolls sideways, and whether Tab reaches it or something in it
SCROLLERS = """() => [...document.querySelectorAll('main *')].filter(el => {
  const s = getComputedStyle(el);
  return /auto|scroll/.test(s.overflowX) && el.scrollWidth > el.clientWidth + 1
    && el.checkVisibility();  // a folded details' content has a width, not a place
}).map(el => ({
  html: el.outerHTML.slice(0, 80),
  focusable: el.tabIndex >= 0 || !!el.querySelector(
    'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])'),
}))"""


@pytest.mark.parametrize("url", [INFERENCE, SERVING])
def test_a_why_table_that_scrolls_on_a_phone_takes_the_keyboard(phone: Page, url: str) -> None:
    phone.goto(url)
    for summary in phone.locator("tr.explain-row summary").all()[:4]:
        summary.click()
    # the page's script marks a table on the details' toggle event
    phone.locator("tr.explain-row table[tabindex='0']").first.wait_for(timeout=10_000)
    scrollers = phone.evaluate(SCROLLERS)
    tables = [s for s in scrollers if s["html"].startswith("<table")]
    assert tables, "no 'Why' table scrolls at 390 px: the test no longer covers the case"
    assert [s["html"] for s in scrollers if not s["focusable"]] == []
    # and the keys do scroll it
    table = phone.locator("tr.explain-row table[tabindex='0']").first
    table.focus()
    phone.keyboard.press("ArrowRight")
    phone.wait_for_function("t => t.scrollLeft > 0", arg=table.element_handle())
    phone.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    found = phone.evaluate(
        "async () => (await axe.run(document, {runOnly: ['scrollable-region-focusable']}))"
        ".violations.map(v => v.nodes.length)"
    )
    assert found == []


def _luminance(rgb: list[float]) -> float:
    def channel(v: float) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(rgb[0]) + 0.7152 * channel(rgb[1]) + 0.0722 * channel(rgb[2])


def _contrast(a: list[float], b: list[float]) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


RGB = "c => c.match(/[\\d.]+/g).slice(0, 4).map(Number)"
# an element's colour as drawn: its own, or (transparent) its nearest painted ancestor's
BACKGROUND = (
    "el => { for (let e = el; e; e = e.parentElement) {"
    " const c = getComputedStyle(e).backgroundColor.match(/[\\d.]+/g).map(Number);"
    " if (c.length < 4 || c[3] > 0) return c; } return [255, 255, 255]; }"
)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_focus_ring_and_placeholder_as_drawn(
    browser: Browser,  # noqa: F811  (fixtures)
    watch: Any,  # noqa: F811
    server: str,  # noqa: F811
    scheme: str,
) -> None:
    for pg in _page(browser, watch, server, 1440, color_scheme=scheme):
        pg.goto("/")
        pg.keyboard.press("Tab")  # the skip link
        pg.keyboard.press("Tab")  # the brand, on the header
        brand = pg.locator(":focus")
        style = brand.evaluate(
            "e => { const s = getComputedStyle(e); return [s.outlineStyle, s.outlineWidth,"
            " s.outlineColor]; }"
        )
        assert style[0] == "solid" and float(style[1].rstrip("px")) >= 2, style
        ring = pg.evaluate(RGB, style[2])
        behind = brand.evaluate(BACKGROUND)
        assert _contrast(ring, behind) >= 3, (ring, behind)
        # a placeholder shows the preset's value: read as text is
        field = pg.locator("#f-batch_size")
        colour, opacity = field.evaluate(
            "e => { const s = getComputedStyle(e, '::placeholder'); return [s.color, s.opacity]; }"
        )
        fg = pg.evaluate(RGB, colour)[:3]
        bg = field.evaluate(BACKGROUND)[:3]
        shown = [fg[i] * float(opacity) + bg[i] * (1 - float(opacity)) for i in range(3)]
        assert _contrast(shown, bg) >= 4.5, (colour, opacity, bg)
        border = pg.evaluate(RGB, field.evaluate("e => getComputedStyle(e).borderTopColor"))
        around = field.evaluate(f"e => ({BACKGROUND})(e.parentElement)")
        assert _contrast(border[:3], around[:3]) >= 3


def test_the_question_is_asked_with_the_keyboard_alone(desktop: Page) -> None:
    pg = desktop
    pg.goto("/")
    pg.keyboard.press("Tab")
    assert pg.evaluate("document.activeElement.textContent") == "Skip to content"
    for _ in range(30):  # on through the header to the first field
        pg.keyboard.press("Tab")
        if pg.evaluate("document.activeElement.id") == "f-preset":
            break
    assert pg.evaluate("document.activeElement.id") == "f-preset"
    target = pg.locator("#f-preset option", has_text="Llama 3 8B").first.get_attribute("value")
    for _ in range(80):  # a closed select steps through its options with the arrow keys
        if pg.evaluate("document.activeElement.value") == target:
            break
        pg.keyboard.press("ArrowDown")
    assert pg.evaluate("document.activeElement.value") == target
    for _ in range(10):
        pg.keyboard.press("Tab")
        if pg.evaluate("document.activeElement.id") == "f-batch_size":
            break
    assert pg.evaluate("document.activeElement.id") == "f-batch_size"
    pg.keyboard.type("4")
    with pg.expect_navigation():
        pg.keyboard.press("Enter")
    assert "/recommendations" in pg.url
    assert pg.locator("tr[data-rank='1']").count() == 1
    assert pg.locator("h1").inner_text().startswith("GPUs for Llama 3 8B")


STRUCTURE = """() => {
  const heads = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(h => +h.tagName[1]);
  const skips = heads.filter((l, i) => i > 0 && l > heads[i - 1] + 1);
  const unlabelled = [...document.querySelectorAll('input, select, textarea')]
    .filter(el => el.type !== 'hidden')
    .filter(el => !(el.labels && el.labels.length && el.labels[0].textContent.trim())
                  && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
    .map(el => el.outerHTML.slice(0, 80));
  const unnamedImages = [...document.querySelectorAll('img, svg')]
    .filter(el => !el.parentElement.closest('svg'))
    .filter(el => el.getAttribute('aria-hidden') !== 'true')
    .filter(el => !(el.getAttribute('alt') ?? el.getAttribute('aria-label')
                    ?? el.getAttribute('aria-labelledby')))
    .map(el => el.outerHTML.slice(0, 80));
  const vague = [...document.querySelectorAll('a[href]')]
    .map(a => (a.getAttribute('aria-label') || a.textContent).trim().toLowerCase())
    .filter(t => !t || ['here', 'link', 'click here', 'more', 'read more'].includes(t));
  const scopeless = [...document.querySelectorAll('th:not([scope])')].length;
  return {lang: document.documentElement.lang, h1: heads.filter(l => l === 1).length, skips,
          unlabelled, unnamedImages, vague, scopeless, title: document.title};
}"""

PAGES = [
    "/",
    INFERENCE,
    "/recommendations?preset=llama-3-70b&task=fine-tuning&peft=qlora&acquisition=buy"
    "&max_purchase_usd=3000",
    SERVING,
    f"{INFERENCE}&acquisition=buy&max_purchase_usd=300",
    f"{INFERENCE}&acquisition=buy&max_purchase_usd=100",
    f"{INFERENCE}&batch_size=-3",
    "/gpus",
    "/gpus/rtx-4090",
    "/compare?slugs=h100-sxm,rtx-4090&preset=llama-3-8b",
    "/methodology",
]


def test_every_page_is_structured_labelled_and_titled(desktop: Page) -> None:
    titles = {}
    for url in PAGES:
        desktop.goto(url)
        got = desktop.evaluate(STRUCTURE)
        assert got["lang"] == "en", url
        assert got["h1"] == 1, url
        assert got["skips"] == [], url
        assert got["unlabelled"] == [], url
        assert got["unnamedImages"] == [], url
        assert got["vague"] == [], url
        assert got["scopeless"] == 0, url
        titles[url] = got["title"]
    answers = [t for u, t in titles.items() if u.startswith(INFERENCE) and "batch_size" not in u]
    assert len(set(answers)) == len(answers), answers
    assert titles[f"{INFERENCE}&batch_size=-3"].startswith("Check your input")

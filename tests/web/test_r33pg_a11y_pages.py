"""Accessibility audit (thirty-third session, WCAG 2.1 AA), the parts a page's HTML or the
stylesheet shows without a browser:

- the colours app.css sets: body text 4.5:1 and the focus ring and a field's border 3:1
  against every background they sit on, light and dark (1.4.3, 1.4.11); the focus amber was
  1.8:1 on white, the fields' border 1.3:1, a placeholder (a preset's value) 3.95:1;
- the error summary's link to a group of checkboxes went nowhere (the fieldset had no id) and
  the boxes of an invalid group were not marked invalid (3.3.1);
- answers to one workload had one title whatever the answer (2.4.2);
- tables were named "Table (scrolls sideways on a small screen)", not by what they hold;
- compare said better or worse by colour alone (1.4.1).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.web.sample_report import sample_report

CSS = (Path(__file__).resolve().parents[2] / "static" / "css" / "app.css").read_text()


# ------------------------------------------------------------------------- the stylesheet


def _palette(dark: bool) -> dict[str, str]:
    light = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-f]{6})", CSS.split("@media")[0]))
    if not dark:
        return light
    block = re.search(r"prefers-color-scheme: dark\)\s*\{\s*:root\s*\{(.*?)\}", CSS, re.S)
    assert block is not None
    return {**light, **dict(re.findall(r"--([\w-]+):\s*(#[0-9a-f]{6})", block.group(1)))}


def _luminance(hex_colour: str) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# text colour on the backgrounds it is set on (.muted in cards, notes, the baseline row;
# badges; the verdict's measured/modelled words; the accent button)
TEXT_PAIRS = [
    ("text", "bg"),
    ("text", "warn-soft"),
    ("muted", "bg"),
    ("muted", "surface"),
    ("muted", "accent-soft"),
    ("muted", "warn-soft"),
    ("muted", "ok-soft"),
    ("muted", "bad-soft"),
    ("accent", "bg"),
    ("accent", "surface"),
    ("accent", "accent-soft"),
    ("accent", "warn-soft"),
    ("accent-ink", "accent"),
    ("ok", "ok-soft"),
    ("ok", "surface"),
    ("warn", "warn-soft"),
    ("warn", "surface"),
    ("bad", "bad-soft"),
    ("bad", "surface"),
]
BACKGROUNDS = ["bg", "surface", "accent-soft", "warn-soft", "ok-soft", "bad-soft"]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_text_colours_reach_4_5_to_1(dark: bool) -> None:
    p = _palette(dark)
    low = [(f, b, round(contrast(p[f], p[b]), 2)) for f, b in TEXT_PAIRS]
    assert [x for x in low if x[2] < 4.5] == []


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_focus_ring_stands_out_3_to_1_on_every_background(dark: bool) -> None:
    p = _palette(dark)
    assert re.search(r":focus-visible \{ outline: 3px solid var\(--focus\)", CSS)
    low = {b: round(contrast(p["focus"], p[b]), 2) for b in BACKGROUNDS}
    assert min(low.values()) >= 3, low


def _rule(selector_start: str) -> str:
    m = re.search(re.escape(selector_start) + r"[^{]*\{([^}]*)\}", CSS)
    assert m is not None, selector_start
    return m.group(1)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_a_fields_border_and_placeholder_can_be_seen(dark: bool) -> None:
    p = _palette(dark)
    fields = _rule("input[type=text], input[type=number]")
    assert "textarea" in re.search(r"input\[type=text\][^{]*", CSS).group(0)  # type: ignore[union-attr]
    border = re.search(r"border: 1px solid var\(--([\w-]+)\)", fields)
    assert border is not None
    # the field's fill is --bg inside a --surface fieldset: the border is its edge
    for around in ("bg", "surface"):
        assert contrast(p[border.group(1)], p[around]) >= 3, (border.group(1), around)
    # a placeholder shows a preset's value: body text, not faded below 4.5:1
    ph = _rule("input::placeholder")
    colour = re.search(r"color: var\(--([\w-]+)\)", ph)
    opacity = re.search(r"opacity: ([\d.]+)", ph)
    assert colour is not None and opacity is not None  # Firefox fades it (.54) unless told
    assert float(opacity.group(1)) == 1
    assert contrast(p[colour.group(1)], p["bg"]) >= 4.5


def test_no_focus_outline_is_removed_without_a_replacement() -> None:
    body = re.sub(r"/\*.*?\*/", "", CSS, flags=re.S)
    for m in re.finditer(r"([^{}]+)\{([^{}]*(?:outline:\s*(?:none|0)|all:\s*unset)[^{}]*)\}", body):
        for selector in (s.strip() for s in m.group(1).split(",")):
            if selector == "main:focus":
                continue  # tabindex=-1, the skip link's target: never reached by Tab
            base = selector.replace(":focus", "")
            assert re.search(re.escape(base) + r":focus-visible\s*\{[^}]*outline: \d", body), (
                selector
            )


# ------------------------------------------------------------------------------- the pages


def _get(client: TestClient, url: str, status: int = 200) -> str:
    r = client.get(url)
    assert r.status_code == status, (url, r.status_code)
    return r.text


def _ids(html: str) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', html))


def test_the_error_summary_reaches_a_checkbox_group_and_marks_it(read_client: TestClient) -> None:
    html = _get(
        read_client,
        "/recommendations?preset=llama-3-8b&task=inference&vendors=foo&batch_size=-3",
        422,
    )
    summary = re.search(
        r'<div class="notice bad" role="alert" id="form-errors".*?</div>', html, re.S
    )
    assert summary is not None
    targets = re.findall(r'href="#([^"]+)"', summary.group(0))
    assert "f-vendors" in targets and "f-batch_size" in targets
    ids = _ids(html)
    assert [t for t in targets if t not in ids] == []
    group = re.search(r'<fieldset id="f-vendors"[^>]*>(.*?)</fieldset>', html, re.S)
    assert group is not None
    assert 'aria-describedby="f-vendors-help f-vendors-err"' in group.group(0)
    boxes = re.findall(r"<input [^>]*>", group.group(1))
    assert boxes and all('aria-invalid="true"' in b for b in boxes)
    assert 'id="f-vendors-err"' in group.group(1)
    # a valid group is not marked
    ok = re.search(r'<fieldset id="f-segments"[^>]*>(.*?)</fieldset>', html, re.S)
    assert ok is not None and "aria-invalid" not in ok.group(1)


def _title(html: str) -> str:
    m = re.search(r"<title>([^<]*)</title>", html)
    assert m is not None
    return m.group(1)


def test_answers_to_one_workload_have_their_own_titles(read_client: TestClient) -> None:
    q = "/recommendations?preset=llama-3-8b&task=inference"
    full = _get(read_client, q)
    empty = _get(read_client, f"{q}&acquisition=buy&max_purchase_usd=100")
    count = re.search(r'<div class="k">GPUs that can run it</div><div class="v">(\d+)</div>', full)
    assert count is not None and int(count.group(1)) > 0
    assert (
        _title(full) == f"GPUs for Llama 3 8B inference: {count.group(1)} can run it · GPU Advisor"
    )
    assert _title(empty) == "GPUs for Llama 3 8B inference: none can run it · GPU Advisor"


PAGES = [
    "/recommendations?preset=llama-3-8b&task=inference&acquisition=buy&max_purchase_usd=300",
    "/recommendations?preset=llama-3-8b&task=serving&concurrent_requests=20",
    "/gpus/rtx-4090",
    "/compare?slugs=h100-sxm,rtx-4090&preset=llama-3-8b",
]


@pytest.mark.parametrize("url", PAGES)
def test_regions_and_tables_are_named_by_what_they_hold(read_client: TestClient, url: str) -> None:
    _named_regions(_get(read_client, url))


def _named_regions(html: str) -> None:
    ids = _ids(html)
    assert "scrolls sideways on a small screen" not in html
    for tag in re.findall(r'<div class="table-wrap[^"]*" role="region"[^>]*>', html):
        by = re.search(r'aria-labelledby="([^"]+)"', tag)
        assert (by and by.group(1) in ids) or re.search(r'aria-label="[^"]{6,}"', tag), tag
    # a region inside a section of the same name is two landmarks read alike (axe landmark-unique)
    names = re.findall(
        r'<(?:section|div class="table-wrap[^"]*" role="region")[^>]*aria-label(?:ledby)?="([^"]+)"',
        html,
    )
    assert len(names) == len(set(names)), names


@pytest.mark.parametrize("url", PAGES[2:])
def test_every_table_of_the_catalog_pages_has_a_name(read_client: TestClient, url: str) -> None:
    html = _get(read_client, url)
    ids = _ids(html)
    for m in re.finditer(r"<table([^>]*)>(\s*<caption)?", html):
        by = re.search(r'aria-labelledby="([^"]+)"', m.group(1))
        assert m.group(2) or (by and by.group(1) in ids), m.group(0)


def test_compare_says_better_or_worse_in_words(read_client: TestClient) -> None:
    html = _get(read_client, "/compare?slugs=h100-sxm,rtx-4090&preset=llama-3-8b")
    badges = re.findall(r'<span class="badge[^"]*" data-better="(\w+)">([^<]*)</span>', html)
    seen = {b for b, _ in badges}
    assert {"yes", "no"} <= seen
    for better, text in badges:
        word = {"yes": " better", "no": " worse", "same": "×"}[better]
        assert text.endswith(word), (better, text)


def test_measured_reports_tables_are_named_once(client: TestClient) -> None:
    """With a stored report, the pages that list it: the GPU's, /device and the report's own."""
    r = client.post("/api/v1/device-reports", json=sample_report())
    assert r.status_code == 201, r.text
    for url in ("/gpus/rtx-4090", "/device", f"/device/reports/{r.json()['id']}"):
        html = _get(client, url)
        # the list of reports (GPU page, /device) or the report's own three tables
        assert 'aria-label="Reports table"' in html or html.count('<table aria-labelledby="') == 3
        _named_regions(html)
        for m in re.finditer(r"<table([^>]*)>(\s*<caption)?", html):
            by = re.search(r'aria-labelledby="([^"]+)"', m.group(1))
            assert m.group(2) or (by and by.group(1) in _ids(html)), (url, m.group(0))

"""What the answer page's speed pass kept the same: the outlier legend (now read off the chart
in Python), marketplace ids in words (a fast path for text without one), the page's own
absolute link (its route's path found once, at install), the stale-price mark (a global, no
longer a macro each per-row template imports) and the memory bar's cap (no min filter)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import date
from typing import Any, cast
from urllib.parse import urlsplit

from fastapi.testclient import TestClient
from markupsafe import Markup

from app.config import Settings
from app.web import charts
from app.web.offer_words import instances_in_words
from app.web.templating import make_templates


def _chart(far: bool) -> charts.Chart:
    pts: list[dict[str, object]] = [
        {"x": 100.0 * (i + 1), "y": 10.0 + i % 3, "label": f"card {i}"} for i in range(8)
    ]
    if far:
        pts.append({"x": 950.0, "y": 900.0, "label": "far"})  # beyond the IQR fence
    return charts.xy_chart([("GPUs", pts)], x_label="x", y_label="y", log_x=True)


def _rendered(chart: charts.Chart) -> str:
    template = make_templates().env.get_template("_chart_xy.html")
    return template.render(chart=chart, caption="c", lines=False, names=[])


def test_the_outlier_legend_follows_the_charts_outliers() -> None:
    with_far, without = _chart(far=True), _chart(far=False)
    assert with_far.has_outliers and not without.has_outliers
    assert "data-outliers" in _rendered(with_far)
    assert "data-outliers" not in _rendered(without)


def test_marketplace_ids_are_said_in_words_and_other_text_is_left_as_it_is() -> None:
    said = instances_in_words("Rent primeintellect runpod__1xRTX3080Ti_12GB__7__31 at $0.20/h.")
    assert said == "Rent primeintellect 1× RTX3080Ti 12GB via runpod at $0.20/h."
    for text in ("Rent aws p5.48xlarge at $98.32/h.", "a__b is no id", ""):
        assert instances_in_words(text) == text


def test_the_answer_pages_own_link_is_its_routes_absolute_url(read_client: TestClient) -> None:
    query = "preset=llama-3-8b&task=inference&batch_size=4"
    page = read_client.get("/recommendations?" + query).text
    found = re.search(r'value="([^"]*)" data-share-url', page)
    assert found is not None
    link = urlsplit(html.unescape(found.group(1)))
    assert (link.scheme, link.netloc, link.path) == ("http", "testserver", "/recommendations")
    assert "batch_size=4" in link.query
    # a short question posted from the form is sent on to the same absolute link
    sent = read_client.post(
        "/recommendations", data={"preset": "llama-3-8b"}, follow_redirects=False
    )
    assert sent.status_code == 303
    assert sent.headers["location"] == "http://testserver/recommendations?preset=llama-3-8b"


def test_a_stale_price_is_marked_as_the_macro_marked_it() -> None:
    env = make_templates(Settings(offer_stale_days=30)).env
    mark = cast(Callable[..., str], env.globals["stale_mark"])
    badge = '<span class="badge warn" data-stale title="price over 30 days old">stale</span>'
    assert mark("2020-01-01") == " " + badge
    assert mark("2020-01-01", True) == "<br>" + badge
    assert mark(date.today().isoformat()) == "" and mark(None, True) == ""
    # a Markup: the page writes it as it is, not escaped
    assert isinstance(mark("2020-01-01"), Markup)


def test_the_memory_bar_is_full_at_most() -> None:
    macros: Any = make_templates().env.get_template("_macros.html").module
    membar = macros.membar
    widths = [
        re.findall(r'class="fill[^"]*" width="([^"]*)"', str(membar(r, 10.0)))[0]
        for r in (5.0, 10.0, 25.0)
    ]
    # the width is the share used, capped at the track's 100 (as the min filter took it)
    assert widths == ["50.0", "100.0", "100"]

"""What every page carries goes out lean (forty-second session, "pgw"): the stylesheet and the
script without their comments and indentation (the sources keep them), and a chart's ticks
with their anchor said once per group and no ".0" on a coordinate. The largest answer pages
weigh under the lowered budget without a browser too (test_pages_stay_small weighs them all
in one)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.shipped.paths import shipped_path
from app.web.static_assets import lean
from app.web.templating import svg_n
from tests.web.test_pages import page

BUDGET = 140_000  # test_pages_stay_small's
SERVING = (
    "/recommendations?preset=llama-3-8b&task=serving&requests_per_s=5&prompt_tokens=1000"
    "&serving.output_tokens=300&ttft_ms_target=1000&itl_ms_target=50"
)
LARGEST = [
    "/recommendations?preset=llama-3-8b&task=fine-tuning&peft=lora&acquisition=rent",
    "/recommendations?preset=llama-3-70b&task=inference&acquisition=either",
    SERVING,
]


def test_the_stylesheet_and_script_go_out_without_comments(read_client: TestClient) -> None:
    for relative, comment in (("css/app.css", r"/\*"), ("js/app.js", r"^\s*//")):
        source = (shipped_path("static") / relative).read_text(encoding="utf-8")
        served = read_client.get(f"/static/{relative}")
        assert served.status_code == 200
        assert re.search(comment, source, re.M), relative
        assert not re.search(comment, served.text, re.M), relative
        assert not re.search(r"^[ \t]", served.text, re.M), relative
        assert len(served.content) < len(source.encode()) - 1500, relative


def test_lean_keeps_what_carries_meaning() -> None:
    js = 'var u = "http://x/*y*/";  // a note after code\n  // a line of its own\n  f();\n'
    assert lean(js, "js") == 'var u = "http://x/*y*/";  // a note after code\nf();\n'
    css = '/* why */\na::before {\n  content: ": ";\n}\n'
    assert lean(css, "css") == 'a::before {\ncontent: ": ";\n}\n'


def test_chart_ticks_share_their_anchor(read_client: TestClient) -> None:
    html = page(read_client, SERVING)
    charts = re.findall(r"<svg viewBox=.*?</svg>", html, re.S)
    assert charts
    for svg in charts:
        # each tick had carried its own text-anchor: 17 to 20 a chart
        assert not re.search(r'<text x="[\d.]+" y="[\d.]+" text-anchor=', svg)
        assert svg.count('<g text-anchor="end">') == 1
        assert not re.search(r'(?:c[xy]|[xy])="-?\d+\.0"', svg)


def test_svg_n_drops_a_trailing_zero() -> None:
    assert [svg_n(v) for v in (256.0, 134.04, 0.25, -0.04, 12)] == ["256", "134", "0.2", "0", "12"]
    assert svg_n(27.666, 2) == "27.67"


def test_the_largest_answer_pages_weigh_under_the_budget(read_client: TestClient) -> None:
    assets = sum(len(read_client.get(f"/static/{a}").content) for a in ("css/app.css", "js/app.js"))
    for url in LARGEST:
        total = len(page(read_client, url).encode()) + assets
        assert total < BUDGET, (url, total)

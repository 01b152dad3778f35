"""The throughput chart never clips the top pick: an 8B QLoRA question under $2,500 drew its #1
as a hollow, unlabelled ring at the axis's end, off the scale as an "outlier" of the cheaper
cards around it."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.web import charts

QLORA = "preset=llama-3.1-8b&task=fine-tuning&peft=qlora&acquisition=buy&max_purchase_usd=2500"


def _points(top_y: float) -> list[dict[str, object]]:
    rest = [{"x": 100.0 * (i + 1), "y": 10.0 + i % 3, "label": f"card {i}"} for i in range(8)]
    return [{"x": 900.0, "y": top_y, "label": "top pick", "emphasis": True}, *rest]


def test_an_emphasised_point_beyond_the_fence_stays_on_the_scale() -> None:
    ys = [float(str(p["y"])) for p in _points(500.0)]
    assert charts.robust_max(ys) is not None  # an outlier, by the IQR fence
    chart = charts.xy_chart([("GPUs", _points(500.0))], x_label="x", y_label="y", log_x=True)
    top = next(p for p in chart.series[0].points if p.emphasis)
    assert not top.outlier and "off the scale" not in top.title
    assert top.label  # named, not a bare ring
    assert chart.y_ticks[-1].text and float(chart.y_ticks[-1].text) >= 500


def test_other_outliers_are_still_clipped() -> None:
    pts = _points(12.0)
    pts.append({"x": 950.0, "y": 900.0, "label": "far"})
    chart = charts.xy_chart([("GPUs", pts)], x_label="x", y_label="y", log_x=True)
    far = next(p for p in chart.series[0].points if p.title.startswith("far"))
    assert far.outlier


def test_the_answer_pages_top_pick_is_never_drawn_as_an_outlier(read_client: TestClient) -> None:
    page = read_client.get("/recommendations?" + QLORA).text
    charts_part = page.split('<h2 id="charts">', 1)[1]
    circles = re.findall(r'<circle class="([^"]*)"', charts_part)
    assert any("emph" in c for c in circles)
    assert not [c for c in circles if "emph" in c and "outlier" in c], circles

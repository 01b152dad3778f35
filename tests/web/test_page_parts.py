"""Small parts of the pages, below the browser: units that fit the magnitude, chart scales
one outlier cannot set, the Pareto front, the methodology's contents and linked references,
the device upload form (same checks as the API)."""

from __future__ import annotations

import json
import re
from html import unescape as html_unescape
from typing import Any

from fastapi.testclient import TestClient

from app.recommend.schemas import Excluded
from app.web import charts
from app.web.templating import breakable, by_reason, compact, flops, hours
from tests.web.sample_report import sample_report
from tests.web.test_pages import page


def test_flops_are_said_in_the_unit_that_fits() -> None:
    assert flops(0.0381) == "38.1 GFLOPS"
    assert flops(702.4) == "702 TFLOPS"
    assert flops(1979) == "1.98 PFLOPS"
    assert flops(None) == "—"


def test_excluded_gpus_are_listed_once_per_reason_in_the_order_reasons_first_appear() -> None:
    load = "best within 8 GPUs (1×1, bf16): cannot carry the load"
    rows = [
        Excluded(slug="a2", name="A2", code="misses_targets", reason=load),
        Excluded(slug="m1", name="M1", code="does_not_fit", reason="weights take 15 GB of 8 GB"),
        Excluded(slug="a16", name="A16", code="misses_targets", reason=load),
        Excluded(slug="t4", name="T4", code="does_not_fit", reason="weights take 15 GB of 8 GB"),
        Excluded(slug="p4", name="P4", code="does_not_fit", reason=load),
    ]
    grouped = by_reason(rows)
    assert [(code, reason, [e.slug for e in items]) for code, reason, items in grouped] == [
        ("misses_targets", load, ["a2", "a16"]),
        ("does_not_fit", "weights take 15 GB of 8 GB", ["m1", "t4"]),
        ("does_not_fit", load, ["p4"]),  # the same words under another code stay apart
    ]


def test_instance_names_wrap_between_their_parts_and_stay_escaped() -> None:
    assert breakable("gpu_1x_rtxpro6000blackwell_96") == (
        "gpu_<wbr>1x_<wbr>rtxpro6000blackwell_<wbr>96"
    )
    assert breakable("a2-ultragpu-8g") == "a2-<wbr>ultragpu-<wbr>8g"
    # catalog text is escaped before any <wbr> goes in
    assert breakable("<script>x_y</script>") == "&lt;script&gt;x_<wbr>y&lt;/<wbr>script&gt;"


def test_one_outlier_does_not_set_the_scale() -> None:
    pts = [{"x": i, "y": v, "label": ""} for i, v in enumerate([10, 11, 12, 10.5, 11.5, 900], 1)]
    chart = charts.xy_chart([("s", pts)], x_label="x", y_label="y")
    assert float(chart.y_ticks[-1].text) < 20  # the top tick fits the bulk, not the 900
    marked = [p for p in chart.series[0].points if p.outlier]
    assert len(marked) == 1 and "off the scale" in marked[0].title
    assert marked[0].y >= chart.top  # drawn at the edge, inside the plot
    bars = charts.bar_chart(
        [{"label": str(v), "value": v, "ref": None} for v in (10, 11, 12, 10.5, 11.5, 900)],
        value_name="v",
        ref_name="r",
    )
    assert bars.bars[-1].clipped and not bars.bars[0].clipped
    assert bars.bars[0].value_w > 0.2 * bars.plot_w  # the bulk stays readable


def test_pareto_front_keeps_only_undominated_points() -> None:
    pts = [
        {"x": 1, "y": 10, "label": "cheap slow"},
        {"x": 2, "y": 5, "label": "dominated"},
        {"x": 3, "y": 30, "label": "mid"},
        {"x": 9, "y": 31, "label": "dear fast"},
    ]
    chart = charts.xy_chart([("s", pts)], x_label="x", y_label="y", pareto=True)
    assert chart.front.startswith("M") and chart.front.count("L") == 2 * 2  # 3 points on it
    dominated = next(p for p in chart.series[0].points if p.title == "dominated")
    assert f"{dominated.x:.1f},{dominated.y:.1f}" not in chart.front


def test_methodology_has_contents_and_linked_references(read_client: TestClient) -> None:
    html = page(read_client, "/methodology/details")
    assert 'aria-label="Contents"' in html and 'href="#1-memory-workloadpy"' in html
    assert 'id="ref-TM101"' in html and '<a href="#ref-TM101">[TM101]</a>' in html
    assert 'href="https://arxiv.org/abs/2205.05198"' in html
    assert '<a href="/docs">API docs</a>' in html


def test_device_upload_form_stores_or_explains(client: TestClient) -> None:
    html = page(client, "/device")
    assert 'enctype="multipart/form-data"' in html and "your own computer" in html
    r = client.post(
        "/device/reports",
        files={"report": ("r.json", json.dumps(sample_report("Form GPU")), "application/json")},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"].startswith("/device/reports/")
    bad = client.post(
        "/device/reports", files={"report": ("r.json", "{not json", "application/json")}
    )
    assert bad.status_code == 422 and 'id="up-err"' in bad.text
    api = client.post(
        "/api/v1/device-reports",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert api.status_code == 422
    # Without a JSON content type the API refuses the body itself (CSRF guard), not its text.
    plain = client.post("/api/v1/device-reports", content=b"{not json")
    assert plain.status_code == 415
    empty = client.post("/device/reports", data={"x": "1"})
    assert empty.status_code == 422 and "choose a report file" in empty.text


def test_pages_drop_template_indentation_but_not_preformatted_text() -> None:
    from app.web.templating import squeeze

    html = '<ul>\n    <li>a</li>\n  </ul>\n<pre>  x\n    y</pre>\n  <textarea>\n  {\n    "a": 1}</textarea>'
    out = squeeze(html)
    assert "<ul>\n<li>a</li>\n</ul>" in out  # a newline stays where one was: same rendering
    assert "<pre>  x\n    y</pre>" in out and '<textarea>\n  {\n    "a": 1}</textarea>' in out
    # a page without either (most pages) in one pass; the tags in any case
    assert squeeze("<ul>\n\t <li>a</li>\n  </ul>\n") == "<ul>\n<li>a</li>\n</ul>\n"
    assert (
        squeeze("<div>\n  <PRE>  x\n    y</PRE>\n  </div>")
        == "<div>\n<PRE>  x\n    y</PRE>\n</div>"
    )


def _serving_answer(client: TestClient, **targets: float) -> Any:
    from app.recommend.schemas import RecommendationResponse

    body = {
        "workload": {
            "preset": "llama-3.1-8b",
            "task": "serving",
            "serving": {"concurrent_requests": 20, **targets},
        }
    }
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return RecommendationResponse.model_validate(r.json())


def test_serving_charts_draw_the_users_ttft_target(client: TestClient) -> None:
    from app.web.serving_charts import serving_charts

    answer = _serving_answer(client, ttft_ms_target=700)
    made = serving_charts(answer)
    ttft = [(c, names) for c, _, names in made if "time to first token" in c]
    assert ttft, [c for c, _, _ in made]
    assert any("TTFT target (700 ms)" in n for _, names in ttft for n in names)
    # the ITL target the user did not set is drawn as the default, and says so
    itl = [names for c, _, names in made if "latency between tokens" in c]
    assert itl and any("default" in n for n in itl[0] if n.startswith("ITL target"))


def test_serving_charts_without_a_ttft_target_draw_latency_only(client: TestClient) -> None:
    from app.web.serving_charts import serving_charts

    made = serving_charts(_serving_answer(client, itl_ms_target=40))
    assert made and all("latency between tokens" in c for c, _, _ in made)
    assert any("ITL target (40 ms)" in n for _, _, names in made for n in names)


def test_an_assumed_job_size_is_shown_with_a_link_to_change_it(read_client: TestClient) -> None:
    html = page(read_client, "/recommendations?preset=mistral-7b")
    assert "1 M tokens of fine-tuning data" in html
    link = re.search(r'<a href="([^"]*)" data-change-assumption>change</a>', html)
    assert link is not None
    href = html_unescape(link.group(1))
    assert href.startswith("/?") and "preset=mistral-7b" in href
    assert href.endswith("#f-dataset_samples")
    # the verdict's assumptions line says it too
    verdict = re.search(r"data-answer-verdict.*?</section>", html, re.S)
    assert verdict is not None and "assumed: 1 M tokens" in verdict.group(0)
    assert "tokens/s" in html
    mine = page(read_client, "/recommendations?preset=mistral-7b&dataset_samples=20k")
    assert "data-change-assumption" not in mine and "20K samples × 1 epoch, yours" in mine


def test_long_jobs_read_in_days_until_a_year_and_large_counts_compactly() -> None:
    # 2,164 h was "0.247 years" in a ranking's time-to-finish column
    assert hours(2164.0) == "90.2 days"
    assert hours(24 * 364.0) == "364 days"
    assert hours(24 * 365 * 1.5) == "1.5 years"
    assert hours(30.0) == "30 h"
    # a per-dollar figure of 15,145,036 widened its column past a 1440 px table
    assert compact(15_145_036) == "15.1M"
    assert compact(2.5e9) == "2.5B"
    assert compact(999_999) == "999,999"
    assert compact(None) == "—"


def test_the_advice_banner_speaks_of_buying_only_to_a_buyer(read_client: TestClient) -> None:
    """A renter was told "Before buying more cards"; since r37 (nu) neither is told of buying
    or adding cards: the banner says how the job fits in memory."""
    q = "/recommendations?preset=llama-3-8b&task=fine-tuning&peft=lora&acquisition="
    for acquisition in ("rent", "buy"):
        html = page(read_client, q + acquisition)
        banner = html.split("data-advice>", 1)[1].split("</div>", 1)[0]
        assert "How the job fits in memory" in banner, (acquisition, banner[:200])
        assert "buying" not in banner.split("</strong>")[0]
        assert "checkpointing is on" in banner

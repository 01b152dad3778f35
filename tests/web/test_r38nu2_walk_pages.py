"""What a new user's walk (thirty-eighth session) left on the pages: an SDXL inference job
labelled "FP16 mixed precision", a CPU's matmul chart with a "catalog peak" legend and no peak,
/compare dropping the batch size and sequence length asked, and the CSV without the deadline's
columns. Each through the app (TestClient), as a reader gets it."""

from __future__ import annotations

import csv
import io
import json
import re
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient

from app.web.charts import bar_chart
from app.web.labels import precision_label
from app.web.question_pages import CSV_COLUMNS
from tests.web.sample_report import sample_report


def _job_echo(html: str) -> str:
    m = re.search(r"<dt[^>]*>\s*Job\s*</dt>\s*<dd[^>]*>(.*?)</dd>", html, re.S)
    assert m, "the answer page echoes its job"
    return unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip()


def test_sdxl_inference_runs_fp16_not_mixed_precision(read_client: TestClient) -> None:
    html = read_client.get("/recommendations?preset=sdxl&task=inference&precision=fp16").text
    job = _job_echo(html)
    assert job.startswith("FP16,"), job
    assert "mixed precision" not in job
    # training keeps fp32 master weights: mixed precision is its word
    train = read_client.get("/recommendations?preset=resnet-50&task=training&precision=fp16")
    assert _job_echo(train.text).startswith("FP16 mixed precision")


def test_autocast_inference_keeps_its_words() -> None:
    # a CNN's 16-bit inference under PyTorch is priced as autocast over fp32 weights
    assert precision_label("fp16", "inference", "cnn", "pytorch") == "FP16 mixed precision"
    # TensorRT builds 16-bit weights once: no autocast
    assert precision_label("fp16", "inference", "cnn", "tensorrt") == "FP16"
    assert precision_label("bf16", "inference", "decoder", "transformers") == "BF16"
    assert precision_label("bf16", "fine-tuning", "decoder", "pytorch") == "BF16 mixed precision"
    assert precision_label("int8", "inference", "decoder", "vllm") == "INT8 (quantised)"


def _cpu_report() -> dict[str, Any]:
    r = sample_report("cpu")
    r["environment"].update(backend="cpu", device="cpu", compute_capability=None)
    for summary in r["matmul"]["by_precision"].values():
        for key in ("reference", "best"):
            summary[key].update(value=summary[key]["value"] / 1000, peak=None)
    return r


def _matmul_figure(html: str) -> str:
    start = html.index("data-report-charts")
    end = html.index("</figure>", start)
    return html[start:end]


def test_a_cpu_matmul_chart_has_no_catalog_peak(client: TestClient) -> None:
    r = client.post(
        "/device/reports",
        files={"report": ("r.json", json.dumps(_cpu_report()), "application/json")},
        follow_redirects=True,
    )
    assert r.status_code == 200, r.text[:400]
    fig = _matmul_figure(r.text)
    assert "data-bar-chart" in fig and "measured" in fig
    assert "catalog peak" not in fig  # neither the caption nor the legend
    assert 'class="ref"' not in fig


def test_a_gpu_matmul_chart_keeps_its_peak() -> None:
    with_peak = bar_chart(
        [{"label": "bf16", "value": 150.0, "ref": 165.0}], value_name="m", ref_name="peak"
    )
    none = bar_chart([{"label": "fp32", "value": 0.04, "ref": None}], value_name="m", ref_name="p")
    assert with_peak.has_ref and not none.has_ref


CARDS = "slugs=rtx-4090,rtx-3090&preset=llama-3.1-8b&task=inference"


def _heading(html: str) -> str:
    m = re.search(r'<h2 id="job-h">(.*?)</h2>', html, re.S)
    assert m, "the job's heading"
    return unescape(re.sub(r"<[^>]+>", "", m.group(1)))


def _throughputs(html: str) -> list[str]:
    row = re.search(r"Throughput</th>(.*?)</tr>", html, re.S)
    assert row
    return re.findall(r'<td class="num">([^<]*)', row.group(1))


def test_compare_runs_the_batch_and_sequence_asked(read_client: TestClient) -> None:
    own = read_client.get(f"/compare?{CARDS}")
    asked = read_client.get(f"/compare?{CARDS}&batch_size=8&seq_len=2048")
    assert own.status_code == asked.status_code == 200
    assert "batch 8, 2,048 tokens" in _heading(asked.text)
    assert "batch 8" not in _heading(own.text)
    assert _throughputs(asked.text) != _throughputs(own.text)
    # the form shows what was asked
    assert 'name="batch_size" value="8"' in asked.text
    assert 'name="seq_len" value="2048"' in asked.text


def test_a_bad_size_on_compare_names_its_field(read_client: TestClient) -> None:
    r = read_client.get(f"/compare?{CARDS}&batch_size=eight")
    assert r.status_code == 422 and "Batch size: give a whole number" in unescape(r.text)
    r = read_client.get(f"/compare?{CARDS}&seq_len=0")
    assert r.status_code == 422 and "Sequence length: give a whole number from 1" in r.text


def test_the_answers_compare_link_carries_the_sizes_asked(read_client: TestClient) -> None:
    q = "preset=llama-3.1-8b&task=inference&batch_size=8&seq_len=2048&acquisition=buy"
    html = read_client.get(f"/recommendations?{q}").text
    m = re.search(r'href="(/compare\?[^"]+)" data-compare-cards', html)
    assert m
    href = unescape(m.group(1))
    got = parse_qs(urlsplit(href).query)
    assert got["batch_size"] == ["8"] and got["seq_len"] == ["2048"]
    assert "batch 8, 2,048 tokens" in _heading(read_client.get(href).text)
    # nothing asked, nothing carried: /compare fills in the preset's own
    plain = read_client.get("/recommendations?preset=llama-3.1-8b&task=inference").text
    m = re.search(r'href="(/compare\?[^"]+)" data-compare-cards', plain)
    assert m and "batch_size" not in m.group(1) and "seq_len" not in m.group(1)


DEADLINE_Q = (
    "preset=llama-3.1-8b&task=fine-tuning&peft=lora&dataset_samples=50000&epochs=1"
    "&acquisition=rent&max_hours=24"
)


def test_the_csv_carries_the_deadlines_columns(read_client: TestClient) -> None:
    assert CSV_COLUMNS[-2:] == ("slow_end_hours", "may_miss_deadline")
    rows = list(
        csv.DictReader(io.StringIO(read_client.get(f"/recommendations.csv?{DEADLINE_Q}").text))
    )
    recs = read_client.get(f"/recommendations.json?{DEADLINE_Q}").json()["recommendations"]
    assert rows and len(rows) == len(recs)
    for row, rec in zip(rows, recs, strict=True):
        assert rec["slow_end_hours"] is not None
        assert float(row["slow_end_hours"]) == float(f"{rec['slow_end_hours']:.4g}")
        assert row["may_miss_deadline"] == str(rec["may_miss_deadline"])
    # without a deadline: empty
    plain = read_client.get("/recommendations.csv?preset=resnet-50&task=training").text
    assert all(r["may_miss_deadline"] == "" for r in csv.DictReader(io.StringIO(plain)))

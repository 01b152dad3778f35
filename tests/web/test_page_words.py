"""Words and units on the pages, from a review with a browser: times in the unit people read
them in, instances by name rather than a marketplace's key, the runtime a job runs on rather
than a framework it does not, a number field's example that fits the field, and a NUL in the
question answered with the form, not raw JSON."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app import vocab
from app.numbers import parse_hours, parse_int, parse_number
from app.web import templating
from app.web.forms import (
    NUL_MESSAGE,
    NUL_SHOWN,
    NUMBER_EXAMPLES,
    number_example,
    parse_question,
    question_fields,
)
from app.web.offer_words import instance_words
from app.web.question_pages import RUNTIME_FRAMEWORK

LLAMA_CPP_Q = (
    "preset=llama-3-8b&task=inference&runtime=llama.cpp&quantization=q4_k_m&precision=int4"
    "&acquisition=either"
)
HTML = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def _text(html: str) -> str:
    """What a reader sees: tags (and the attributes in them, tooltips too) dropped."""
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", html)).split())


# ---------------------------------------------------------------------------- times


def test_times_past_ten_seconds_read_in_seconds() -> None:
    assert templating.ms(18.7) == "18.7 ms"
    assert templating.ms(9_999) == "9,999 ms"
    assert templating.ms(45_788) == "45.8 s"  # the review's "45,788 ms"
    assert templating.ms(10_000) == "10 s"
    assert templating.ms(600_000) == "10 min"
    assert templating.ms(None) == "—"
    assert templating.ms_range(100, 240) == "100–240 ms"
    assert templating.ms_range(9_100, 12_000) == "9.1–12 s"
    # beside a figure, a range takes that figure's unit and may leave the unit to it
    assert templating.ms_range(7_000, 12_000, like=9_000) == "7,000–12,000 ms"
    assert templating.ms_range(9_100, 12_000, like=11_000, unit=False) == "9.1–12"


def test_batch_times_on_the_answer_read_in_seconds_past_ten(read_client: TestClient) -> None:
    query = "preset=llama-3-8b&task=inference&batch_size=256&acquisition=rent"
    recs = read_client.get(f"/recommendations.json?{query}").json()["recommendations"]
    html = read_client.get(f"/recommendations?{query}").text
    long = 0
    for rec in recs:
        cell = re.search(
            rf'<tr id="rec-{rec["rank"]}".*?<td class="num" data-label="Batch time"[^>]*>(.*?)</td>',
            html,
            re.S,
        )
        assert cell is not None
        shown = _text(cell.group(1))
        assert shown.startswith(templating.ms(rec["latency_ms"])), shown
        if rec["latency_ms"] >= 10_000:
            long += 1
            assert " ms" not in shown, shown
    assert long, "a batch of 256 takes some cards past ten seconds"


# ---------------------------------------------------------------------------- instances


def test_a_marketplace_instance_key_reads_in_words() -> None:
    assert instance_words("runpod__1xRTX3080Ti_12GB__7__31") == (
        "1× RTX3080Ti 12GB via runpod (7 vCPU, 31 GB RAM)"
    )
    assert instance_words("dc_impala__8xH100_80GB__104__1000", shape=False) == (
        "8× H100 80GB via dc_impala"
    )
    for own_name in ("Standard_NC12s_v3", "gpu_8x_v100", "BM.GPU.A10.4", "A100_PCIE_80GB::1"):
        assert instance_words(own_name) is None
    cell = str(templating.instance("runpod__1xRTX3080Ti_12GB__7__31"))
    assert cell.startswith('<span title="instance type runpod__1xRTX3080Ti_12GB__7__31">')
    assert str(templating.instance("gpu_8x_v100")) == "gpu_<wbr>8x_<wbr>v100"


def test_the_answer_names_a_marketplace_instance_by_its_shape(read_client: TestClient) -> None:
    query = LLAMA_CPP_Q.replace("either", "rent")
    recs = read_client.get(f"/recommendations.json?{query}").json()["recommendations"]
    keyed = [r["offer"] for r in recs if r["offer"] and instance_words(r["offer"]["instance_type"])]
    assert keyed, "Prime Intellect rents some rows"
    html = read_client.get(f"/recommendations?{query}").text
    seen = _text(html)
    for o in keyed:
        assert o["instance_type"] not in seen
        assert f"{o['provider']} · {instance_words(o['instance_type'])}" in seen
        # still there to hover or copy: SkyPilot launches by it
        assert f'title="instance type {o["instance_type"]}"' in html


def test_the_gpu_page_names_them_too(read_client: TestClient) -> None:
    html = read_client.get("/gpus/rtx-3080-ti").text
    table = re.search(r"<table data-offers-table>.*?</table>", html, re.S)
    assert table is not None
    seen = _text(table.group(0))
    assert "runpod__1xRTX3080Ti_12GB__7__31" not in seen
    assert "primeintellect · 1× RTX3080Ti 12GB via runpod 7 vCPU · 31 GiB RAM" in seen


# ---------------------------------------------------------------------------- runtime


def _echo(client: TestClient, query: str) -> dict[str, str]:
    html = client.get(f"/recommendations?{query}").text
    header = re.search(r"<dl class=\"echo\" data-assumptions.*?</dl>", html, re.S)
    assert header is not None
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", header.group(0), re.S)
    return {k: _text(v) for k, v in pairs}


@pytest.mark.parametrize(
    ("query", "framework", "runtime"),
    [
        (LLAMA_CPP_Q, None, "llama.cpp"),  # the review's "Framework: PyTorch"
        ("preset=llama-3-8b&task=inference&runtime=mlx&acquisition=buy", None, "MLX"),
        ("preset=resnet-50&task=inference&runtime=tensorrt", None, "TensorRT"),
        ("preset=llama-3-8b&task=inference&runtime=vllm", "PyTorch", "vLLM"),
        ("preset=resnet-50&task=training", "PyTorch", None),
        ("preset=resnet-50&task=training&framework=tensorflow", "TensorFlow", None),
    ],
)
def test_the_assumptions_name_what_runs_the_job(
    read_client: TestClient, query: str, framework: str | None, runtime: str | None
) -> None:
    echo = _echo(read_client, query)
    assert echo.get("Framework") == framework, echo
    assert echo.get("Runtime") == runtime, echo


def test_every_runtime_a_framework_runs_names_a_known_framework() -> None:
    assert set(RUNTIME_FRAMEWORK) <= set(vocab.RUNTIMES)
    assert set(RUNTIME_FRAMEWORK.values()) <= set(vocab.FRAMEWORK_LABELS)
    for framework in RUNTIME_FRAMEWORK.values():
        assert RUNTIME_FRAMEWORK[framework] == framework  # its own runtime is itself


# ---------------------------------------------------------------------------- numbers


def _examples(text: str) -> list[str]:
    assert text.startswith("like "), text
    return [p for part in text[5:].split(" or ") for p in part.split(", ")]


def _fits(f: Any, value: float) -> bool:
    if f.minimum is not None and (value <= f.minimum if f.exclusive_min else value < f.minimum):
        return False
    return f.maximum is None or (value < f.maximum if f.exclusive_max else value <= f.maximum)


def test_each_number_fields_example_is_a_value_it_takes() -> None:
    numeric = [f for f in question_fields() if f.numeric]
    assert set(NUMBER_EXAMPLES) <= {f.name for f in numeric}  # the table names real fields
    for f in numeric:
        for example in _examples(number_example(f)):
            # each read as the form reads that field: a deadline as a time ("36h", "2 days")
            if f.kind == "hours":
                value: float = parse_hours(example)
            else:
                value = parse_int(example) if f.integer else parse_number(example)
            assert _fits(f, value), (f.name, example)
        if f.kind != "usd":
            assert "$" not in number_example(f), f.name


@pytest.mark.parametrize(
    ("field", "example"),
    [("epochs", "like 3 or 0.5"), ("seq_len", "like 2,048 or 8k"), ("max_purchase_usd", "$800")],
)
def test_a_number_the_form_cannot_read_gets_that_fields_example(
    read_client: TestClient, field: str, example: str
) -> None:
    form = parse_question([("preset", "llama-3-8b"), (field, "abc")])
    assert form.errors[field].startswith("must be a number, ") and example in form.errors[field]
    r = read_client.get(f"/recommendations?preset=llama-3-8b&{field}=abc")
    assert r.status_code == 422 and example in html_lib.unescape(r.text)
    if field == "epochs":
        assert "$800" not in form.errors[field]


# ---------------------------------------------------------------------------- NUL


def test_a_nul_in_a_field_is_that_fields_error() -> None:
    form = parse_question([("preset", "llama-3-8b"), ("seq_len", "\x00"), ("epochs", "2")])
    assert form.request is None
    assert form.errors == {"seq_len": NUL_MESSAGE}
    assert form.values["seq_len"] == NUL_SHOWN and form.values["epochs"] == "2"


def _shows_the_form(status: int, html: str) -> None:
    assert status == 422
    assert "data-question-form" in html
    assert '<a href="#f-seq_len">Sequence length</a>: ' + html_lib.escape(NUL_MESSAGE) in html
    field = re.search(r'<input[^>]*id="f-seq_len"[^>]*>', html)
    assert field is not None and f'value="{NUL_SHOWN}"' in field.group(0)


def test_the_guards_answer_to_a_nul_is_a_page_not_a_crash(read_client: TestClient) -> None:
    # another page's query: the guard answers it, as an HTML page (its template had crashed)
    r = read_client.get("/gpus?q=%00", headers=HTML)
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert "q: contains a NUL byte" in r.text


def test_a_nul_in_the_question_re_shows_the_form(read_client: TestClient) -> None:
    # the question's pages read their own query (app/http/guard.py FORM_PAGES): the form comes
    # back with the field named and the other answers kept, where raw JSON had come back
    r = read_client.get("/recommendations?preset=llama-3-8b&seq_len=%00&epochs=2", headers=HTML)
    _shows_the_form(r.status_code, r.text)

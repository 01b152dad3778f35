"""The question form is generated from the API's request model and validated by it: one
set of limits, human numbers in and out, errors in words beside the user's input."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.recommend.schemas import RecommendationRequest
from app.web import forms
from tests.web.test_pages import field_error, field_value, page


def _schema_props() -> dict[tuple[str, ...], dict[str, Any]]:
    """Every leaf property of the request's JSON schema, by path, with $refs resolved."""
    schema = RecommendationRequest.model_json_schema()
    defs = schema.get("$defs", {})
    out: dict[tuple[str, ...], dict[str, Any]] = {}

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        if "$ref" in node:
            return defs[node["$ref"].split("/")[-1]]
        for alt in node.get("anyOf", []):
            if "$ref" in alt:
                return defs[alt["$ref"].split("/")[-1]]
        return node

    def walk(node: dict[str, Any], prefix: tuple[str, ...]) -> None:
        for key, prop in node.get("properties", {}).items():
            target = resolve(prop)
            if "properties" in target:
                walk(target, (*prefix, key))
            else:
                merged = dict(prop)
                for alt in prop.get("anyOf", []):
                    merged.update({k: v for k, v in alt.items() if k != "type"})
                out[(*prefix, key)] = merged

    walk(schema, ())
    return out


NUMERIC = [f for f in forms.question_fields() if f.numeric]


def test_every_form_limit_is_the_schemas() -> None:
    props = _schema_props()
    assert len(NUMERIC) >= 24
    for f in NUMERIC:
        prop = props[f.path]
        lo = prop.get("exclusiveMinimum", prop.get("minimum"))
        hi = prop.get("exclusiveMaximum", prop.get("maximum"))
        assert (f.minimum, f.maximum) == (lo, hi), f.name
        assert f.exclusive_min == ("exclusiveMinimum" in prop), f.name
        assert f.label == prop["title"] and f.help == prop["description"], f.name


@pytest.mark.parametrize("f", NUMERIC, ids=lambda f: f.name)
def test_form_and_api_reject_the_same_values(f: forms.FormField) -> None:
    assert f.maximum is not None and f.minimum is not None
    for value, ok in ((f.maximum, True), (f.maximum * 2 + 1, False), (f.minimum - 1, False)):
        text = str(int(value)) if value == int(value) else repr(value)
        form = forms.parse_question([("preset", "llama-3-8b"), (f.name, text)])
        api: dict[str, Any] = {"workload": {"preset": "llama-3-8b"}}
        node = api
        for key in f.path[:-1]:
            node = node.setdefault(key, {})
        node[f.path[-1]] = value if not f.integer else int(value)
        try:
            RecommendationRequest.model_validate(api)
            api_ok = True
        except ValueError:
            api_ok = False
        assert (f.name not in form.errors) is ok is api_ok, (f.name, text, form.errors)


def test_rendered_inputs_carry_the_schema_limits(read_client: TestClient) -> None:
    html = page(read_client, "/")
    props = _schema_props()
    for f in NUMERIC:
        m = re.search(rf'<input id="f-{re.escape(f.name)}"[^>]*>', html, re.S)
        assert m, f.name
        tag = m.group(0)
        prop = props[f.path]
        hi = prop.get("maximum", prop.get("exclusiveMaximum"))
        assert hi is not None, f.name
        assert f'data-max="{float(hi)}"' in tag, (f.name, tag)


def test_home_has_every_field_labelled_and_explained(read_client: TestClient) -> None:
    html = page(read_client, "/")
    for f in forms.question_fields():
        if f.control == "checks":
            assert f'name="{f.name}"' in html, f.name
            continue
        assert f'for="f-{f.name}"' in html, f.name
        assert f'id="f-{f.name}-help"' in html, f.name
        assert f">{f.label}</" in html, f.name
    assert 'action="/recommendations"' in html and 'method="post"' in html
    assert re.search(r'<option value="llama-3-8b" selected>', html)
    assert 'value="resnet-50"' in html
    # identifiers never reach the page as labels
    for raw in ("hidden_size", "min memory gb", "max_gpus<"):
        assert f">{raw}" not in html


def test_a_long_help_shows_one_sentence_and_folds_the_rest(read_client: TestClient) -> None:
    fields = {f.name: f for f in forms.question_fields()}
    extra = fields["extra_gpus"]
    # nothing of the schema's text is lost: the brief and the fold are the whole help
    assert f"{extra.brief} {extra.more}" == extra.help
    assert extra.brief.endswith("copies side by side.") and extra.more.startswith("Blank or")
    # "e.g. 1.28M" is not a sentence's end
    assert fields["dataset_samples"].brief == (
        "Samples per training epoch, or to run inference on, e.g. 1.28M or 15k."
    )
    short = fields["batch_size"]
    assert (short.brief, short.more) == (short.help, "")
    html = page(read_client, "/")
    help_p = re.search(r'<p class="help" id="f-extra_gpus-help">(.*?)</p>', html, re.S)
    assert help_p and help_p.group(1) == extra.brief
    folded = re.search(
        r'id="f-extra_gpus-help".*?<details class="help-more"><summary>More</summary>'
        r'<p class="help">(.*?)</p></details>',
        html,
        re.S,
    )
    assert folded and folded.group(1) == extra.more.replace("'", "&#39;")
    assert not re.search(r'id="f-batch_size-help">[^<]*</p>\s*<details', html)


def test_fields_carry_their_tasks_and_the_assumptions_panel_shows_defaults(
    read_client: TestClient,
) -> None:
    html = page(read_client, "/")
    # a deadline needs a job of known size: shown wherever "Finish within" is
    assert re.search(
        r'data-field="dataset_samples" data-tasks="training fine-tuning inference"', html
    )
    assert re.search(r'data-field="output_tokens" data-tasks="inference"', html)
    # serving describes its load in its own section: the one-job batch is not asked
    assert re.search(r'data-field="batch_size" data-tasks="training fine-tuning inference"', html)
    assert re.search(r'data-field="concurrent_requests" data-tasks="serving"', html)
    assert re.search(r'data-field="peft" data-tasks="fine-tuning"', html)
    panel = html[html.index('data-group="assumptions"') :]
    panel = panel[: panel.index("</details>")]
    assert 'placeholder="0.15 (US average)"' in panel  # electricity
    assert 'placeholder="8"' in panel  # max GPUs
    # the hidden defaults are fields here: usage (the hours a bought card is spread over),
    # the purchase price basis, the balanced weight, electricity; their values in the summary
    for name in ("hours_per_week", "years", "purchase_basis", "speed_weight"):
        assert f'id="f-{name}"' in panel, name
    summary = re.search(r"data-assumptions-summary>([^<]*)<", panel)
    assert summary is not None
    for words in (
        "Hours of use per week: 40",
        "Years of use: 3",
        "Purchase price basis: New, else used, else launch",
        "weight of speed: 0.5",
        "Electricity (USD per kWh): 0.15",
    ):
        assert words in summary.group(1), words
    assert "Power" in panel  # what stays fixed is said
    given = page(read_client, "/?hours_per_week=10&purchase_basis=launch")
    given = given[given.index("data-assumptions-summary>") :]
    assert "Hours of use per week: 10" in given and "Launch price (MSRP)" in given


def test_preset_values_are_shown_as_people_write_them(read_client: TestClient) -> None:
    html = page(read_client, "/?preset=llama-3-8b")
    m = re.search(r'<input id="f-params"[^>]*\splaceholder="([^"]*)"', html, re.S)
    assert m and m.group(1) == "8.03B"
    assert "70600000000" not in html and "8030000000" not in html


def test_human_numbers_are_read() -> None:
    form = forms.parse_question(
        [
            ("preset", "llama-3-8b"),
            ("params", "8.03B"),
            ("max_purchase_usd", "$800"),
            ("dataset_samples", "15k"),
            ("max_hourly_usd", "2.5 USD"),
            ("seq_len", "1,024"),
        ]
    )
    assert form.ok, form.errors
    w = form.data["workload"]
    assert w["model"]["params"] == 8.03e9 and w["dataset_samples"] == 15_000
    assert w["seq_len"] == 1024
    assert form.data["constraints"] == {"max_purchase_usd": 800.0, "max_hourly_usd": 2.5}
    assert form.request is not None and form.request.constraints.max_purchase_usd == 800


def test_question_form_maps_to_the_request_and_back() -> None:
    form = forms.parse_question(
        [
            ("preset", "llama-3-8b"),
            ("params", "8B"),
            ("gradient_checkpointing", "on"),
            ("vendors", "nvidia"),
            ("vendors", "amd"),
            ("max_gpus", "4"),
            ("objective", "fastest"),
            ("seq_len", ""),
        ],
    )
    assert form.ok, form.errors
    assert form.data == {
        "workload": {
            "preset": "llama-3-8b",
            "model": {"params": 8e9},
            "gradient_checkpointing": "on",
        },
        "constraints": {"vendors": ["nvidia", "amd"], "max_gpus": 4},
        "objective": "fastest",
    }
    assert form.request is not None and form.request.workload.gradient_checkpointing is True
    assert ("seq_len", "") not in form.query()
    assert forms.field_for_loc(("body", "workload", "model", "params")) == "params"
    assert forms.field_for_loc(("constraints", "vendors", 0)) == "vendors"
    assert forms.field_for_name("workload.batch_size") == "batch_size"


def test_home_prefills_from_a_link(read_client: TestClient) -> None:
    html = page(read_client, "/?preset=resnet-50&batch_size=64")
    assert re.search(r'<option value="resnet-50" selected>', html)
    assert field_value(html, "batch_size") == "64"


def test_a_decimal_comma_is_a_field_error_not_a_hundredfold_price() -> None:
    # "0,80" was read as 80: a cap of $0.80/h became $80/h without a word
    form = forms.parse_question(
        [("preset", "resnet-50"), ("max_hourly_usd", "0,80"), ("max_purchase_usd", "$1,500")]
    )
    assert not form.ok
    assert "max_hourly_usd" in form.errors and "max_purchase_usd" not in form.errors
    assert "comma only separates thousands" in form.errors["max_hourly_usd"]


def test_bad_input_rerenders_the_form_with_values_and_messages(read_client: TestClient) -> None:
    url = "/recommendations?preset=llama-3-8b&batch_size=-3&params=lots&max_hourly_usd=abc&epochs=2"
    html = page(read_client, url, 422)
    assert field_value(html, "batch_size") == "-3"
    assert field_value(html, "params") == "lots"
    assert field_value(html, "max_hourly_usd") == "abc"
    assert field_value(html, "epochs") == "2"
    assert field_error(html, "batch_size") == "must be at least 1"
    assert "8.03B" in (field_error(html, "params") or "")
    assert (field_error(html, "max_hourly_usd") or "").startswith("must be a number")
    assert field_error(html, "epochs") is None
    assert 'aria-invalid="true"' in html
    assert 'id="form-errors"' in html
    # the summary names fields by their labels
    assert '<a href="#f-batch_size">Batch size (all GPUs)</a>' in html


def test_custom_workload_needs_family_and_size(read_client: TestClient) -> None:
    html = page(read_client, "/recommendations?preset=&task=training", 422)
    assert "give a preset or model family" in (field_error(html, "family") or "")


def test_service_errors_name_fields_in_words(read_client: TestClient) -> None:
    url = (
        "/recommendations?preset=&task=training&family=decoder&params=1B&layers=8"
        "&hidden_size=1024&num_heads=8&num_kv_heads=16"
    )
    html = page(read_client, url, 422)
    assert field_error(html, "num_kv_heads") == "key/value heads cannot exceed attention heads"


def test_unknown_choice_and_preset_are_field_errors(read_client: TestClient) -> None:
    html = page(read_client, "/recommendations?precision=fp3&vendors=acme", 422)
    assert "choose one of" in (field_error(html, "precision") or "")
    assert "&#39;acme&#39; is not a choice" in html
    html = page(read_client, "/recommendations?preset=gpt-9", 422)
    assert "unknown workload preset" in (field_error(html, "preset") or "")
    assert '<option value="gpt-9" selected>' in html


def test_schema_limits_map_back_to_fields(read_client: TestClient) -> None:
    html = page(read_client, "/recommendations?preset=llama-3-8b&layers=5000", 422)
    assert field_value(html, "layers") == "5000"
    assert field_error(html, "layers") == "must be at most 1,000"


def test_unknown_device_report_is_a_field_error(read_client: TestClient) -> None:
    html = page(read_client, "/recommendations?preset=llama-3-8b&device_report_id=424242", 422)
    assert "424242" in html
    assert "device report" in (field_error(html, "device_report_id") or "")


def test_compare_with_my_machine_is_always_a_select(read_client: TestClient) -> None:
    html = page(read_client, "/")
    assert re.search(r'<select id="f-device_report_id" name="device_report_id"', html)
    assert "None stored yet" in html


def test_finish_within_is_a_form_field_that_reaches_the_answer(client: TestClient) -> None:
    home = page(client, "/")
    assert 'name="max_hours"' in home and "Finish within (hours)" in home
    html = page(client, "/recommendations?preset=resnet-50&max_hours=0.01&max_gpus=2")
    assert "0.01 h" in html  # the question's summary says the deadline asked
    assert 'data-deadline="unmet"' in html and "nothing finishes within" in html
    assert "a shorter job" in html
    bad = page(client, "/recommendations?preset=resnet-50&max_hours=-2", 422)
    assert field_value(bad, "max_hours") == "-2" and field_error(bad, "max_hours") is not None


def test_extra_gpus_is_an_inference_field_that_reaches_the_answer(read_client: TestClient) -> None:
    home = page(read_client, "/")
    assert re.search(r'data-field="extra_gpus" data-tasks="inference"', home)
    assert '<option value="copies" >' in home and "Extra GPUs run as" in home
    html = page(
        read_client,
        "/recommendations?preset=llama-3-8b&task=inference&batch_size=32&num_gpus=8"
        "&extra_gpus=copies&objective=fastest",
    )
    assert "8 copies × 1 GPU" in html
    bad = page(
        read_client, "/recommendations?preset=resnet-50&task=training&extra_gpus=copies", 422
    )
    assert "inference" in (field_error(bad, "extra_gpus") or "")

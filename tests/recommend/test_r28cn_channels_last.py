"""workload.channels_last: the API, the form and the CLI can state what the layout tip asks
for, and an NVIDIA row's eager CNN step then pays no cuDNN NCHW<->NHWC transforms (review rvA
#4); a model without convolutions ignores it with a warning, as seq_len on a CNN is."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.cli.recommend import OPTIONS, build_request
from app.domain.perf import runs_nchw
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from app.web.forms import fields_by_name, parse_question


def _resolve(**kw: object) -> tuple[object, list[str]]:
    return resolve_workload(s.WorkloadIn.model_validate(kw))


def test_the_field_defaults_to_pytorchs_nchw_and_is_documented() -> None:
    info = s.WorkloadIn.model_fields["channels_last"]
    assert info.default is None  # blank: PyTorch's NCHW (the form's "Default: No")
    schema = s.RecommendationRequest.model_json_schema()
    desc = schema["$defs"]["WorkloadIn"]["properties"]["channels_last"]["description"]
    assert "NCHW" in desc and "channels_last" in desc


def test_a_resnet_stated_channels_last_runs_no_nchw_transforms() -> None:
    plain, _ = _resolve(preset="resnet-50")
    nhwc, warned = _resolve(preset="resnet-50", channels_last=True)
    assert runs_nchw(plain) and not plain.channels_last  # type: ignore[arg-type,attr-defined]
    assert nhwc.channels_last and not runs_nchw(nhwc)  # type: ignore[arg-type,attr-defined]
    assert not any("channels_last" in w for w in warned)


def test_a_model_without_convolutions_warns_and_ignores_it() -> None:
    work, warned = _resolve(preset="llama-3-8b", channels_last=True)
    assert not work.channels_last  # type: ignore[attr-defined]
    assert any("channels_last" in w and "ignored" in w for w in warned)
    _, quiet = _resolve(preset="llama-3-8b", channels_last=False)
    assert not any("channels_last" in w for w in quiet)


def test_text_for_the_flag_is_refused_naming_it() -> None:
    with pytest.raises(ValidationError) as exc:
        s.WorkloadIn.model_validate({"channels_last": "yes"})
    assert exc.value.errors()[0]["loc"] == ("channels_last",)


def test_the_cli_and_the_form_state_it() -> None:
    opt = next(o for o in OPTIONS if o.path == ("workload", "channels_last"))
    assert "--channels-last/--no-channels-last" in opt.flags
    assert build_request({opt.name: True})["workload"]["channels_last"] is True
    f = fields_by_name()["channels_last"]
    assert f.control == "flag" and f.tasks is not None and "serving" not in f.tasks
    form = parse_question([("preset", "resnet-50"), ("channels_last", "on")])
    assert form.ok and form.request is not None and form.request.workload.channels_last


def _rate(client: TestClient, gpu: str, channels_last: bool) -> float:
    r = client.post(
        "/api/v1/estimate",
        json={"workload": {"preset": "resnet-50", "channels_last": channels_last}, "gpu": gpu},
    )
    assert r.status_code == 200, r.text
    return float(r.json()["result"]["throughput"]["value"])


def test_through_the_api_nvidia_gains_and_amd_is_unchanged(read_client: TestClient) -> None:
    # cuDNN's transforms gone on an H100 (DLE's AMP ConvNets run nhwc for this reason); ROCm
    # PyTorch hands MIOpen NCHW either way unless PYTORCH_MIOPEN_SUGGEST_NHWC is set
    assert _rate(read_client, "h100-sxm", True) > 1.2 * _rate(read_client, "h100-sxm", False)
    assert _rate(read_client, "mi300x", True) == _rate(read_client, "mi300x", False)


def test_an_amd_cnn_row_says_no_calibration_covers_its_vendor(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/estimate", json={"workload": {"preset": "resnet-50"}, "gpu": "mi300x"}
    )
    unc = r.json()["result"]["uncertainty"]
    assert "no published results from this vendor" in unc["basis"]
    assert unc["low"] < 0.55 * r.json()["result"]["throughput"]["value"]


def test_the_layout_tip_is_cudnns_and_the_what_if_prices_it(read_client: TestClient) -> None:
    """The tip speaks of cuDNN's transposes: no AMD row carries it (ROCm PyTorch hands MIOpen
    NCHW whatever the model's memory format); the what-if prices channels_last."""
    body = {
        "workload": {"preset": "resnet-50", "precision": "fp16"},
        "constraints": {"acquisition": "rent", "max_gpus": 1},
        "objective": "fastest", "limit": 30, "what_if": True,
    }  # fmt: skip
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    j = r.json()
    rows = j["recommendations"]
    tipped = {x["gpu"]["vendor"] for x in rows if any("cuDNN transposes" in t for t in x["tips"])}
    assert tipped == {"nvidia"}
    levers = [v["change"] for v in j["what_if"]]
    assert "channels_last tensors instead of NCHW" in levers


def test_the_form_selects_no_layout_change_by_default(read_client: TestClient) -> None:
    """The form's select had no blank option and listed "Yes" first, so a browser submitted
    channels_last=on for every question (a ResNet-50 answer picked by the layout it was not
    asked): blank, said "Default: No", is what it submits now."""
    import re

    html = read_client.get("/").text
    m = re.search(r'<select id="f-channels_last".*?</select>', html, re.S)
    assert m
    first = re.search(r"<option ([^>]*)>([^<]*)</option>", m.group(0))
    assert first and 'value=""' in first.group(1) and "Default: No" in first.group(2)

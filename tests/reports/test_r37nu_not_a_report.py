"""New user's walk (thirty-seventh session): a JSON file that is no bench report at all,
dropped on /device, was answered "profile: Field required" — its first lack alone — where
`gpu-advisor upload` says "… is not a gpu-advisor bench report: profile: Field required;
environment: Field required; hello: Extra inputs are not permitted". The page and the API
now say what the file is not, and every field at fault; a report with one nested field wrong
is still named by that field alone."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from app.errors import InvalidInput
from app.reports.service import parse_report
from tests.reports.factory import gpu_report


def test_another_json_file_is_said_to_be_no_report() -> None:
    with pytest.raises(InvalidInput) as err:
        parse_report(b'{"hello": 1}')
    assert err.value.message == (
        "not a report made by gpu-advisor bench: profile: Field required; environment: Field "
        "required; hello: Extra inputs are not permitted"
    )
    assert err.value.field == "profile"


def test_a_report_with_one_field_wrong_is_named_by_it() -> None:
    report = gpu_report()
    del report["environment"]["device_name"]
    with pytest.raises(InvalidInput) as err:
        parse_report(json.dumps(report).encode())
    assert err.value.message == "environment.device_name: Field required"
    assert err.value.field == "environment.device_name"


def test_the_page_and_the_api_say_so(client: TestClient) -> None:
    page = client.post(
        "/device/reports", files={"report": ("notes.json", '{"hello": 1}', "application/json")}
    )
    assert page.status_code == 422
    assert "not a report made by gpu-advisor bench: profile: Field required" in page.text
    api = client.post("/api/v1/device-reports", json={"hello": 1})
    assert api.status_code == 422
    error = api.json()["error"]
    assert error["details"]["field"] == "profile"
    assert error["message"].startswith("not a report made by gpu-advisor bench: ")

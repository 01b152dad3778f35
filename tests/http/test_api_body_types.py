"""API writes take JSON bodies only: any other declared type is a 415 naming it, before the
body reaches an endpoint that would parse it unscreened; and every 401 carries its challenge."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

DEEP = b'{"a":' * 5000 + b"1" + b"}" * 5000


@pytest.mark.parametrize("ctype", ["application/octet-stream", "application/xml", "image/png"])
def test_report_upload_of_another_type_is_415(read_client: TestClient, ctype: str) -> None:
    for body in (DEEP, json.dumps({"profile": "\ud800"}).encode()):
        r = read_client.post("/api/v1/device-reports", content=body,
                             headers={"content-type": ctype})  # fmt: skip
        assert r.status_code == 415, r.text
        error = r.json()["error"]
        assert error["code"] == "unsupported_media_type"
        assert ctype in error["message"] and error["details"]["field"] == "content-type"
    assert read_client.get("/api/v1/device-reports").json()["total"] == 0


@pytest.mark.parametrize("ctype", ["text/json", "application/xml"])
def test_recommendation_of_another_type_is_415(read_client: TestClient, ctype: str) -> None:
    r = read_client.post("/api/v1/recommendations", content=b"{}",
                         headers={"content-type": ctype})  # fmt: skip
    assert r.status_code == 415, r.text
    assert ctype in r.json()["error"]["message"]


def test_structured_json_types_are_json_and_screened(read_client: TestClient) -> None:
    r = read_client.post("/api/v1/device-reports", content=DEEP,
                         headers={"content-type": "application/problem+json"})  # fmt: skip
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == "body"


def test_401_names_the_header_and_the_operation(read_client: TestClient) -> None:
    r = read_client.delete("/api/v1/device-reports/1")
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
    error = r.json()["error"]
    assert error["details"] == {"field": "Authorization"}
    assert "deleting device reports" in error["message"]
    wrong = read_client.delete("/api/v1/gpus/a10", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 403
    assert wrong.json()["error"]["details"] == {"field": "Authorization"}
    assert "editing the catalog" in wrong.json()["error"]["message"]
    assert "www-authenticate" not in wrong.headers

"""Query strings under /api are strict: an unknown or empty parameter is a 422 naming it
(app/http/strict_query.py); pages keep ignoring what browsers add."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from httpx import Response


def _field(r: Response) -> str:
    assert r.status_code == 422, r.text[:300]
    body = r.json()["error"]
    assert body["code"] == "invalid_input"
    return str(body["details"]["field"])


@pytest.mark.parametrize(
    "url, field",
    [
        ("/api/v1/gpus?bogus=1", "bogus"),
        ("/api/v1/gpus?max_hourly=0.2", "max_hourly"),  # a typo of max_hourly_usd
        ("/api/v1/offers?gpu=h100-sxm&colour=red", "colour"),
        ("/api/v1/meta?x=1", "x"),
        ("/api/v1/device-reports?gpu=h100-sxm", "gpu"),  # the parameter is gpu_slug
        ("/api/v1/benchmark-runs?page=2", "page"),
    ],
)
def test_an_unknown_query_parameter_is_named(read_client: TestClient, url: str, field: str) -> None:
    r = read_client.get(url)
    assert _field(r) == field
    assert f"'{field}'" in r.json()["error"]["message"]


def test_the_message_lists_what_the_endpoint_takes(read_client: TestClient) -> None:
    message = read_client.get("/api/v1/gpus?bogus=1").json()["error"]["message"]
    assert "max_hourly_usd" in message and "sort" in message


@pytest.mark.parametrize(
    "url, field",
    [
        ("/api/v1/offers?gpu=", "gpu"),
        ("/api/v1/gpus?vendor=", "vendor"),
        ("/api/v1/gpus?q=%20", "q"),
        ("/api/v1/device-reports?gpu_slug=", "gpu_slug"),
    ],
)
def test_an_empty_query_parameter_is_named(read_client: TestClient, url: str, field: str) -> None:
    r = read_client.get(url)
    assert _field(r) == field
    assert "empty" in r.json()["error"]["message"]


def test_declared_parameters_still_work(read_client: TestClient) -> None:
    assert read_client.get("/api/v1/gpus?vendor=nvidia&limit=2&sort=-memory_gb").status_code == 200
    assert read_client.get("/api/v1/offers?gpu=h100-sxm&limit=1").status_code == 200
    assert read_client.get("/api/v1/meta").status_code == 200


def test_pages_ignore_parameters_browsers_add(read_client: TestClient) -> None:
    assert read_client.get("/gpus?utm_source=x").status_code == 200

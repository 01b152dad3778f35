"""A 405 says which methods the path takes (RFC 9110 §15.5.6: the Allow header is required),
all of them: FastAPI keeps one route per method, and Starlette's own Allow named only the
first route that matched (GET /api/v1/gpus, not its POST)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/api/v1/recommendations", "POST"),
        ("DELETE", "/api/v1/gpus", "GET, POST"),
        ("POST", "/api/v1/gpus/h100-sxm", "GET, PUT, PATCH, DELETE"),
        ("PUT", "/api/v1/device-reports/1", "GET, DELETE"),
    ],
)
def test_an_api_405_lists_every_method_of_the_path(
    read_client: TestClient, method: str, path: str, allowed: str
) -> None:
    r = read_client.request(method, path)
    assert r.status_code == 405
    assert r.headers["allow"] == allowed
    error = r.json()["error"]
    assert error["code"] == "method_not_allowed" and error["details"] == {"field": "method"}
    assert error["message"].endswith(f"takes {allowed}")


def test_a_page_405_has_the_allow_header_too(read_client: TestClient) -> None:
    r = read_client.post("/gpus", headers={"accept": "text/html"})
    assert r.status_code == 405
    assert r.headers["allow"] == "GET"
    assert "text/html" in r.headers["content-type"]

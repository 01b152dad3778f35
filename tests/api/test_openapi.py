"""The OpenAPI document describes the API as it behaves: the one error shape, the bearer
scheme where a token is checked, examples, and unique readable schema names."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support import lab_card

ERROR_REF = "#/components/schemas/ErrorResponse"
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def spec(read_client: TestClient) -> dict[str, Any]:
    r = read_client.get("/openapi.json")
    assert r.status_code == 200
    return r.json()


def _ops(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (m, p, op)
        for p, item in spec["paths"].items()
        if p.startswith("/api/")
        for m, op in item.items()
        if m in METHODS
    ]


def test_every_api_error_is_the_one_error_shape(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    assert set(schemas["ErrorResponse"]["properties"]) == {"error"}
    assert set(schemas["ErrorDetail"]["properties"]) == {"code", "message", "details"}
    for method, path, op in _ops(spec):
        codes = {c for c in op["responses"] if c[0] in "45"}
        assert {"422", "500"} <= codes, (method, path)
        for code in codes:
            ref = op["responses"][code]["content"]["application/json"]["schema"]["$ref"]
            assert ref == ERROR_REF, (method, path, code)
        if "{" in path:
            assert "404" in codes, (method, path)


def test_the_documented_errors_are_the_real_ones(
    client: TestClient, spec: dict[str, Any], admin: dict[str, str]
) -> None:
    body = client.post("/api/v1/recommendations", json={"workload": {"batch_size": 0}}).json()
    assert set(body) == set(spec["components"]["schemas"]["ErrorResponse"]["properties"])
    assert set(body["error"]) == set(spec["components"]["schemas"]["ErrorDetail"]["properties"])
    assert "404" in spec["paths"]["/api/v1/gpus/{slug}"]["get"]["responses"]
    assert client.get("/api/v1/gpus/no-such-gpu").status_code == 404
    # a duplicate slug is the documented 409
    assert "409" in spec["paths"]["/api/v1/gpus"]["post"]["responses"]
    card = lab_card()
    assert client.post("/api/v1/gpus", json=card, headers=admin).status_code == 201
    again = client.post("/api/v1/gpus", json=card, headers=admin)
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"


def test_bearer_scheme_where_a_token_is_checked(spec: dict[str, Any]) -> None:
    scheme = spec["components"]["securitySchemes"]["bearerAuth"]
    assert scheme == scheme | {"type": "http", "scheme": "bearer"}
    for method in ("put", "patch", "delete"):
        op = spec["paths"]["/api/v1/gpus/{slug}"][method]
        assert op["security"] == [{"bearerAuth": []}]
        assert {"401", "403"} <= set(op["responses"])
    assert spec["paths"]["/api/v1/gpus"]["post"]["security"] == [{"bearerAuth": []}]
    assert "security" not in spec["paths"]["/api/v1/gpus"]["get"]
    assert "401" not in spec["paths"]["/api/v1/recommendations"]["post"]["responses"]
    upload = spec["paths"]["/api/v1/device-reports"]["post"]
    assert {"401", "403", "413"} <= set(upload["responses"])


def test_schema_names_are_unique_and_readable(spec: dict[str, Any]) -> None:
    names = list(spec["components"]["schemas"])
    assert all("__" not in n and "-" not in n for n in names), names
    assert "GpuOut" in names and "RankedGpu" in names


def test_main_requests_have_examples_that_validate(
    read_client: TestClient, spec: dict[str, Any]
) -> None:
    for path in ("/api/v1/recommendations", "/api/v1/estimate"):
        examples = spec["paths"][path]["post"]["requestBody"]["content"]["application/json"][
            "examples"
        ]
        assert examples
        for example in examples.values():
            r = read_client.post(path, json=example["value"])
            assert r.status_code == 200, (path, r.text)

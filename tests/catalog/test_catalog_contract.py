"""The catalog's schemas and listing state what the server enforces: PATCH bounds and
nullability, NVIDIA compute capabilities, finite query numbers, every numeric sort field,
and the OpenAPI document's 404s and request examples."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel

from app.bench.report import BenchReport
from app.catalog.schemas import GpuCreate, GpuPatch, GpuReplace
from app.http.openapi import EXAMPLES
from app.reports.schemas import RunCreate


def _nullable(schema: dict[str, Any]) -> bool:
    return any(s.get("type") == "null" for s in schema.get("anyOf", [])) or "default" in schema


def test_patch_fields_have_the_entry_bounds_and_nullability() -> None:
    props = GpuPatch.model_json_schema()["properties"]
    for name, info in GpuReplace.model_fields.items():
        assert GpuPatch.model_fields[name].metadata == info.metadata, name
        # a field the whole entry may lack can be cleared with null; the others cannot
        may_be_null = not info.is_required() and info.default is None
        assert _nullable(props[name]) == may_be_null, name
    assert props["memory_gb"]["exclusiveMinimum"] == 1
    assert props["name"]["maxLength"] == 200


def _entry(slug: str, vendor: str, cc: str) -> dict[str, Any]:
    return {"slug": slug, "name": slug, "vendor": vendor, "architecture": "x",
            "segment": "datacenter", "memory_gb": 24, "memory_bandwidth_gbs": 900,
            "compute_capability": cc, "backends": ["cuda" if vendor == "nvidia" else "rocm"],
            "sources": [{"id": "s", "title": "t", "url": "https://example.org"}]}  # fmt: skip


@pytest.mark.parametrize("cc", ["abc", "8", "8.9.1", "sm_89"])
def test_nvidia_compute_capability_is_major_minor(cc: str) -> None:
    with pytest.raises(ValueError, match="major.minor"):
        GpuCreate.model_validate(_entry("x", "nvidia", cc))


def test_compute_capability_over_the_api(client: TestClient, admin: dict[str, str]) -> None:
    bad = client.post("/api/v1/gpus", json=_entry("my-card", "nvidia", "abc"), headers=admin)
    assert bad.status_code == 422, bad.text
    assert bad.json()["error"]["details"]["field"] == "compute_capability"
    ok = client.post("/api/v1/gpus", json=_entry("my-card", "nvidia", "12.0"), headers=admin)
    assert ok.status_code == 201, ok.text
    amd = client.post("/api/v1/gpus", json=_entry("my-amd", "amd", "gfx942"), headers=admin)
    assert amd.status_code == 201, amd.text


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_query_numbers_say_so(read_client: TestClient, value: str) -> None:
    r = read_client.get(f"/api/v1/gpus?min_memory_gb={value}")
    assert r.status_code == 422
    assert "finite" in r.json()["error"]["message"]


@pytest.mark.parametrize("field", ["sm_count", "pcie_lanes", "slot_width", "visible_memory_mib"])
def test_every_numeric_field_sorts(read_client: TestClient, field: str) -> None:
    r = read_client.get(f"/api/v1/gpus?sort=-{field}&limit=500")
    assert r.status_code == 200, r.text
    values = [g[field] for g in r.json()["items"] if g[field] is not None]
    assert values and values == sorted(values, reverse=True)


def test_openapi_declares_422_where_a_slug_is_looked_up(read_client: TestClient) -> None:
    # a slug in the body or query that the catalog lacks is invalid input, never a 404
    paths = read_client.get("/openapi.json").json()["paths"]
    for path, method in (("/api/v1/estimate", "post"), ("/api/v1/gpus/compare", "get")):
        responses = paths[path][method]["responses"]
        assert "404" not in responses
        assert responses["422"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorResponse"
        }


BODIES: dict[tuple[str, str], type[BaseModel]] = {
    ("post", "/api/v1/gpus"): GpuCreate,
    ("put", "/api/v1/gpus/{slug}"): GpuReplace,
    ("patch", "/api/v1/gpus/{slug}"): GpuPatch,
    ("post", "/api/v1/device-reports"): BenchReport,
    ("post", "/api/v1/benchmark-runs"): RunCreate,
}


def test_every_json_body_has_a_valid_example(read_client: TestClient) -> None:
    paths = read_client.get("/openapi.json").json()["paths"]
    for (method, path), model in BODIES.items():
        body = paths[path][method]["requestBody"]["content"]["application/json"]
        assert body["examples"] == EXAMPLES[(method, path)], path
        for example in body["examples"].values():
            model.model_validate(example["value"])


def test_the_report_example_uploads(client: TestClient) -> None:
    (example,) = EXAMPLES[("post", "/api/v1/device-reports")].values()
    r = client.post("/api/v1/device-reports", json=example["value"])
    assert r.status_code == 201, r.text

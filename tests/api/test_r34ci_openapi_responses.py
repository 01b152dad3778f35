"""Real answers validated against /openapi.json: for a sample of every endpoint (reads on the
shared catalog, writes on each backend), the status is one the operation documents, the
content type is the documented one, and a JSON body validates against the documented schema
(JSON Schema 2020-12, as OpenAPI 3.1 writes it). A response model that drifts from what the
handler returns, or an error path that answers outside the one error shape, fails here."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema_rs  # schemathesis's validator (requirements-dev.lock)
import pytest
from fastapi.testclient import TestClient

from tests.reports.factory import gpu_report
from tests.support import lab_card


@pytest.fixture(scope="module")
def spec(read_client: TestClient) -> dict[str, Any]:
    r = read_client.get("/openapi.json")
    assert r.status_code == 200
    return r.json()


def _problems(spec: dict[str, Any], template: str, r: httpx.Response) -> list[str]:
    """What in this answer the document does not say (empty when it conforms)."""
    method = r.request.method.lower()
    op = spec["paths"][template][method]
    documented = op["responses"].get(str(r.status_code))
    if documented is None:
        return [f"status {r.status_code} is not documented (has {sorted(op['responses'])})"]
    content = documented.get("content") or {}
    if not content:
        return [] if not r.content else [f"{r.status_code} documents no body, got one"]
    media = r.headers.get("content-type", "").split(";")[0].strip()
    if media not in content:
        return [f"content type {media!r}, documented {sorted(content)}"]
    if media != "application/json":
        return []
    schema = dict(content[media].get("schema") or {})
    schema["components"] = spec["components"]  # the $refs resolve against the document
    validator = jsonschema_rs.Draft202012Validator(schema)
    problems = [
        f"{'/'.join(map(str, e.instance_path))}: {e.message[:200]}"
        for e in validator.iter_errors(r.json())
    ][:5]
    if 400 <= r.status_code < 500 and not problems:
        field = r.json()["error"]["details"].get("field")
        if not (isinstance(field, str) and field):
            problems.append("a 4xx that names no field")
    return problems


def _conforms(spec: dict[str, Any], template: str, r: httpx.Response) -> None:
    problems = _problems(spec, template, r)
    assert not problems, (r.request.method, str(r.request.url), r.status_code, problems)


def test_the_check_fails_on_an_answer_the_document_does_not_describe(
    read_client: TestClient, spec: dict[str, Any]
) -> None:
    """The validator is not vacuous: a wrong type, a missing field, an undocumented status
    and a wrong content type are each caught."""
    r = read_client.get("/api/v1/meta")
    assert _problems(spec, "/api/v1/meta", r) == []

    def altered(status: int, body: Any, media: str = "application/json") -> httpx.Response:
        return httpx.Response(
            status, content=json.dumps(body).encode(), headers={"content-type": media},
            request=r.request,
        )  # fmt: skip

    meta = r.json()
    assert _problems(spec, "/api/v1/meta", altered(200, meta | {"catalog_size": "many"}))
    assert _problems(spec, "/api/v1/meta", altered(200, {"name": "GPU Advisor"}))
    assert _problems(spec, "/api/v1/meta", altered(418, meta))
    assert _problems(spec, "/api/v1/meta", altered(200, meta, "text/plain"))
    error = {"error": {"code": "not_found", "message": "x"}}  # no details
    assert _problems(spec, "/api/v1/gpus/{slug}", altered(404, error))
    unnamed = {"error": {"code": "not_found", "message": "x", "details": {}}}
    assert _problems(spec, "/api/v1/gpus/{slug}", altered(404, unnamed))


def test_every_error_is_documented_with_its_details(spec: dict[str, Any]) -> None:
    """error_body always writes `details` (empty on a 5xx): the document said it was
    optional, so a client generated from it had to handle a case that never comes."""
    assert spec["components"]["schemas"]["ErrorDetail"]["required"] == [
        "code", "message", "details"
    ]  # fmt: skip


READS: list[tuple[str, str]] = [
    ("/api/v1/health", "/api/v1/health"),
    ("/api/v1/meta", "/api/v1/meta"),
    ("/api/v1/gpus", "/api/v1/gpus?limit=500"),
    ("/api/v1/gpus", "/api/v1/gpus?vendor=nvidia&max_hourly_usd=3&sort=-memory_gb&offset=5"),
    ("/api/v1/gpus", "/api/v1/gpus?limit=0"),
    ("/api/v1/gpus", "/api/v1/gpus?nosuch=1"),
    ("/api/v1/gpus/{slug}", "/api/v1/gpus/h100-sxm"),
    ("/api/v1/gpus/{slug}", "/api/v1/gpus/apple-m4-max"),
    ("/api/v1/gpus/{slug}", "/api/v1/gpus/h100-sxn"),
    ("/api/v1/gpus/compare", "/api/v1/gpus/compare?slugs=h100-sxm,rtx-4090,mi300x"),
    ("/api/v1/gpus/compare", "/api/v1/gpus/compare?slugs=h100-sxm"),
    ("/api/v1/offers", "/api/v1/offers?limit=500"),
    ("/api/v1/offers", "/api/v1/offers?kind=purchase&limit=500"),
    ("/api/v1/offers", "/api/v1/offers?provider=nosuch"),
    ("/api/v1/offers/launch-spec", "/api/v1/offers/launch-spec?gpu=h100-sxm&upload=http://a:8000"),
    ("/api/v1/offers/launch-spec", "/api/v1/offers/launch-spec?gpu=rtx-2060&upload=http://a:8000"),
    ("/api/v1/workloads", "/api/v1/workloads"),
    ("/api/v1/workloads/{workload_id}", "/api/v1/workloads/llama-3-8b"),
    ("/api/v1/workloads/{workload_id}", "/api/v1/workloads/nosuch"),
    ("/api/v1/device-reports", "/api/v1/device-reports"),
    ("/api/v1/device-reports/{report_id}", "/api/v1/device-reports/999"),
    ("/api/v1/benchmark-runs", "/api/v1/benchmark-runs?limit=2"),
    ("/api/v1/benchmark-runs/{run_id}", "/api/v1/benchmark-runs/nosuch"),
    ("/api/v1/workers", "/api/v1/workers"),
]


@pytest.mark.parametrize(("template", "url"), READS, ids=[u for _, u in READS])
def test_reads_answer_as_documented(
    read_client: TestClient, spec: dict[str, Any], template: str, url: str
) -> None:
    _conforms(spec, template, read_client.get(url))


QUESTIONS: list[dict[str, Any]] = [
    {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4}, "limit": 3},
    {"workload": {"preset": "llama-3.1-70b", "task": "serving"}, "limit": 3, "what_if": True},
    {"workload": {"preset": "llama-3-8b", "task": "fine-tuning"},
     "constraints": {"acquisition": "either"}, "limit": 3},
    {"workload": {"preset": "resnet-50", "task": "training", "dataset_samples": 1_281_167},
     "constraints": {"acquisition": "buy"}, "group_by": "config", "limit": 3},
    {"workload": {"preset": "whisper-large-v3", "task": "inference"}, "limit": 2},
    # no configuration fits: the empty answer, with what would change it
    {"workload": {"preset": "llama-3.1-405b", "task": "inference"},
     "constraints": {"max_gpus": 1, "vendors": ["apple"]}},
    {"workload": {"preset": "llama-3-8b", "batch_size": 0}},  # 422
]  # fmt: skip


@pytest.mark.parametrize("body", QUESTIONS, ids=range(len(QUESTIONS)))
def test_recommendations_answer_as_documented(
    read_client: TestClient, spec: dict[str, Any], body: dict[str, Any]
) -> None:
    _conforms(
        spec, "/api/v1/recommendations", read_client.post("/api/v1/recommendations", json=body)
    )


def test_estimates_and_refused_writes_answer_as_documented(
    read_client: TestClient, spec: dict[str, Any]
) -> None:
    for body in (
        {"workload": {"preset": "llama-3-8b", "task": "serving"}, "gpu": "h100-sxm"},
        {"workload": {"preset": "sdxl", "task": "inference"}, "gpu": "rtx-4090", "num_gpus": 2},
        {"workload": {"preset": "llama-3-8b"}, "gpu": "nosuch"},
    ):
        _conforms(spec, "/api/v1/estimate", read_client.post("/api/v1/estimate", json=body))
    # 415 (not JSON) and 401 (no token) are documented errors too
    form = read_client.post("/api/v1/recommendations", content=b"a=b",
                            headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert form.status_code == 415
    _conforms(spec, "/api/v1/recommendations", form)
    _conforms(spec, "/api/v1/gpus/{slug}", read_client.delete("/api/v1/gpus/h100-sxm"))


def test_writes_answer_as_documented(
    client: TestClient, spec: dict[str, Any], admin: dict[str, str]
) -> None:
    """The write paths on each backend: a report stored, stored again (duplicate), listed,
    shown and deleted; a run started, refused while it waits, shown, listed and cancelled;
    a catalog card added, added again (409), edited and deleted."""
    key = {"Idempotency-Key": "r34ci-1"}
    stored = client.post("/api/v1/device-reports", json=gpu_report(), headers=key)
    assert stored.status_code == 201
    again = client.post("/api/v1/device-reports", json=gpu_report())
    assert again.status_code == 200 and again.json()["duplicate"] is True
    other = client.post("/api/v1/device-reports", json=gpu_report(bf16=700.0), headers=key)
    assert other.status_code == 409
    rid = stored.json()["id"]
    for r in (stored, again, other):
        _conforms(spec, "/api/v1/device-reports", r)
    _conforms(spec, "/api/v1/device-reports", client.get("/api/v1/device-reports"))
    _conforms(
        spec, "/api/v1/device-reports/{report_id}", client.get(f"/api/v1/device-reports/{rid}")
    )
    gone = client.delete(f"/api/v1/device-reports/{rid}", headers=admin)
    assert gone.status_code == 204
    _conforms(spec, "/api/v1/device-reports/{report_id}", gone)

    run = client.post("/api/v1/benchmark-runs", json={"profile": "quick", "label": "r34ci"})
    busy = client.post("/api/v1/benchmark-runs", json={"profile": "quick", "label": "r34ci"})
    assert (run.status_code, busy.status_code) == (202, 409)
    for r in (run, busy, client.get("/api/v1/benchmark-runs")):
        _conforms(spec, "/api/v1/benchmark-runs", r)
    run_id = run.json()["id"]
    _conforms(
        spec, "/api/v1/benchmark-runs/{run_id}", client.get(f"/api/v1/benchmark-runs/{run_id}")
    )
    _conforms(
        spec, "/api/v1/benchmark-runs/{run_id}", client.delete(f"/api/v1/benchmark-runs/{run_id}")
    )
    _conforms(spec, "/api/v1/workers", client.get("/api/v1/workers"))

    card = lab_card()
    for r in (
        client.post("/api/v1/gpus", json=card, headers=admin),
        client.post("/api/v1/gpus", json=card, headers=admin),  # 409
    ):
        _conforms(spec, "/api/v1/gpus", r)
    slug = card["slug"]
    template = "/api/v1/gpus/{slug}"
    _conforms(spec, template, client.patch(f"/api/v1/gpus/{slug}", json={"tdp_w": 300},
                                           headers=admin))  # fmt: skip
    _conforms(spec, template, client.put(f"/api/v1/gpus/{slug}", json=card, headers=admin))
    _conforms(spec, template, client.delete(f"/api/v1/gpus/{slug}", headers=admin))

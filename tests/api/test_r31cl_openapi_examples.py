"""Every request example in the OpenAPI document does what it says when sent as is (the
docs' "Try it out" stores what it sends), and every status an operation answers with is
documented."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.reports.repository import matched_headlines


def _example(spec: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    body = spec["paths"][path][method]["requestBody"]["content"]["application/json"]
    examples = body["examples"]
    assert examples
    value: dict[str, Any] = next(iter(examples.values()))["value"]
    return value


def test_the_upload_example_is_stored_and_calibrates_no_catalog_gpu(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    report = _example(spec, "post", "/api/v1/device-reports")
    r = client.post("/api/v1/device-reports", json=report)
    assert r.status_code == 201, r.text
    out = r.json()
    # a made-up GPU figure stored from the docs had calibrated that GPU's every answer
    assert out["gpu_slug"] is None
    with client.app.state.session_factory() as session:  # type: ignore[attr-defined]
        assert list(matched_headlines(session)) == []


def test_the_upload_examples_figures_are_arithmetic_of_their_shape(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    matmul = _example(spec, "post", "/api/v1/device-reports")["matmul"]
    m, n, k = matmul["reference_shape"]
    for summary in matmul["by_precision"].values():
        fig = summary["reference"]
        # TFLOPS × seconds = 2·m·n·k FLOPs, within the example's rounding
        assert abs(fig["value"] * 1e12 * fig["median_time_s"] / (2 * m * n * k) - 1) < 0.01
        assert fig["p10"] <= fig["value"] <= fig["p90"]


def test_a_duplicate_upload_answers_with_a_documented_status(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    report = _example(spec, "post", "/api/v1/device-reports")
    assert client.post("/api/v1/device-reports", json=report).status_code == 201
    again = client.post("/api/v1/device-reports", json=report)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    responses = spec["paths"]["/api/v1/device-reports"]["post"]["responses"]
    assert "200" in responses and "201" in responses
    assert responses["200"]["content"]["application/json"]["schema"]["$ref"].endswith("ReportOut")

"""Uploading, validating, matching and listing device reports."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from tests.reports.factory import gpu_report


def test_upload_matches_catalog_and_computes_efficiency(client: TestClient) -> None:
    r = client.post("/api/v1/device-reports", json=gpu_report())
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["gpu_slug"] == "h100-sxm"
    peak = client.get(f"/api/v1/gpus/{body['gpu_slug']}").json()["bf16_tflops"]
    best = body["report"]["matmul"]["by_precision"]["bf16"]["best"]
    assert best["efficiency"] == pytest.approx(790.0 / peak, rel=1e-3)
    assert body["headline"]["bf16"] == 790.0

    listed = client.get("/api/v1/device-reports").json()
    assert listed["total"] == 1 and listed["items"][0]["id"] == body["id"]
    assert (
        client.get(f"/api/v1/device-reports/{body['id']}").json()["device_name"]
        == "NVIDIA H100 80GB HBM3"
    )
    by_gpu = client.get(f"/api/v1/device-reports?gpu_slug={body['gpu_slug']}").json()
    assert by_gpu["total"] == 1
    assert client.get("/api/v1/device-reports?gpu_slug=rtx-4090").json()["total"] == 0


def test_figure_above_peak_is_refused_and_not_stored(client: TestClient) -> None:
    # 3x the datasheet peak is a timing error (no synchronisation), never a result.
    r = client.post("/api/v1/device-reports", json=gpu_report(bf16=2900.0))
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"]["field"] == "matmul.by_precision.bf16.reference.value"
    assert "catalog peak" in error["message"]
    assert client.get("/api/v1/device-reports").json()["total"] == 0


def test_figure_the_client_already_rejected_is_stored(client: TestClient) -> None:
    # the bench itself caught the error: the figure claims nothing, the report is honest
    report = gpu_report()
    for key in ("reference", "best"):
        report["matmul"]["by_precision"]["bf16"][key] = {
            "unit": "TFLOPS", "status": "rejected", "reason": "above 1.15 × peak",
            "rejected_value": 2900.0,
        }  # fmt: skip
    r = client.post("/api/v1/device-reports", json=report)
    assert r.status_code == 201, r.text
    assert "bf16" not in r.json()["headline"]


def test_cpu_report_has_no_catalog_match(client: TestClient) -> None:
    report = gpu_report(
        device_name="Intel(R) Xeon(R) CPU", backend="cpu", bf16=0.5, fp32=0.2, bandwidth=10
    )
    r = client.post("/api/v1/device-reports", json=report)
    assert r.status_code == 201, r.text
    assert r.json()["gpu_slug"] is None


def test_manual_match_must_exist(client: TestClient) -> None:
    report = gpu_report() | {
        "catalog_match": {"slug": "no-such-gpu", "name": "x", "matched_by": "manual"}
    }
    r = client.post("/api/v1/device-reports", json=report)
    assert r.status_code == 422
    assert r.json()["error"]["details"]["field"] == "catalog_match.slug"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r.pop("environment"), "environment"),
        (lambda r: r.update(schema_version=99), "schema_version"),
        (lambda r: r["memory"]["best"].update(value=-5.0), "memory.best"),
        (
            lambda r: r["matmul"]["by_precision"]["bf16"]["best"].update(value=5e6),
            "matmul.by_precision.bf16.best",
        ),
    ],
)
def test_invalid_reports_are_422_and_not_stored(
    read_client: TestClient, mutate, field: str
) -> None:
    report = gpu_report()
    mutate(report)
    r = read_client.post("/api/v1/device-reports", json=report)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"].startswith(field)
    assert read_client.get("/api/v1/device-reports").json()["total"] == 0


def test_not_json_is_422(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/device-reports", content=b"{oops", headers={"content-type": "application/json"}
    )
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "body"


def test_size_limit(settings, tmp_path) -> None:
    from app.main import create_app

    app = create_app(settings.model_copy(update={"max_report_bytes": 2000}))
    with TestClient(app) as c:
        big = gpu_report() | {"tips": ["x" * 5000]}
        r = c.post(
            "/api/v1/device-reports",
            content=json.dumps(big).encode(),
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 413
        assert r.json()["error"]["code"] == "payload_too_large"
    app.state.engine.dispose()


def test_upload_token_when_configured(settings) -> None:
    from app.main import create_app

    app = create_app(settings.model_copy(update={"upload_token": "up"}))
    with TestClient(app) as c:
        assert c.post("/api/v1/device-reports", json=gpu_report()).status_code == 401
        assert (
            c.post(
                "/api/v1/device-reports", json=gpu_report(), headers={"Authorization": "Bearer no"}
            ).status_code
            == 403
        )
        ok = c.post(
            "/api/v1/device-reports", json=gpu_report(), headers={"Authorization": "Bearer up"}
        )
        assert ok.status_code == 201
    app.state.engine.dispose()


def test_unknown_report_404(read_client: TestClient) -> None:
    r = read_client.get("/api/v1/device-reports/999")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("url", "field"),
    [
        # found by schemathesis: integers past 64 bits crashed the database driver (500)
        ("/api/v1/device-reports?offset=10668455613785851146797056", "offset"),
        ("/api/v1/device-reports/10668455613785851146797056", "report_id"),
        ("/api/v1/device-reports/0", "report_id"),
    ],
)
def test_huge_or_zero_ids_are_422_not_500(client: TestClient, url: str, field: str) -> None:
    r = client.get(url)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == field


def test_recommendation_with_huge_report_id_is_422(client: TestClient) -> None:
    body = {"workload": {"preset": "bert-base"}, "device_report_id": 10**30}
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "device_report_id"

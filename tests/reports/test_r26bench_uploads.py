"""r26: a CPU run labelled as a GPU is refused and never calibrates it; a re-upload of the
same report stores nothing new and counts as no extra machine."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from app.bench.report import BenchReport, apply_peaks
from app.reports import service
from tests.domain.fixtures import H100
from tests.reports.factory import gpu_report


def _cpu_labelled_h100() -> dict[str, Any]:
    report = gpu_report(device_name="AMD EPYC 7B13", fp32=0.03, bf16=0.01, bandwidth=20.0,
                        backend="cpu")  # fmt: skip
    report["environment"]["device_memory_bytes"] = None
    report["catalog_match"] = {
        "slug": "h100-sxm",
        "name": "NVIDIA H100 SXM",
        "matched_by": "manual",
    }
    return report


def test_a_cpu_run_with_a_gpu_slug_is_refused_naming_the_field(client: TestClient) -> None:
    r = client.post("/api/v1/device-reports", json=_cpu_labelled_h100())
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"]["field"] == "catalog_match.slug"
    assert "environment.backend is 'cpu'" in error["message"]


def test_a_stored_cpu_report_never_calibrates_the_gpu() -> None:
    # stored before uploads were checked: efficiencies against the H100's peaks
    peaks = service.peaks_for(H100)
    report = apply_peaks(BenchReport.model_validate(_cpu_labelled_h100()), peaks)
    assert report.summary_efficiencies()
    assert service.calibration_from(report, H100, "device report 1") is None
    gpu = apply_peaks(BenchReport.model_validate(gpu_report()), peaks)
    assert service.calibration_from(gpu, H100, "device report 2") is not None


def test_the_same_report_uploaded_again_is_the_first_copy(client: TestClient) -> None:
    body = gpu_report()
    first = client.post("/api/v1/device-reports", json=body)
    # the same content in another layout (the indented file `bench --output` writes)
    again = client.post(
        "/api/v1/device-reports",
        content=json.dumps(body, indent=2),
        headers={"Content-Type": "application/json"},
    )
    assert first.status_code == 201 and again.status_code == 200, again.text
    assert again.json()["id"] == first.json()["id"] and again.json()["duplicate"] is True
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert client.get("/api/v1/device-reports").json()["total"] == 1
    other = dict(body, duration_s=13.0)
    assert client.post("/api/v1/device-reports", json=other).status_code == 201


def test_reports_of_one_host_pool_as_one_machine(client: TestClient) -> None:
    for i, bf16 in enumerate((700.0, 710.0, 720.0)):
        body = gpu_report(bf16=bf16)
        body["environment"]["host_id"] = "abc123"
        body["duration_s"] = 10.0 + i
        assert client.post("/api/v1/device-reports", json=body).status_code == 201
    from app.catalog import service as catalog

    factory = client.app.state.session_factory  # type: ignore[attr-defined]
    with factory() as session:
        pooled = service.pooled_calibration(session, catalog.all_specs(session))
    assert pooled is not None
    slug = next(iter(pooled.by_slug))
    assert pooled.by_slug[slug].count == 1

"""Reports with impossible figures are refused with a 422 naming the field, nothing stored;
possible ones are stored (once per idempotency key)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.reports.factory import gemm_point, v2_report


def _refused(client: TestClient, report: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/v1/device-reports", json=report)
    assert r.status_code == 422, r.text
    assert client.get("/api/v1/device-reports").json()["total"] == 0
    error: dict[str, Any] = r.json()["error"]
    return error


def test_a_real_v2_report_keeps_its_points_with_efficiency(client: TestClient) -> None:
    # 4096³ bf16 in 0.2 ms = 687 TFLOPS, under an H100 SXM's 989 dense
    r = client.post("/api/v1/device-reports", json=v2_report(gemm_point()))
    assert r.status_code == 201, r.text
    point = r.json()["report"]["kernels"]["points"][0]
    assert point["efficiency"] == pytest.approx(point["tflops"] / point["peak"])
    assert r.json()["report"]["schema_version"] == 2


def test_a_gemm_faster_than_the_gpu_is_refused(client: TestClient) -> None:
    # the same GEMM in 20 µs would be 6,900 TFLOPS on a 989 TFLOPS part
    error = _refused(client, v2_report(gemm_point(), gemm_point(seconds=2e-5)))
    assert error["details"]["field"] == "kernels.points.1.tflops"
    assert "catalog peak" in error["message"] and "H100" in error["message"]


@pytest.mark.parametrize("seconds", [0.0, -1e-3])
def test_zero_or_negative_time_is_refused(client: TestClient, seconds: float) -> None:
    point = gemm_point() | {"seconds": seconds, "tflops": None}
    error = _refused(client, v2_report(point))
    assert error["details"]["field"] == "kernels.points.0.seconds"


def test_flops_that_do_not_match_the_shape_are_refused(client: TestClient) -> None:
    point = gemm_point() | {"flops": 2 * 4096 * 4096 * 4096 * 8}  # claims 8× the work
    error = _refused(client, v2_report(point))
    assert error["details"]["field"] == "kernels.points.0.flops"
    assert "2·M·N·K" in error["message"]


def test_a_rate_that_is_not_work_over_time_is_refused(client: TestClient) -> None:
    point = gemm_point() | {"tflops": 900.0}  # the shape and time give 687
    error = _refused(client, v2_report(point))
    assert error["details"]["field"] == "kernels.points.0.tflops"


def test_a_zero_figure_time_is_refused(client: TestClient) -> None:
    report = v2_report()
    report["memory"]["best"]["median_time_s"] = 0.0
    error = _refused(client, report)
    assert error["details"]["field"].startswith("memory.best")


def test_a_real_v2_report_is_stored_once_per_key(client: TestClient) -> None:
    headers = {"Idempotency-Key": "kernels-1"}
    first = client.post("/api/v1/device-reports", json=v2_report(gemm_point()), headers=headers)
    again = client.post("/api/v1/device-reports", json=v2_report(gemm_point()), headers=headers)
    assert first.status_code == 201 and again.status_code == 201
    assert again.json()["id"] == first.json()["id"]
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert client.get("/api/v1/device-reports").json()["total"] == 1


def test_a_stored_report_joins_its_gpus_kernel_profile(client: TestClient) -> None:
    from app.catalog.loader import read_gpu_specs
    from app.catalog.profiles import DATA_DIR
    from app.domain.kernel_profiles import profile_efficiency
    from app.reports.service import kernel_profile_store

    gpus = {g.slug: g for g in read_gpu_specs(DATA_DIR)}
    shape = {"m": 4096, "n": 4096, "k": 4096}
    point = gemm_point(seconds=2.5e-4)  # 550 TFLOPS: 0.556 of the 989.4 peak
    assert client.post("/api/v1/device-reports", json=v2_report(point)).status_code == 201
    factory = client.app.state.session_factory  # type: ignore[attr-defined]
    with factory() as session:
        store = kernel_profile_store(session, list(gpus.values()))
    e, basis = profile_efficiency(gpus["h100-sxm"], "gemm", shape, store, gpus)
    assert basis == "measured on this GPU (1 report)"
    assert e == pytest.approx(point["tflops"] / 989.4, rel=1e-3)

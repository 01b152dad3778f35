"""Every stored device report calibrates everyone's answers for that GPU model."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.reports.factory import gpu_report


def _h100_row(client: TestClient) -> dict:
    body = {"workload": {"preset": "bert-large"}, "objective": "fastest", "limit": 200}
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return next(row for row in r.json()["recommendations"] if row["gpu"]["slug"] == "h100-sxm")


def _width(row: dict) -> float:
    """A row's band as a ratio: measured efficiencies narrow it (either edge may equal the
    modelled band's)."""
    return row["uncertainty"]["factor_high"] / row["uncertainty"]["factor_low"]


def test_reports_of_a_gpu_model_pool_into_its_rows(
    client: TestClient, admin: dict[str, str]
) -> None:
    before = _h100_row(client)
    assert "datasheet" in before["provenance"]["throughput"]
    ids = []
    for bf16 in (700.0, 720.0):
        r = client.post("/api/v1/device-reports", json=gpu_report(bf16=bf16))
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    after = _h100_row(client)
    assert "measured on 2 machines" in after["provenance"]["throughput"]
    assert "measured on 2 machines" in after["uncertainty"]["basis"]
    assert after["throughput"]["value"] != before["throughput"]["value"]
    assert _width(after) < _width(before)

    # the pooled figures are cached until a report is stored or deleted
    assert client.delete(f"/api/v1/device-reports/{ids[1]}", headers=admin).status_code == 204
    one = _h100_row(client)
    assert "measured on 1 machine " in one["provenance"]["throughput"]
    assert client.delete(f"/api/v1/device-reports/{ids[0]}", headers=admin).status_code == 204
    assert _h100_row(client) == before


def test_a_reports_kernel_points_move_its_gpus_row_and_narrow_its_band(
    client: TestClient, admin: dict[str, str]
) -> None:
    from tests.reports.factory import gemm_point, v2_report

    def report(*points: dict) -> dict:
        # no bf16 headline: the GEMM figure comes from the kernel points alone
        r = v2_report(*points)
        r["matmul"]["by_precision"].pop("bf16")
        return r

    before = _h100_row(client)
    assert before["provenance"]["gemm_efficiency"] == "published figures for this GPU"
    # its attention runs PyTorch's FlashAttention-2 at the runtime row's Hopper share, not the
    # FlashAttention-3 figure shipped for the H100: no profile provenance for attention
    assert "attention_efficiency" not in before["provenance"]
    assert "measured_on" not in before["provenance"]

    control = client.post("/api/v1/device-reports", json=report())
    assert control.status_code == 201, control.text
    without_points = _h100_row(client)
    assert (
        client.delete(f"/api/v1/device-reports/{control.json()['id']}", headers=admin).status_code
        == 204
    )

    # 8192³ fp16 (the preset's precision) in 2.75 ms: 400 TFLOPS, 0.40 of the H100 SXM's 989
    slow = gemm_point(8192, 8192, 8192, seconds=2.75e-3) | {"dtype": "fp16"}
    r = client.post("/api/v1/device-reports", json=report(slow))
    assert r.status_code == 201, r.text
    after = _h100_row(client)
    assert after["provenance"]["gemm_efficiency"] == "measured on this GPU (1 report)"
    assert after["provenance"]["measured_on"] == "1 machine"
    assert "measured on 1 machine " in after["provenance"]["throughput"]
    # the same report without its GEMM points leaves the GEMMs on the published figures
    assert after["throughput"]["value"] < without_points["throughput"]["value"]
    assert _width(after) < _width(before)

    page = client.get("/recommendations?preset=bert-large&objective=fastest&limit=200")
    assert page.status_code == 200
    assert "data-measured-on" in page.text and "measured on 1 machine" in page.text


@pytest.mark.parametrize(
    "workload",
    [
        {"preset": "llama-3-8b"},
        {"preset": "llama-3-8b", "task": "serving", "serving": {"concurrent_requests": 8}},
    ],
)
def test_an_llm_rows_gemm_efficiency_names_the_kernel_profile(
    client: TestClient, workload: dict
) -> None:
    # LLM inference and serving price their GEMMs from the GPU's kernel profile (as training
    # does), so the row says so rather than "published efficiency priors"
    body = {"workload": workload, "objective": "fastest", "limit": 500}
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    rows = {row["gpu"]["slug"]: row for row in r.json()["recommendations"]}
    row = rows["h100-sxm"]
    assert row["provenance"]["gemm_efficiency"] == "published figures for this GPU"
    assert "GEMM efficiency published figures for this GPU" in row["provenance"]["throughput"]

"""Every stored device report calibrates everyone's answers for that GPU model."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.reports.factory import gpu_report


def _h100_row(client: TestClient) -> dict:
    body = {"workload": {"preset": "bert-large"}, "objective": "fastest", "limit": 200}
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return next(row for row in r.json()["recommendations"] if row["gpu"]["slug"] == "h100-sxm")


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
    assert after["uncertainty"]["factor_high"] < before["uncertainty"]["factor_high"]

    # the pooled figures are cached until a report is stored or deleted
    assert client.delete(f"/api/v1/device-reports/{ids[1]}", headers=admin).status_code == 204
    one = _h100_row(client)
    assert "measured on 1 machine " in one["provenance"]["throughput"]
    assert client.delete(f"/api/v1/device-reports/{ids[0]}", headers=admin).status_code == 204
    assert _h100_row(client) == before

"""The review's case: the cheapest plan for Llama 3 8B at 10 requests/s was ranked first at
95-100 % of its modelled capacity (4 × RX 9070 XT with int4 weights at 95 %), its caveat
saying queueing delay grows without bound there. A rate load's plans are now sized within
80 % of their capacity (more replicas), and a plan past it says why it misses."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _workload(**extra: Any) -> dict[str, Any]:
    return {
        "preset": "llama-3-8b",
        "task": "serving",
        "serving": {"requests_per_s": 10},
        **extra,
    }


def test_ten_requests_per_s_are_planned_within_80_percent(read_client: TestClient) -> None:
    for work in (_workload(), _workload(precision="int4")):
        r = read_client.post(
            "/api/v1/recommendations", json={"workload": work, "objective": "cheapest"}
        )
        assert r.status_code == 200, r.text
        body = r.json()
        rows = body["recommendations"]
        assert rows
        for row in rows:
            sv = row["serving"]
            share = sv["output_tokens_per_s"] / sv["max_output_tokens_per_s"]
            assert share <= 0.8 + 1e-6, (row["gpu"]["slug"], share)
            assert not any("modelled capacity" in w for w in row["warnings"]), row["warnings"]
        # cards no count within max_gpus brings under the margin are out for it, by name
        assert any(
            e["code"] == "misses_targets" and "of modelled capacity > 80 %" in e["reason"]
            for e in body["excluded"]
        )

    # vLLM's int4 on ROCm is experimental (its caveat, read by serving as by inference since
    # 2026-12-06), so the review's card ranks below the supported ones: asked of AMD alone
    r = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": _workload(precision="int4"),
            "objective": "cheapest",
            "constraints": {"vendors": ["amd"]},
        },
    )
    assert r.status_code == 200, r.text
    xt = next(row for row in r.json()["recommendations"] if row["gpu"]["slug"] == "rx-9070-xt")
    assert xt["num_gpus"] >= 5  # 4 carried it at 95 %
    assert xt["serving"]["output_tokens_per_s"] <= 0.8 * xt["serving"]["max_output_tokens_per_s"]


def test_the_reviews_plan_is_estimated_as_a_miss_that_says_why(read_client: TestClient) -> None:
    body = {
        "gpu": "rx-9070-xt",
        "workload": _workload(precision="int4"),
        "constraints": {"num_gpus": 4},
    }
    r = read_client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    row = r.json()["result"]
    assert row["num_gpus"] == 4
    sv = row["serving"]
    assert sv["meets_slo"] is False
    (miss,) = sv["misses"]
    assert miss.startswith("load 95 % of modelled capacity > 80 %")
    assert any("queueing delay grows without bound" in w for w in row["warnings"])

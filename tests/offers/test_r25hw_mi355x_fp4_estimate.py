"""gpt-oss-120b (MXFP4) served by vLLM on an MI355X runs on its MXFP4 matrix cores, as on a
B200, not through weight-only kernels at 16-bit math (compat.fp4_matrix_cores)."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

ASK = {
    "num_gpus": 1,
    "workload": {
        "preset": "gpt-oss-120b",
        "task": "serving",
        "serving": {"concurrent_requests": 64, "prompt_tokens": 1000, "output_tokens": 1000},
    },
}


def _estimate(client: TestClient, gpu: str) -> str:
    r = client.post("/api/v1/estimate", json={"gpu": gpu, **ASK})
    assert r.status_code == 200, r.text
    return json.dumps(r.json())


def test_mi355x_runs_mxfp4_natively(read_client: TestClient) -> None:
    assert "weight-only" not in _estimate(read_client, "mi355x")


def test_mi300x_still_runs_fp4_weight_only(read_client: TestClient) -> None:
    assert "weight-only" in _estimate(read_client, "mi300x")

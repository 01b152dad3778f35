"""A GPU count no single instance holds, for a job that runs as one model over all of its GPUs,
is excluded with its own code (the batch review: 16 H100s read "no price" though H100s are
rented everywhere, 8 to an instance)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_a_count_past_the_largest_instance_is_its_own_reason(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "llama-3.1-405b", "task": "inference", "batch_size": 1},
            "constraints": {"acquisition": "rent", "num_gpus": 16, "allow_4bit": False},
            "objective": "cheapest",
        },
    )
    assert r.status_code == 200, r.text
    codes = {x["slug"]: x["code"] for x in r.json()["excluded"]}
    assert codes.get("h100-sxm") == "instance_too_small"
    reason = next(x["reason"] for x in r.json()["excluded"] if x["slug"] == "h100-sxm")
    assert "one instance has at most 8" in reason

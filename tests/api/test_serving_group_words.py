"""A serving group that exists for memory is not said to exist for something else (regression
hunt, 2026-12-05: Llama 3.1 8B's 16 GB of weights on 2 × 12 GB cards read "not for memory")."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_a_group_no_half_of_which_holds_the_weights_is_not_said_to_be_for_latency(
    client: TestClient,
) -> None:
    body = {
        "workload": {
            "preset": "llama-3.1-8b",
            "task": "serving",
            "serving": {"concurrent_requests": 2, "prompt_tokens": 500, "output_tokens": 200},
        },
        "constraints": {"acquisition": "rent"},
        "limit": 60,
        "group_by": "config",
    }
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    rows = r.json()["recommendations"]
    small = [
        x for x in rows if x["gpu"]["memory_gb"] <= 16 and x["serving"]["gpus_per_replica"] == 2
    ]
    assert small  # 16 GB of weights need both cards
    for row in small:
        assert not any("not for memory" in t for t in row["tips"]), row["gpu"]["slug"]
    roomy = [x for x in rows if any("not for memory" in t for t in x["tips"])]
    assert roomy  # where half the group holds it all, the words stay
    # half of each such group holds the 16 GB of weights: 24 GB cards in pairs, or four
    assert all(x["gpu"]["memory_gb"] * x["serving"]["gpus_per_replica"] / 2 > 16 for x in roomy)

"""A rented row's instance has the host RAM its model needs to load (cost.HostNeed), through
the API on the shipped offers: cudo lists each card with 4 GiB hosts beside 8 GiB ones."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _rented(client: TestClient, preset: str) -> dict[str, dict[str, Any]]:
    body = {
        "workload": {"preset": preset, "task": "inference"},
        "constraints": {"acquisition": "rent", "providers": ["cudo"]},
        "objective": "cheapest",
        "limit": 50,
    }
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return {row["gpu"]["slug"]: row["offer"] for row in r.json()["recommendations"]}


def test_a_16_gb_model_is_not_rented_a_4_gib_host_a_small_one_is(
    read_client: TestClient,
) -> None:
    listed = {
        o["instance_type"]: o
        for o in read_client.get(
            "/api/v1/offers",
            params={"gpu": "h100-sxm", "kind": "cloud", "provider": "cudo", "limit": 500},
        ).json()["items"]
    }
    tiny, roomy = listed["sapphire-rapids-h100_1x2v4gb"], listed["sapphire-rapids-h100_1x4v8gb"]
    assert tiny["ram_gib"] == 4.0 and roomy["ram_gib"] == 8.0
    assert tiny["usd_per_hour"] < roomy["usd_per_hour"]  # the 4 GiB host is the cheaper

    # Llama 3 8B: 16 GB of bf16 weights, read 5 GB a file at a time, over 4 GiB
    llama = _rented(read_client, "llama-3-8b")["h100-sxm"]
    assert llama["instance_type"] == "sapphire-rapids-h100_1x4v8gb"
    # ResNet-50's 0.1 GB loads on the cheaper host
    resnet = _rented(read_client, "resnet-50")["h100-sxm"]
    assert resnet["instance_type"] == "sapphire-rapids-h100_1x2v4gb"

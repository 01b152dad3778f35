"""The 4-bit 'fewer cards' advice is for a model one card cannot hold: two MI300X picked for a
70B that one holds need no such remedy (regression hunt)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _advice(client: TestClient, gpu: str) -> list[str]:
    work = {"preset": "llama-3.3-70b", "task": "inference", "runtime": "vllm", "batch_size": 8}
    r = client.post("/api/v1/estimate", json={"gpu": gpu, "num_gpus": 2, "workload": work})
    assert r.status_code == 200, r.text
    return list(r.json()["advice"])


def test_fewer_cards_advice_only_where_one_card_cannot_hold_the_model(
    read_client: TestClient,
) -> None:
    assert not any("4-bit weights" in a for a in _advice(read_client, "mi300x"))  # 192 GB
    assert any(
        "4-bit weights" in a and "fewer cards" in a for a in _advice(read_client, "h100-sxm")
    )

"""A stated Megatron pipeline through POST /api/v1/recommendations (issue #21): its
micro-batches follow Megatron's rule (global batch ÷ (micro-batch × DP)) and its memory per
GPU Megatron's own estimate, so Llama 3 70B under TP8 PP4 fits 32 GPUs of 80 GB."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

_70B = {
    "preset": "llama-3-70b",
    "task": "training",
    "precision": "bf16",
    "runtime": "megatron",
    "seq_len": 8192,
    "megatron_layout": {"tensor_parallel": 8, "pipeline_parallel": 4},
}
_ON_32 = {"num_gpus": 32, "max_gpus": 32, "vendors": ["nvidia"]}


def _rows(client: TestClient, batch: int) -> list[dict]:
    r = client.post(
        "/api/v1/recommendations",
        json={"workload": {**_70B, "batch_size": batch}, "constraints": _ON_32, "limit": 5},
    )
    assert r.status_code == 200, r.text
    rows: list[dict] = r.json()["recommendations"]
    assert rows
    return rows


def _bubble(row: dict) -> float:
    text = " ".join(row["explanation"])
    hit = re.search(
        r"Megatron TP8 PP4 VP1 CP1 × DP1, distributed optimizer \(pipeline bubble "
        r"(\d+)%\)",
        text,
    )
    assert hit, text
    return float(hit.group(1)) / 100


def test_a_tp8_pp4_pipeline_of_a_256_sequence_batch_has_a_small_bubble(
    read_client: TestClient,
) -> None:
    rows = _rows(read_client, 256)
    for row in rows:
        # m = 256 / (micro-batch x DP 1) >= 32 micro-batches: (p - 1)/m <= 3/32
        assert _bubble(row) <= 0.1, row["explanation"]
        assert not any("pipeline underfilled" in w for w in row["warnings"])
        assert row["num_gpus"] == 32
    h100 = [r for r in rows if r["gpu"]["memory_gb"] == 80]
    assert all(r["memory"]["required_gb"] <= r["memory"]["available_gb"] for r in h100)


def test_a_batch_too_small_for_the_pipeline_says_so(read_client: TestClient) -> None:
    for row in _rows(read_client, 2):
        assert _bubble(row) == 1.5  # (4 - 1) / 2, priced as Megatron would run it
        assert any("pipeline underfilled" in w for w in row["warnings"]), row["warnings"]


def test_a_stated_layouts_micro_batch_is_said_per_data_parallel_replica(read_client) -> None:
    """Under TP8 × PP2 the 16 GPUs of a replica work on the same samples: "micro-batches of 128
    (2 per GPU; …)" read as if each GPU ran two samples of its own."""
    w = {"preset": "llama-3.1-70b", "task": "training", "runtime": "megatron", "batch_size": 512,
         "seq_len": 4096, "dataset_samples": 100000, "gradient_checkpointing": False,
         "megatron_layout": {"tensor_parallel": 8, "pipeline_parallel": 2}}  # fmt: skip
    r = read_client.post(
        "/api/v1/estimate", json={"workload": w, "gpu": "h100-sxm", "constraints": {"num_gpus": 64}}
    )
    assert r.status_code == 200, r.text
    res = r.json()["result"]
    said = " ".join(res["explanation"])
    replicas = 64 // 16
    each = -(-res["micro_batch"] // replicas)
    assert f"({each} per data-parallel replica of 16 GPUs;" in said
    assert "per GPU;" not in said

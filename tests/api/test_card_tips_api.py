"""Per-card tips the reviews asked for (2026-12-05): an Intel GPU's PyTorch row says how
PyTorch is installed there; a card whose 16-bit math runs at its FP32 rate says so."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _row(client: TestClient, gpu: str, workload: dict[str, Any]) -> dict[str, Any]:
    body = {"gpu": gpu, "workload": workload, "constraints": {"num_gpus": 1}}
    r = client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    res: dict[str, Any] = r.json()["result"]
    return res


def test_an_intel_gpu_row_says_how_pytorch_is_installed(client: TestClient) -> None:
    res = _row(client, "arc-b580", {"preset": "resnet-50", "task": "inference", "batch_size": 8})
    assert any("download.pytorch.org/whl/xpu" in t for t in res["tips"])
    assert not any("whl/xpu" in w for w in res["warnings"])  # a tip, not the verdict's caveat
    cuda = _row(client, "rtx-4090", {"preset": "resnet-50", "task": "inference", "batch_size": 8})
    assert not any("whl/xpu" in t for t in cuda["tips"])


def test_a_pascal_card_says_it_runs_16_bit_work_at_fp32_speed(client: TestClient) -> None:
    res = _row(
        client, "tesla-p40", {"preset": "resnet-50", "task": "training", "precision": "bf16"}
    )
    assert any("at FP32 speed (fp16 storage), not bf16" in t for t in res["tips"])
    assert not any("runs this job at fp16, not bf16" in t for t in res["tips"])

"""A preset's epochs are its own task's recipe (lab PI's review: ViT-B/16 asked for training
took its 10 fine-tuning epochs, so training it from scratch read 2.2 h on one A100 where
DeiT's recipe is 300 epochs of ImageNet-1k)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _workload(client: TestClient, task: str, **extra: object) -> dict:
    body = {
        "gpu": "a100-sxm4-80gb",
        "num_gpus": 1,
        "workload": {"preset": "vit-b-16", "task": task, **extra},
    }
    r = client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    return dict(r.json()["workload"])


def test_training_a_vit_from_scratch_takes_deits_epochs(read_client: TestClient) -> None:
    trained = _workload(read_client, "training")
    assert trained["epochs"] == 300
    assert "300 epochs" in trained["dataset_basis"] and "DeiT" in trained["dataset_basis"]
    # the preset's own task keeps its recipe, and the user's epochs win over both
    assert _workload(read_client, "fine-tuning")["epochs"] == 10
    assert _workload(read_client, "training", epochs=90)["epochs"] == 90

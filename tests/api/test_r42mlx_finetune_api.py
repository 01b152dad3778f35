"""Fine-tuning under MLX (mlx-lm's LoRA / QLoRA) through the one engine: Apple rows ranked,
one device a row, the adapted blocks said; what mlx-lm does not run here is a 422 naming the
field that asked for it."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

JOB = {"preset": "llama-3.1-8b", "task": "fine-tuning", "runtime": "mlx"}


def _answer(client: TestClient, **workload: Any) -> dict[str, Any]:
    r = client.post("/api/v1/recommendations", json={"workload": {**JOB, **workload}})
    assert r.status_code == 200, r.text
    return dict(r.json())


def _refused(client: TestClient, **workload: Any) -> tuple[str, str]:
    r = client.post("/api/v1/recommendations", json={"workload": {**JOB, **workload}})
    assert r.status_code == 422, r.text
    return repr(r.json()), r.text


@pytest.mark.parametrize("peft", ["lora", "qlora"])
def test_mlx_fine_tuning_ranks_apple_rows_first_each_on_one_device(
    read_client: TestClient, peft: str
) -> None:
    body = _answer(read_client, peft=peft)
    rows = body["recommendations"]
    assert rows, body.get("empty")
    assert rows[0]["gpu"]["vendor"] == "apple"
    assert all(r["num_gpus"] == 1 for r in rows)
    resolved = body["workload"]
    assert resolved["runtime"] == "mlx" and resolved["lora_layers"] == 16
    # mlx_lm.lora's --grad-checkpoint is off unless asked
    assert resolved["gradient_checkpointing"] is False
    if peft == "qlora":
        assert resolved["weight_bits"] == pytest.approx(4.5)
    # the adapters said as mlx-lm trains them, not as PEFT's target_modules
    said = " ".join(body.get("warnings") or [])
    assert "last 16 of 32 blocks, as mlx_lm.lora adapts them" in said
    assert "PEFT's default" not in said


def test_qlora_under_mlx_fits_macs_lora_does_not(read_client: TestClient) -> None:
    lora = {r["gpu"]["slug"] for r in _answer(read_client, peft="lora")["recommendations"]}
    qlora = {r["gpu"]["slug"] for r in _answer(read_client, peft="qlora")["recommendations"]}
    # a 16 GB Mac holds the 4.5-bit base, not the 16-bit one
    assert "apple-m2" in qlora and "apple-m2" not in lora


def test_fewer_adapted_blocks_need_less_memory(read_client: TestClient) -> None:
    def need(k: int) -> float:
        body = _answer(read_client, peft="lora", lora_layers=k, batch_size=1, seq_len=1024)
        row = next(r for r in body["recommendations"] if r["gpu"]["slug"] == "apple-m4-max")
        return float(row["memory"]["breakdown"]["activations"])

    assert need(4) < need(16) < need(32)


@pytest.mark.parametrize(
    ("workload", "field", "words"),
    [
        ({"peft": "none"}, "workload.runtime", "--fine-tune-type full"),
        ({"task": "training"}, "workload.runtime", "pretraining"),
        ({"preset": "resnet-50", "peft": "lora"}, "workload.runtime", "decoder"),
        ({"peft": "qlora", "quantization": "nf4"}, "workload.quantization", "affine 4-bit"),
        ({"peft": "lora", "lora_layers": 40}, "workload.lora_layers", "32 blocks"),
    ],
)
def test_what_mlx_does_not_run_is_a_422_naming_the_field(
    read_client: TestClient, workload: dict[str, Any], field: str, words: str
) -> None:
    text, raw = _refused(read_client, **workload)
    assert field in text, raw
    assert words in raw, raw


def test_lora_layers_under_pytorch_is_said_to_be_ignored(read_client: TestClient) -> None:
    body = _answer(read_client, runtime="pytorch", peft="lora", lora_layers=8)
    assert body["workload"]["lora_layers"] is None
    said = " ".join(body.get("warnings") or [])
    assert "lora_layers only applies to runtime mlx" in said

"""A llama.cpp layer split is sized on its first GPU, which holds a layer more than an even share
(load_tensors counts the output layer as one more unit of the split: llamacpp-layer-assignment);
Accelerate's device_map keeps ⌈layers ÷ n⌉."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _memory(client: TestClient, runtime: str, n: int) -> dict[str, Any]:
    work = {"preset": "llama-3-70b", "task": "inference", "runtime": runtime, "batch_size": 1}
    body = {"gpu": "a100-sxm4-80gb", "num_gpus": n, "workload": work}
    r = client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    assert result is not None
    return dict(result["memory"])


def test_llama_cpp_puts_21_of_80_layers_on_the_first_of_four_gpus(read_client: TestClient) -> None:
    llama = _memory(read_client, "llama.cpp", 4)
    assert any("fullest GPU holds 21 of the 80 layers" in n for n in llama["notes"])
    # 80 = 4 × 20 under device_map: an even share, no note
    hf = _memory(read_client, "transformers", 4)
    assert not any("fullest GPU" in n for n in hf["notes"])

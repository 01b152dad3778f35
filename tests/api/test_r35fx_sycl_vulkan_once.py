"""A llama.cpp row on an Arc's SYCL build names the Vulkan build once, in its gated tip
(rank.VULKAN_ALTERNATIVE, where the rules offer the build), not also in the backend's words
(vocab.RUNTIME_BACKEND_WORDS), which reach a Data Center GPU Max that is not offered it."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.vocab import RUNTIME_BACKEND_WORDS

BASE = {"preset": "llama-3-8b", "task": "inference", "quantization": "q4_k_m", "batch_size": 1}


def test_the_sycl_words_claim_no_vulkan_build() -> None:
    assert "Vulkan" not in RUNTIME_BACKEND_WORDS[("llama.cpp", "xpu")]


def test_an_arc_row_names_the_vulkan_build_once(read_client: TestClient) -> None:
    body = {"workload": {**BASE, "runtime": "llama.cpp"}, "gpu": "arc-b580"}
    r = read_client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["result"]["backend"] == "xpu"
    assert r.text.count("Vulkan build") == 1

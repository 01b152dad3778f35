"""A serving request pinned to llama.cpp's Vulkan build is refused naming the field the user
wrote: runtime 'llama.cpp-vulkan' -> workload.runtime (use runtime 'llama.cpp'); runtime
'llama.cpp' with gpu_backend 'vulkan' -> workload.gpu_backend (leave it out, not "use runtime
'llama.cpp'", which they did); another runtime with the pin -> workload.gpu_backend, the
runtime named (app/recommend/workloads._gpu_backend)."""

from __future__ import annotations

from fastapi.testclient import TestClient

SERVING = {"preset": "llama-3-8b", "task": "serving", "serving": {"concurrent_requests": 8}}


def _refusal(client: TestClient, workload: dict) -> dict:
    r = client.post("/api/v1/recommendations", json={"workload": workload})
    assert r.status_code == 422, r.text
    return r.json()


def _text(body: dict) -> str:
    return repr(body)


def test_runtime_llama_cpp_vulkan_on_serving_names_the_runtime(read_client: TestClient) -> None:
    body = _refusal(read_client, {**SERVING, "runtime": "llama.cpp-vulkan"})
    text = _text(body)
    assert "workload.runtime" in text and "use runtime 'llama.cpp'" in text
    assert "workload.gpu_backend" not in text


def test_a_gpu_backend_pin_on_llama_cpp_serving_names_the_pin(read_client: TestClient) -> None:
    body = _refusal(read_client, {**SERVING, "runtime": "llama.cpp", "gpu_backend": "vulkan"})
    text = _text(body)
    assert "workload.gpu_backend" in text and "leave gpu_backend out" in text
    assert "use runtime 'llama.cpp'" not in text and "workload.runtime" not in text


def test_a_gpu_backend_pin_on_vllm_serving_names_the_runtime_it_runs(
    read_client: TestClient,
) -> None:
    body = _refusal(read_client, {**SERVING, "runtime": "vllm", "gpu_backend": "vulkan"})
    text = _text(body)
    assert "workload.gpu_backend" in text and "runtime vllm runs on the GPU's own backend" in text
    assert "use runtime 'llama.cpp'" not in text

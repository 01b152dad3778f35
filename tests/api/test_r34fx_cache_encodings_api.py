"""workload.cache_encodings through the API: false keeps the text encoders and VAE on the GPU
(a FLUX.1 QLoRA then does not fit a 16 GB card, which the planner's cache had let it), true
caches them where the job would fit without, and a contradiction is a 422 naming the field."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

CACHED = "cached text-encoder outputs and latents"
FLUX = {"preset": "flux-1-dev", "task": "fine-tuning", "peft": "qlora", "batch_size": 1}
SDXL = {"preset": "sdxl", "task": "fine-tuning", "peft": "lora", "batch_size": 1}


def _estimate(client: TestClient, gpu: str, workload: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/v1/estimate", json={"gpu": gpu, "workload": workload})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_false_refuses_the_cache_the_planner_would_add(read_client: TestClient) -> None:
    left = _estimate(read_client, "rtx-4060-ti-16gb", FLUX)["result"]
    assert left is not None and CACHED in left["memory_savers"]
    refused = _estimate(read_client, "rtx-4060-ti-16gb", {**FLUX, "cache_encodings": False})
    assert refused["result"] is None
    assert refused["excluded"]["code"] == "does_not_fit"


def test_true_caches_where_the_job_fits_without(read_client: TestClient) -> None:
    held = _estimate(read_client, "rtx-4090", SDXL)["result"]
    cached = _estimate(read_client, "rtx-4090", {**SDXL, "cache_encodings": True})["result"]
    assert held is not None and cached is not None
    assert any("weights include" in n for n in held["memory"]["notes"])
    assert any("not held" in n for n in cached["memory"]["notes"])
    assert cached["memory"]["required_gb"] < held["memory"]["required_gb"]


def test_cache_encodings_on_inference_is_a_422_naming_it(read_client: TestClient) -> None:
    job = {"preset": "sdxl", "task": "inference", "cache_encodings": True}
    r = read_client.post("/api/v1/estimate", json={"gpu": "rtx-4090", "workload": job})
    assert r.status_code == 422
    assert r.json()["error"]["details"]["field"] == "workload.cache_encodings"


def test_the_openapi_schema_describes_the_field(read_client: TestClient) -> None:
    schemas = read_client.get("/openapi.json").json()["components"]["schemas"]
    workload = next(v for k, v in schemas.items() if k.startswith("WorkloadIn"))
    prop = workload["properties"]["cache_encodings"]
    assert "network_train_unet_only" in prop["description"]

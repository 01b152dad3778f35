"""/estimate on the verifier's two cases: Llama 3 70B QLoRA at its default batch on 2 × RTX
3090 (the sharded figure at the one-GPU figure's micro-batch, the offload route said) and Llama
3 70B in Q4_K_M under Transformers (a 422 naming workload.quantization, as serving answers)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def test_an_excluded_sharded_fine_tune_quotes_a_per_gpu_need_below_one_gpus(
    read_client: TestClient,
) -> None:
    body = {"workload": {"preset": "llama-3-70b", "task": "fine-tuning", "peft": "qlora"},
            "gpu": "rtx-3090", "num_gpus": 2}  # fmt: skip
    r = read_client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    excluded = r.json()["excluded"]
    assert excluded["code"] == "does_not_fit"
    why = excluded["reason"]
    one = re.search(r"needs ([\d.]+) GiB on one GPU", why)
    per = re.search(r"\(([\d.]+) GiB per GPU on 2, at micro-batches of 2", why)
    assert one is not None and per is not None, why
    assert float(per.group(1)) < float(one.group(1))
    assert "fits with FSDP CPU offload of the parameters" in why


def test_a_gguf_format_under_transformers_is_refused_for_inference(read_client: TestClient) -> None:
    workload = {"preset": "llama-3-70b", "task": "inference", "quantization": "q4_k_m",
                "runtime": "transformers", "batch_size": 1}  # fmt: skip
    r = read_client.post(
        "/api/v1/estimate", json={"workload": workload, "gpu": "rtx-3080-10gb", "num_gpus": 8}
    )
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["details"]["field"] == "workload.quantization"
    assert "dequantising" in err["message"] and "set runtime llama.cpp" in err["message"]

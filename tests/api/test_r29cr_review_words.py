"""The closing review's word fixes, through the API: a runtime caveat names the backend as
the runtime reaches it, and FSDP offload's copies are per micro-step where the hint runs
micro-batches."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def test_onnx_runtime_on_a_mac_is_coreml_not_mps(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "resnet-50", "task": "inference", "runtime": "onnxruntime"},
            "constraints": {"vendors": ["apple"]},
        },
    )
    assert r.status_code == 200, r.text
    warnings = [w for x in r.json()["recommendations"] for w in x["warnings"]]
    said = [w for w in warnings if w.startswith("ONNX Runtime on ")]
    assert said and all("CoreML execution provider" in w for w in said)
    assert not any("ONNX Runtime on MPS" in w or "onnxruntime on mps" in w for w in warnings)


def test_offload_copies_are_per_micro_step_with_the_count_to_an_optimizer_step(
    read_client: TestClient,
) -> None:
    r = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "llama-3.1-70b", "task": "fine-tuning", "peft": "qlora"},
            "constraints": {"max_gpus": 2, "vendors": ["nvidia"]},
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    batch = body["workload"]["batch_size"]
    reasons = [x["reason"] for x in body["excluded"] if "CPU offload" in x["reason"]]
    assert reasons
    seen = 0
    for reason in reasons:
        # the offload clause's own count and micro-batch (the sharded figure before it has its own)
        on = re.search(r"GiB per GPU on (?:one GPU|(\d+) GPUs) at micro-batches of (\d+)", reason)
        if on is None:
            continue
        n, micro = int(on.group(1) or 1), int(on.group(2))
        m = re.search(r"each micro-step \(([\d,]+) to an optimizer step\) copies", reason)
        assert m, reason
        assert int(m.group(1).replace(",", "")) == -(-batch // (micro * n))
        seen += 1
    assert seen

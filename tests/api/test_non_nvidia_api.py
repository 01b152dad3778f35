"""What an AMD, Intel or Apple user asks, end to end: vLLM's AWQ/GPTQ on an MI210 answered
alike for inference and serving, bf16 training on an M1 Max no faster than fp32 and saying
why, and Macs serving eight users through mlx_lm.server's batching."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _estimate(client: TestClient, gpu: str, workload: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/v1/estimate", json={"gpu": gpu, "workload": workload})
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_vllm_awq_and_gptq_on_an_mi210_answer_alike_for_inference_and_serving(
    read_client: TestClient,
) -> None:
    base = {"preset": "llama-3.1-70b", "runtime": "vllm"}
    for quant in ("awq", "gptq"):
        infer = _estimate(
            read_client, "mi210", {**base, "task": "inference", "quantization": quant}
        )
        assert infer["result"] is not None and infer["result"]["precision"] == "int4"
        # one rule for both tasks: inference says what the rule says (it had said 'supported')
        assert infer["result"]["framework_status"] == "experimental"
        assert any("vLLM on ROCm loads AWQ" in w for w in infer["warnings"]), infer["warnings"]
        serve = _estimate(
            read_client,
            "mi210",
            {**base, "task": "serving", "quantization": quant,
             "serving": {"concurrent_requests": 8}},
        )  # fmt: skip
        # serving had refused it as "does_not_fit" ("AWQ and GPTQ kernels are not supported")
        excluded = serve["excluded"]
        assert excluded is None or "not supported on AMD" not in excluded["reason"], excluded


def test_bf16_training_on_an_m1_max_is_no_faster_than_fp32_and_says_why(
    read_client: TestClient,
) -> None:
    got = {}
    for p in ("fp32", "bf16"):
        res = _estimate(read_client, "apple-m1-max", {"preset": "resnet-50", "precision": p})
        got[p] = res["result"]
    assert got["bf16"]["throughput"]["value"] <= got["fp32"]["throughput"]["value"]
    assert any("macOS 14" in w for w in got["bf16"]["warnings"])
    assert not any("macOS 14" in w for w in got["fp32"]["warnings"])


def test_macs_serve_eight_users_batched_by_mlx_lm_server(read_client: TestClient) -> None:
    body = {
        "workload": {"preset": "llama-3-8b", "task": "serving",
                     "serving": {"concurrent_requests": 8}},
        "constraints": {"vendors": ["apple"]},
    }  # fmt: skip
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    rows = r.json()["recommendations"]
    assert rows, r.json()["excluded"][:3]  # every Mac had been excluded (one request at a time)
    for row in rows:
        sv = row["serving"]
        assert sv["runtime"] == "mlx" and sv["max_concurrency"] > 1
        assert sv["deploy"]["command"].startswith("mlx_lm.server --model ")


def test_gaudi_attention_is_fused_so_its_bytes_do_not_grow_with_the_sequence(
    read_client: TestClient,
) -> None:
    """Llama 3 8B training on 8 Gaudi 3s: the score matrix had gone through memory (memory
    time 0.92 -> 4.50 s from 1k to 8k tokens, 'limited by memory bandwidth'); Gaudi's FusedSDPA
    keeps it on chip, as FlashAttention does, so the memory time does not grow and the compute
    time grows with the attention FLOPs."""
    timing = {}
    for seq in (1024, 8192):
        r = read_client.post(
            "/api/v1/estimate",
            json={
                "gpu": "gaudi3",
                "workload": {"preset": "llama-3-8b", "task": "training", "batch_size": 64,
                             "seq_len": seq},
                "constraints": {"num_gpus": 8},
            },
        )  # fmt: skip
        assert r.status_code == 200, r.text
        timing[seq] = r.json()["result"]["timing"]
    # at most the same: the longer sequence's more micro-steps each carry a smaller share of
    # the once-per-optimizer-step update's bytes, so its memory time may fall a little
    assert timing[8192]["memory_s"] <= timing[1024]["memory_s"] * 1.05
    assert timing[8192]["compute_s"] > timing[1024]["compute_s"]


def test_eight_mi300as_are_two_nodes_linked_inside_by_infinity_fabric(
    read_client: TestClient,
) -> None:
    """An MI300A node is its 4 APUs: 8 span two, each linked inside by Infinity Fabric (the
    words had named the network as the link inside, taking 8 GPUs for a server)."""
    r = read_client.post(
        "/api/v1/estimate",
        json={
            "gpu": "mi300a",
            "workload": {"preset": "llama-3-8b", "task": "training"},
            "constraints": {"num_gpus": 8},
        },
    )
    assert r.status_code == 200, r.text
    (split,) = [line for line in r.json()["result"]["explanation"] if "servers" in line]
    assert "2 servers, each linked inside by Infinity Fabric, 4 GPUs" in split, split

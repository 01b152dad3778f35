"""The runtime and the weight format as inputs: defaults, echo, per-row naming, bad input."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _post(client: TestClient, workload: dict, **extra: object) -> dict:
    body = {"workload": workload, "limit": 3, **extra}
    r = client.post(
        "/api/v1/recommendations", json={k: v for k, v in body.items() if v is not None}
    )
    assert r.status_code == 200, r.text
    return r.json()


def test_defaults_are_named_on_the_workload_and_every_row(read_client: TestClient) -> None:
    train = _post(read_client, {"preset": "resnet-50"})
    assert train["workload"]["runtime"] == "pytorch"
    llm = _post(read_client, {"preset": "llama-3-8b", "task": "inference"})
    assert llm["workload"]["runtime"] == "transformers"
    for row in llm["recommendations"]:
        assert row["runtime"] == "transformers" and row["backend"]
        assert any("Hugging Face Transformers" in line for line in row["explanation"])


def test_gguf_format_runs_on_llama_cpp_with_its_bits(read_client: TestClient) -> None:
    body = _post(
        read_client, {"preset": "llama-3-8b", "task": "inference", "quantization": "q4_k_m"}
    )
    w = body["workload"]
    assert (w["runtime"], w["precision"], w["quantization"]) == ("llama.cpp", "int4", "q4_k_m")
    assert 4.8 <= w["weight_bits"] <= 4.9
    gib = 8.03e9 * w["weight_bits"] / 8 / 1e9
    assert all(r["memory"]["required_gb"] > gib for r in body["recommendations"])


def test_a_graph_runtime_decodes_faster_than_eager(read_client: TestClient) -> None:
    base = {"preset": "llama-3-8b", "task": "inference", "batch_size": 1}
    eager = _post(read_client, base, objective="fastest")["recommendations"][0]
    vllm = _post(read_client, {**base, "runtime": "vllm"}, objective="fastest")["recommendations"][
        0
    ]
    assert vllm["throughput"]["value"] > 1.5 * eager["throughput"]["value"]
    # on the same card, vLLM makes 90 % of it usable (gpu_memory_utilization 0.9)
    slug = vllm["gpu"]["slug"]
    n = {"num_gpus": vllm["num_gpus"]}
    r = read_client.post("/api/v1/estimate", json={"workload": base, "gpu": slug, "constraints": n})
    assert r.status_code == 200, r.text
    assert vllm["memory"]["available_gb"] < r.json()["result"]["memory"]["available_gb"]


def test_contradictions_name_the_field(read_client: TestClient) -> None:
    cases = [
        ({"preset": "resnet-50", "runtime": "vllm"}, "workload.runtime"),
        (
            {
                "preset": "llama-3-8b",
                "task": "inference",
                "quantization": "gptq",
                "runtime": "llama.cpp",
            },
            "workload.quantization",
        ),
        (
            {
                "preset": "llama-3-8b",
                "task": "inference",
                "quantization": "q8_0",
                "precision": "int4",
            },
            "workload.quantization",
        ),
        (
            {"preset": "llama-3-8b", "task": "fine-tuning", "quantization": "awq"},
            "workload.quantization",
        ),
        ({"preset": "llama-3-8b", "runtime": "nope"}, "workload.runtime"),
    ]
    for workload, field in cases:
        r = read_client.post("/api/v1/recommendations", json={"workload": workload})
        assert r.status_code == 422, (workload, r.text)
        assert r.json()["error"]["details"]["field"] == field, (workload, r.json())


def test_megatron_trains_on_nvidia_and_is_refused_for_inference(read_client: TestClient) -> None:
    body = _post(
        read_client,
        {"preset": "llama-3-8b", "task": "training", "precision": "bf16", "runtime": "megatron"},
    )
    assert body["workload"]["runtime"] == "megatron"
    rows = body["recommendations"]
    assert rows and all(r["runtime"] == "megatron" for r in rows)
    r = read_client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": "llama-3-8b", "task": "inference", "runtime": "megatron"}},
    )
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["details"]["field"] == "workload.runtime"
    assert "training runtime" in err["message"]
    cnn = read_client.post(
        "/api/v1/recommendations", json={"workload": {"preset": "resnet-50", "runtime": "megatron"}}
    )
    assert cnn.status_code == 422, cnn.text
    assert cnn.json()["error"]["details"]["field"] == "workload.runtime"


_MEGATRON = {"preset": "llama-3-8b", "task": "training", "precision": "bf16", "runtime": "megatron"}
_LAYOUT = {"tensor_parallel": 2, "pipeline_parallel": 2, "virtual_stages": 2, "microbatches": 8}


def test_a_stated_megatron_layout_is_priced_and_named(read_client: TestClient) -> None:
    body = _post(
        read_client,
        {**_MEGATRON, "megatron_layout": _LAYOUT},
        constraints={"num_gpus": 8, "vendors": ["nvidia"]},
    )
    rows = body["recommendations"]
    assert rows and all(r["num_gpus"] == 8 for r in rows)
    text = " ".join(rows[0]["explanation"])
    assert "Megatron TP2 PP2 VP2 CP1 × DP2" in text, text


def test_a_stated_layout_keeps_only_the_counts_it_divides(read_client: TestClient) -> None:
    body = _post(
        read_client,
        {**_MEGATRON, "megatron_layout": {"tensor_parallel": 4}},
        group_by="config",
        limit=50,
    )
    rows = body["recommendations"]
    assert rows and all(r["num_gpus"] % 4 == 0 for r in rows), [r["num_gpus"] for r in rows]
    # 16 GPUs per replica, at most 8 GPUs: every card excluded, saying why
    body = _post(
        read_client,
        {**_MEGATRON, "megatron_layout": {"tensor_parallel": 8, "pipeline_parallel": 2}},
    )
    assert not body["recommendations"]
    layout = [e for e in body["excluded"] if "Megatron layout" in e["reason"]]
    assert layout and all(e["code"] == "filtered_out" for e in layout), body["excluded"][:3]


def test_bad_megatron_layouts_name_their_field(read_client: TestClient) -> None:
    cases: list[tuple[dict, dict, str]] = [
        ({"pipeline_parallel": 0}, {}, "workload.megatron_layout.pipeline_parallel"),
        ({"tensor_parallel": -2}, {}, "workload.megatron_layout.tensor_parallel"),
        ({"context_parallel": 1.5}, {}, "workload.megatron_layout.context_parallel"),
        ({"microbatches": 0}, {}, "workload.megatron_layout.microbatches"),
        ({"virtual_stages": 2}, {}, "workload.megatron_layout.virtual_stages"),
        (
            {"tensor_parallel": 4, "pipeline_parallel": 2},
            {"num_gpus": 4},
            "workload.megatron_layout",
        ),
        # TP3 splits none of the model's 32 heads: Megatron's own rule, named on its field
        ({"tensor_parallel": 3}, {"num_gpus": 8}, "workload.megatron_layout.tensor_parallel"),
        ({"expert_parallel": 2}, {}, "workload.megatron_layout.expert_parallel"),
    ]
    for layout, cons, field in cases:
        r = read_client.post(
            "/api/v1/recommendations",
            json={"workload": {**_MEGATRON, "megatron_layout": layout}, "constraints": cons},
        )
        assert r.status_code == 422, (layout, r.text)
        assert r.json()["error"]["details"]["field"] == field, (layout, r.json())
    # a layout without runtime megatron (eager PyTorch by default)
    eager = {**_MEGATRON, "runtime": None, "megatron_layout": {"tensor_parallel": 2}}
    r = read_client.post("/api/v1/recommendations", json={"workload": eager})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == "workload.megatron_layout"
    assert "megatron" in r.json()["error"]["message"]


def test_a_tensorflow_runtime_is_checked_as_tensorflow_whether_or_not_the_framework_says_so(
    read_client: TestClient,
) -> None:
    """ResNet-50 under runtime tensorflow on an M2 Max: 'supported', no caveat, until the
    redundant constraints.framework tensorflow was added, which gave 'experimental' and the
    tensorflow-metal caveat. The runtime's framework decides."""
    answers = []
    for constraints in ({}, {"framework": "tensorflow"}):
        r = read_client.post(
            "/api/v1/estimate",
            json={
                "gpu": "apple-m2-max",
                "workload": {"preset": "resnet-50", "runtime": "tensorflow"},
                "constraints": constraints,
            },
        )
        assert r.status_code == 200, r.text
        body = r.json()
        answers.append((body["result"]["framework_status"], body["warnings"]))
    assert answers[0] == answers[1]
    status, warnings = answers[0]
    assert status == "experimental"
    assert any("tensorflow-metal" in w for w in warnings)

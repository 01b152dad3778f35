"""A model published in a quantised format runs as released (issue 23: keep the published
weights): gpt-oss ships MXFP4 experts and fits one 80 GB GPU so, per its model card."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _ask(client: TestClient, workload: dict, **extra: object) -> dict:
    r = client.post("/api/v1/recommendations", json={"workload": workload, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def test_gpt_oss_is_served_in_its_released_mxfp4_without_a_quality_cost(
    read_client: TestClient,
) -> None:
    serving = {"concurrent_requests": 8}
    body = _ask(
        read_client, {"preset": "gpt-oss-120b", "task": "serving", "serving": serving}, limit=100
    )
    rows = body["recommendations"]
    assert rows and all(r["precision"] == "fp4" for r in rows[:3])
    # one 80 GB card holds the released weights (~68 GB), as the model card says
    assert any(r["num_gpus"] == 1 and r["gpu"]["memory_gb"] == 80 for r in rows)
    said = [w for r in rows for w in r["warnings"] if w.startswith("quality: mxfp4")]
    assert said and all("as the model was released" in w for w in said)
    assert body["memory"]["required_gb"] < 80 and "MXFP4 weights" in body["memory"]["notes"][0]
    # asked for bf16, it runs bf16 and the headline says so
    bf16 = _ask(
        read_client,
        {"preset": "gpt-oss-120b", "task": "serving", "serving": serving, "precision": "bf16"},
    )
    assert all(r["precision"] in ("bf16", "fp16") for r in bf16["recommendations"])
    assert bf16["memory"]["required_gb"] > 200 and "bf16 weights" in bf16["memory"]["notes"][0]


def test_gpt_oss_inference_keeps_mxfp4_and_fine_tuning_starts_from_16_bit(
    read_client: TestClient,
) -> None:
    body = _ask(read_client, {"preset": "gpt-oss-120b", "task": "inference"}, limit=5)
    assert body["workload"]["quantization"] == "mxfp4"
    for row in body["recommendations"]:
        # where the card has no FP4 math the weights stay MXFP4 and run 16-bit: still the
        # release, so no quality cost and no advice to quantise to 4 bits
        assert any("as the model was released" in w for w in row["warnings"])
        assert not any(t.startswith("4-bit weights (") for t in row["tips"])
    tuned = _ask(read_client, {"preset": "gpt-oss-20b", "task": "fine-tuning", "peft": "lora"})
    assert tuned["workload"]["quantization"] in (None, "none")
    assert tuned["workload"]["precision"] == "bf16"
    # a model released in 16 bits is untouched
    llama = _ask(read_client, {"preset": "llama-3-8b", "task": "inference"}, limit=3)
    assert llama["workload"]["quantization"] in (None, "none")


def test_deepseek_runs_its_fp8_release_without_a_cost_measured_on_another_model(
    read_client: TestClient,
) -> None:
    """DeepSeek-V3 publishes only FP8 weights (it trained in FP8): run as released, its rows
    say so rather than citing what FP8 cost Llama-3.1, and the serving headline counts the
    fp8 weights it serves, not a bf16 copy twice their size."""
    body = _ask(read_client, {"preset": "deepseek-v3", "task": "inference"}, limit=5)
    rows = body["recommendations"]
    fp8 = [r for r in rows if r["precision"] == "fp8"]
    assert fp8
    for row in fp8:
        said = [w for w in row["warnings"] if w.startswith("quality: fp8 weights")]
        assert said and all("as the model was released" in w for w in said)
        assert not any("Llama-3.1" in w for w in row["warnings"])
    serving = {"concurrent_requests": 8}
    served = _ask(read_client, {"preset": "deepseek-v3", "task": "serving", "serving": serving})
    assert "fp8 weights" in served["memory"]["notes"][0]
    # 671B parameters at one byte each (plus 16-bit embeddings and head), not two bytes each
    assert 650 < served["memory"]["required_gb"] < 700
    for row in served["recommendations"]:
        assert not any("Llama-3.1" in w for w in row["warnings"])
    # a Llama FP8 checkpoint is Meta's quantisation of a 16-bit model: its cost stays said
    llama = _ask(read_client, {"preset": "llama-3.1-405b", "task": "inference"}, limit=3)
    assert any("Llama-3.1" in w for r in llama["recommendations"] for w in r["warnings"])


def test_gpt_oss_is_served_in_mxfp4_on_one_mi300x_under_vllm(read_client: TestClient) -> None:
    """vLLM's gpt-oss recipe runs the MXFP4 release on MI300X/MI325X/MI355X; the MI300X row was
    sized at bf16 (217.6 GB, refused on one GPU) and two were recommended, with no word."""
    load = {"concurrent_requests": 32, "prompt_tokens": 2000, "output_tokens": 1000}
    body = {
        "workload": {"preset": "gpt-oss-120b", "task": "serving", "serving": load},
        "gpu": "mi300x",
        "constraints": {"num_gpus": 1},
    }
    r = read_client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    out = r.json()["result"]
    assert out is not None and out["num_gpus"] == 1
    assert out["serving"]["weight_precision"] == "fp4"
    assert out["memory"]["required_gb"] < 100
    assert any("has no FP4 matrix cores" in w and "weight-only" in w for w in out["warnings"])

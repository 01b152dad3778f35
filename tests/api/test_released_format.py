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
    body = _ask(read_client, {"preset": "gpt-oss-120b", "task": "serving", "serving": serving})
    rows = body["recommendations"]
    assert rows and all(r["precision"] == "fp4" for r in rows[:3])
    # one 80 GB card holds the released weights (~68 GB), as the model card says
    assert any(r["num_gpus"] == 1 and r["gpu"]["memory_gb"] == 80 for r in rows)
    said = [w for r in rows for w in r["warnings"] if w.startswith("quality: mxfp4")]
    assert said and all("as the model was released" in w for w in said)
    assert body["memory"]["required_gb"] < 80 and "mxfp4 weights" in body["memory"]["notes"][0]
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
        assert not any("4-bit weight quantisation" in t for t in row["tips"])
    tuned = _ask(read_client, {"preset": "gpt-oss-20b", "task": "fine-tuning", "peft": "lora"})
    assert tuned["workload"]["quantization"] in (None, "none")
    assert tuned["workload"]["precision"] == "bf16"
    # a model released in 16 bits is untouched
    llama = _ask(read_client, {"preset": "llama-3-8b", "task": "inference"}, limit=3)
    assert llama["workload"]["quantization"] in (None, "none")

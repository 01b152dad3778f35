"""Encoder serving through the API (issue 21): task 'serving' of an encoder preset answers with
an encoder's rows (tests/api/test_r37enc2_encoder_serving_api.py checks their figures), and
the batch inference beside it still answers (app/domain/serving_encoder.py is the batcher's
model)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_serving_an_encoder_preset_answers_in_its_words(read_client: TestClient) -> None:
    body = {
        "workload": {
            "preset": "bert-large",
            "task": "serving",
            "serving": {"concurrent_requests": 16, "prompt_tokens": 256, "output_tokens": 1},
        }
    }
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["recommendations"][0]["serving"]["kind"] == "encoder"
    assert out["recommendations"][0]["throughput"]["unit"] == "embeddings/s"
    # the output length has no part in an encoder's answer: said, not silently dropped
    assert any("serving.output_tokens" in w and "ignored" in w for w in out["warnings"])


def test_the_inference_it_points_to_answers(read_client: TestClient) -> None:
    body = {
        "workload": {"preset": "bert-large", "task": "inference", "batch_size": 32, "seq_len": 256},
        "objective": "cheapest",
        "limit": 3,
    }
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["recommendations"]

"""Encoder serving through the API (issue 21): until the ranked answer has an encoder's rows
and words, task 'serving' refuses an encoder with a 422 that says what to ask instead, and the
inference it points to answers (app/domain/serving_encoder.py is the batcher's model)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_serving_an_encoder_is_refused_pointing_at_inference(read_client: TestClient) -> None:
    body = {
        "workload": {
            "preset": "bert-large",
            "task": "serving",
            "serving": {"concurrent_requests": 16, "prompt_tokens": 256, "output_tokens": 1},
        }
    }
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 422, r.text
    text = r.text
    assert "workload.task" in text and "decoder LLMs" in text
    assert "embedding model" in text and "task 'inference'" in text


def test_the_inference_it_points_to_answers(read_client: TestClient) -> None:
    body = {
        "workload": {"preset": "bert-large", "task": "inference", "batch_size": 32, "seq_len": 256},
        "objective": "cheapest",
        "limit": 3,
    }
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["recommendations"]

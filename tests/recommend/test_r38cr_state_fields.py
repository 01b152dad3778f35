"""The training-state fields as the closing review found them: an optimizer that steps in
backward keeps no gradient to accumulate (no row, and no tip, splits its batch); Megatron,
whose memory plan holds its own optimizer state, refuses them by name; an inference job may
state their defaults; a serving block that made a non-LLM job a serving question is the
field an error names."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.recommend import schemas as s
from app.recommend.service import _savers_allowed

FULL: dict[str, Any] = {
    "preset": "llama-3.1-8b",
    "task": "fine-tuning",
    "peft": "none",
    "precision": "bf16",
    "batch_size": 128,
}


def test_optimizer_in_backward_leaves_the_engine_no_micro_batching() -> None:
    assert "micro_batch" in _savers_allowed(s.WorkloadIn(**FULL))
    assert "micro_batch" not in _savers_allowed(s.WorkloadIn(**FULL, optimizer_in_backward=True))


def test_no_row_or_tip_splits_the_batch_when_the_optimizer_steps_in_backward(
    read_client: TestClient,
) -> None:
    body = {"workload": {**FULL, "optimizer_in_backward": True}, "limit": 5}
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    rows = r.json()["recommendations"]
    assert rows
    for row in rows:
        assert row["accumulation_steps"] == 1, row["gpu"]
        assert row["micro_batch"] is None
        assert all(a.get("accumulation_steps") in (None, 1) for a in row["alternatives"] or [])
        assert not any("twice the gradient-accumulation" in t for t in row["tips"]), row["tips"]
    # the same job without it does split the batch somewhere: the check above can fail
    plain = read_client.post("/api/v1/recommendations", json={"workload": FULL, "limit": 5})
    assert any(row["accumulation_steps"] > 1 for row in plain.json()["recommendations"]) or any(
        "gradient-accumulation" in t for row in plain.json()["recommendations"] for t in row["tips"]
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("master_weights", "none"),
        ("optimizer_in_backward", True),
        ("paged_optimizer", True),
        ("loss_chunks", 8),
    ],
)
def test_megatron_refuses_the_single_trainer_fields_by_name(
    read_client: TestClient, field: str, value: object
) -> None:
    body = {"workload": {**FULL, "runtime": "megatron", field: value}, "limit": 2}
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == f"workload.{field}"


def test_megatron_takes_the_defaults_stated(read_client: TestClient) -> None:
    body = {
        "workload": {**FULL, "runtime": "megatron", "master_weights": "fp32", "loss_chunks": 1},
        "limit": 2,
    }
    assert read_client.post("/api/v1/recommendations", json=body).status_code == 200


def test_an_inference_job_may_state_every_default_but_no_other_value(
    read_client: TestClient,
) -> None:
    job = {"preset": "llama-3.1-8b", "task": "inference"}
    defaults = {
        "master_weights": "fp32",
        "optimizer_in_backward": False,
        "paged_optimizer": False,
        "loss_chunks": 1,
    }
    ok = read_client.post("/api/v1/recommendations", json={"workload": {**job, **defaults}})
    assert ok.status_code == 200, ok.text
    bad = read_client.post("/api/v1/recommendations", json={"workload": {**job, "loss_chunks": 4}})
    assert bad.status_code == 422
    assert bad.json()["error"]["details"]["field"] == "workload.loss_chunks"


def test_a_serving_block_on_a_cnn_is_the_field_named(read_client: TestClient) -> None:
    body = {"workload": {"preset": "resnet-50", "serving": {"concurrent_requests": 10}}}
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 422
    assert r.json()["error"]["details"]["field"] == "workload.serving"
    asked = {"workload": {"preset": "resnet-50", "task": "serving"}}
    named = read_client.post("/api/v1/recommendations", json=asked)
    assert named.json()["error"]["details"]["field"] == "workload.task"

"""A pasted config.json over HTTP and through the CLI: derived counts, and a bad key as a 422."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def _config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def test_pasted_config_gives_total_and_active_params(read_client: TestClient) -> None:
    body = {
        "workload": {"task": "inference", "model": {"hf_config": _config("qwen3-30b-a3b")}},
        "limit": 3,
    }
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    model = r.json()["workload"]["model"]
    assert model["params"] == pytest.approx(30.5e9, rel=0.01)
    assert model["active_params"] == pytest.approx(3.3e9, rel=0.02)
    assert (model["layers"], model["num_kv_heads"], model["experts"]) == (48, 4, 128)
    assert model["kv_bytes_per_token_16bit"] == 2 * 48 * 4 * 128 * 2
    assert r.json()["recommendations"]


def test_explicit_fields_override_the_config(read_client: TestClient) -> None:
    cfg = _config("llama-3.1-8b")
    body = {"workload": {"task": "inference", "model": {"hf_config": cfg, "max_context": 8192}}}
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["workload"]["model"]["max_context"] == 8192


def test_bad_config_is_a_422_naming_the_key(read_client: TestClient) -> None:
    cfg = _config("llama-3.1-8b")
    cfg["num_key_value_heads"] = 64
    r = read_client.post(
        "/api/v1/recommendations",
        json={"workload": {"task": "inference", "model": {"hf_config": cfg}}},
    )
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["details"]["field"] == "workload.model.hf_config.num_key_value_heads"
    assert "config.json" in err["message"]


@pytest.mark.parametrize(
    ("key", "value"), [("hidden_size", 10**12), ("hidden_size", 1e300), ("num_hidden_layers", 5000)]
)
def test_absurd_config_is_a_422_naming_the_key(
    read_client: TestClient, key: str, value: float
) -> None:
    cfg = _config("llama-3.1-8b")
    cfg[key] = value
    r = read_client.post(
        "/api/v1/recommendations",
        json={"workload": {"task": "inference", "model": {"hf_config": cfg}}},
    )
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == f"workload.model.hf_config.{key}"


def test_presets_for_current_models_carry_sources(read_client: TestClient) -> None:
    listed = {w["id"]: w for w in read_client.get("/api/v1/workloads").json()["workloads"]}
    for pid in ("llama-3.1-405b", "deepseek-v3", "gpt-oss-120b", "gemma-3-27b", "phi-4",
                "mistral-small-3", "qwen3-235b-a22b", "llama-3.3-70b"):  # fmt: skip
        assert listed[pid]["sources"] and listed[pid]["references"], pid
    assert listed["deepseek-v3"]["model"]["kv_bytes_per_token_16bit"] == 576 * 61 * 2

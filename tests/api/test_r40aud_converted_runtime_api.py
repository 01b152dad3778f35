"""A TensorFlow or JAX question that names llama.cpp (or MLX) is answered with that runtime, which
runs a conversion of the published checkpoint: the answer says the framework asked changes
nothing (the fortieth session's expert audit found it passed without a word)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

WORKLOAD = {"preset": "llama-3-8b", "task": "inference", "runtime": "llama.cpp"}
SAID = "converted from the model's published checkpoint"


@pytest.mark.parametrize(("framework", "said"), [("tensorflow", True), ("pytorch", False)])
def test_the_framework_a_converted_runtime_ignores_is_said(
    read_client: TestClient, framework: str, said: bool
) -> None:
    body = {"workload": WORKLOAD, "constraints": {"framework": framework}, "limit": 1}
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["recommendations"][0]["runtime"] == "llama.cpp"
    assert any(SAID in w for w in out["warnings"]) is said
    if said:
        assert any("not a TensorFlow program" in w for w in out["warnings"])

"""TensorFlow on an Apple GPU is experimental, said in TensorFlow's words: the warning names
tensorflow-metal, never PyTorch's "mps"."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_tensorflow_on_a_mac_names_tensorflow_metal(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/estimate",
        json={
            "gpu": "apple-m1-max",
            "workload": {"preset": "resnet-50", "task": "training"},
            "constraints": {"framework": "tensorflow"},
        },
    )
    assert r.status_code == 200, r.text
    warnings = r.json()["warnings"]
    said = [w for w in warnings if w.endswith("is experimental")]
    assert said and "tensorflow-metal" in said[0], warnings
    assert not any(" mps" in w for w in warnings), warnings

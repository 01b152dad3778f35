"""Issue 23 (r44 mlq): the audit's question, a 70B on a Mac under MLX at 4 bits for under
$5,000, answers with a Mac and names MLX's own 4-bit format and its quality note; q4_0 there
stays a 422 that names the format to ask for."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

CONS = {"vendors": ["apple"], "acquisition": "buy", "max_purchase_usd": 5000}


def _ask(client: TestClient, **w: object) -> dict[str, Any]:
    work = {"preset": "llama-3.3-70b", "task": "inference", "runtime": "mlx", **w}
    r = client.post("/api/v1/recommendations", json={"workload": work, "constraints": CONS})
    return {"status": r.status_code, **r.json()}


def test_a_70b_on_a_mac_under_mlx_4bit_answers_with_a_mac(read_client: TestClient) -> None:
    got = _ask(read_client, quantization="mlx_4bit")
    assert got["status"] == 200, got
    assert got["workload"]["quantization"] == "mlx_4bit" and got["workload"]["weight_bits"] == 4.5
    rows = got["recommendations"]
    assert rows and all(r["gpu"]["vendor"] == "apple" for r in rows)
    assert all(r["gpu"]["purchase_usd"] <= 5000 for r in rows)
    # 70.6B weights at 4.5 bits: ~39.7 GB, which a 64 GB Mac's wired share (48 GB) holds
    assert 39 < got["memory"]["breakdown"]["weights"] < 40.5
    assert any(r["gpu"]["memory_gb"] <= 64 for r in rows)
    top = rows[0]
    assert top["runtime"] == "mlx" and top["precision"] == "int4"
    words = repr(top)
    assert "MLX 4-bit" in words and "quality: MLX 4-bit" in words


def test_q4_0_under_mlx_is_a_422_that_names_mlx_4bit(read_client: TestClient) -> None:
    got = _ask(read_client, quantization="q4_0")
    assert got["status"] == 422
    assert got["error"]["details"]["field"] == "workload.quantization"
    assert "mlx_4bit" in got["error"]["message"]

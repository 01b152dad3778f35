"""GET /api/v1/gpus with max_memory_gb below min_memory_gb is a 422 naming max_memory_gb:
the crossed range had answered an empty 200, read as "no GPU has that memory"."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_a_crossed_memory_range_is_refused_by_name(read_client: TestClient) -> None:
    r = read_client.get("/api/v1/gpus?min_memory_gb=100&max_memory_gb=50")
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"]["field"] == "max_memory_gb"
    assert "min_memory_gb 100" in error["message"]


def test_an_equal_or_open_range_still_lists(read_client: TestClient) -> None:
    same = read_client.get("/api/v1/gpus?min_memory_gb=80&max_memory_gb=80").json()
    assert same["total"] > 0 and all(g["memory_gb"] == 80 for g in same["items"])
    assert read_client.get("/api/v1/gpus?min_memory_gb=100").json()["total"] > 0

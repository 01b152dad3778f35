"""Several slugs the catalog lacks (session 32, fz): each gets its own did-you-mean, said with
the slug it is for; only the first had been hinted, in words that read as covering them all."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_each_missing_slug_is_hinted_with_its_name(read_client: TestClient) -> None:
    r = read_client.get("/api/v1/gpus/compare?slugs=H100-SXM,a100,h100-pcie")
    assert r.status_code in (404, 422), r.text
    message = r.json()["error"]["message"]
    assert "'h100-sxm' for 'H100-SXM'" in message, message
    hint_a100 = message.split("; ")[2]
    assert hint_a100.startswith("'a100-") and "for 'a100'?" in hint_a100, message
    assert "h100-pcie" not in message.split("in the catalog")[0]  # it is in the catalog


def test_one_missing_slug_reads_as_before(read_client: TestClient) -> None:
    r = read_client.get("/api/v1/gpus/H100-SXM")
    assert r.status_code == 404
    assert r.json()["error"]["message"].endswith("did you mean 'h100-sxm'?")

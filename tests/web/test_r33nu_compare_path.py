"""The compare page at the API's path (a new user's walk, 2026-12-06): the API compares at
/api/v1/gpus/compare, so /gpus/compare?slugs=… is the page a person tries; it had answered 404
"no GPU with slug 'compare'". It now leads to /compare with the question kept."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_gpus_compare_leads_to_the_compare_page(read_client: TestClient) -> None:
    q = "slugs=rtx-3090,rtx-4090&preset=llama-3-8b"
    r = read_client.get(f"/gpus/compare?{q}", follow_redirects=False)
    assert r.status_code == 307
    assert r.headers["location"] == f"/compare?{q}"
    page = read_client.get(f"/gpus/compare?{q}")
    assert page.status_code == 200
    assert "NVIDIA GeForce RTX 4090" in page.text and "Ratios" in page.text


def test_an_unknown_slug_is_still_a_404_with_the_nearest(read_client: TestClient) -> None:
    r = read_client.get("/gpus/rtx-409", follow_redirects=False)
    assert r.status_code == 404
    assert "rtx-4090" in r.text
    # and the bare path keeps to the page with nothing filled in
    bare = read_client.get("/gpus/compare", follow_redirects=False)
    assert bare.status_code == 307 and bare.headers["location"] == "/compare"

"""A cloud no offer comes from is refused naming the field, the providers there are, and how
a cloud gets in (a new user's walk, thirty-eighth session: an engineer renting on AWS read "no
offer comes from aws" — the shipped SkyPilot snapshot has no AWS or GCP rows, said only in
data/offers/README.md)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _said(r: object, field: str) -> str:
    assert r.status_code == 422, r.text  # type: ignore[attr-defined]
    err = r.json()["error"]  # type: ignore[attr-defined]
    assert err["details"]["field"] == field
    msg: str = err["message"]
    assert msg.startswith("no offer comes from aws; the providers with offers are "), msg
    assert "`gpu-advisor offers import`" in msg and "AWS and GCP" in msg
    return msg


def test_recommendations_say_how_a_cloud_gets_in(read_client: TestClient) -> None:
    body = {
        "workload": {"preset": "llama-3-8b", "task": "inference"},
        "constraints": {"acquisition": "rent", "providers": ["aws"]},
    }
    msg = _said(read_client.post("/api/v1/recommendations", json=body), "constraints.providers")
    assert "lambda" in msg  # the clouds there are, still listed


def test_the_offers_list_says_the_same(read_client: TestClient) -> None:
    _said(read_client.get("/api/v1/offers?provider=aws"), "provider")

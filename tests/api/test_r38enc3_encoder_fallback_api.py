"""An encoder served on a card TEI ships no build for (issue 21): the estimate serves it on
infinity, with the command that starts it and why; TEI named for that card is left out with
TEI's own words; a decoder's server named for an encoder stays a 422 naming its field."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _body(**workload: object) -> dict[str, object]:
    return {
        "workload": {
            "preset": "bert-large",
            "task": "serving",
            "serving": {"concurrent_requests": 16, "prompt_tokens": 256},
            **workload,
        },
        "gpu": "v100-sxm2-32gb",
    }


def test_a_card_tei_has_no_build_for_is_served_on_infinity(read_client: TestClient) -> None:
    body = _body()
    r = read_client.post("/api/v1/estimate", json=body)
    assert r.status_code == 200, r.text
    rec = r.json()["result"]
    sv = rec["serving"]
    assert sv["runtime"] == "infinity"
    assert sv["deploy"]["command"].startswith("infinity_emb v2 ")
    assert any("served with infinity instead" in w for w in rec["warnings"])
    # TEI named for a card it has no build for is refused, naming why
    r = read_client.post("/api/v1/estimate", json=_body(runtime="tei"))
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["result"] is None
    assert out["excluded"]["code"] == "runtime_unsupported"
    assert "below 7.5" in out["excluded"]["reason"]


def test_an_unknown_embedding_server_is_refused_naming_its_field(read_client: TestClient) -> None:
    body = {
        "workload": {
            "preset": "bert-large",
            "task": "serving",
            "runtime": "sglang",
            "serving": {"concurrent_requests": 16, "prompt_tokens": 256},
        }
    }
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 422
    assert "workload.runtime" in r.text

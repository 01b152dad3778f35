"""POST /api/v1/recommendations as a user sees two serving fixes: a Mac's int4 Transformers
row says NF4 and its experimental caveat, and one user on exactly 2 × H100 SXM is shown the
tensor-parallel copy, not two one-GPU copies with one idle."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_a_mac_int4_serving_row_names_nf4_and_the_caveat(read_client: TestClient) -> None:
    body = {
        "workload": {"preset": "llama-3-8b", "task": "serving", "precision": "int4",
                     "runtime": "transformers", "serving": {"concurrent_requests": 1}},
        "constraints": {"vendors": ["apple"]},
    }  # fmt: skip
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    rows = r.json()["recommendations"]
    assert rows
    for row in rows:
        said = row["warnings"]
        assert any(w.startswith("quality: nf4 weights") for w in said), said
        assert not any("GPTQ/AWQ-style" in w for w in said)
        assert any("bitsandbytes NF4" in w and "experimental" in w for w in said)
        assert row["framework_status"] == "experimental"


def test_one_user_on_two_h100s_is_shown_the_split_copy(read_client: TestClient) -> None:
    body = {
        "workload": {"preset": "llama-3-8b", "task": "serving",
                     "serving": {"concurrent_requests": 1}},
        "constraints": {"num_gpus": 2, "acquisition": "rent"},
        "objective": "balanced",
        "limit": 100,
    }  # fmt: skip
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    row = next(x for x in r.json()["recommendations"] if x["gpu"]["slug"] == "h100-sxm")
    sv = row["serving"]
    assert (sv["replicas"], sv["gpus_per_replica"]) == (1, 2)

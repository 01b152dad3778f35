"""A serving row ranked at a spot price rents spot: the service file had `use_spot: false`
wherever the spot price came from an on-demand offer's spot column (8 × A100 ranked at $3.60/h
spot, launched on-demand at $32.77/h)."""

from __future__ import annotations

import yaml
from fastapi.testclient import TestClient


def test_the_service_file_rents_at_the_price_the_row_was_ranked_at(
    read_client: TestClient,
) -> None:
    body = {
        "workload": {"preset": "llama-3.1-8b", "task": "serving",
                     "serving": {"requests_per_s": 20, "prompt_tokens": 2000,
                                 "output_tokens": 300, "ttft_ms_target": 500,
                                 "itl_ms_target": 30, "target_percentile": "p95"}},
        "constraints": {"acquisition": "rent", "max_gpus": 8, "allow_spot": True},
        "objective": "cheapest", "limit": 20,
    }  # fmt: skip
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    rows = [x for x in r.json()["recommendations"] if x["serving"]["deploy"]["skypilot_service"]]
    spot = [x for x in rows if x["cost"]["rent"]["spot"]]
    assert spot, "the cheapest rows include spot-priced ones"
    for x in rows:
        spec = yaml.safe_load(x["serving"]["deploy"]["skypilot_service"])
        assert spec["resources"]["use_spot"] is x["cost"]["rent"]["spot"]
        service = spec["service"]
        if x["cost"]["rent"]["spot"]:
            policy = service["replica_policy"]
            assert policy["dynamic_ondemand_fallback"] is True
            sv, instances = x["serving"], max(1, x["offer"]["instances"])
            packed = sv["replicas"] // instances if sv["replicas"] % instances == 0 else 1
            assert policy["min_replicas"] == sv["replicas"] // packed  # the plan's replicas
            assert "replicas" not in service
        else:
            assert "replica_policy" not in service and service["replicas"] >= 1

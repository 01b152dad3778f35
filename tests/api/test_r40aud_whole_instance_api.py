"""An empty answer's nearest configuration names the whole instance its hourly price pays for
(the fortieth session's expert audit): Llama 3.1 405B on $800 of purchases is answered "renting
as well as buying, best 3 × MI300X", whose only offer is a 4-GPU instance."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_an_empty_answer_names_the_instance_its_nearest_rents(read_client: TestClient) -> None:
    body = {
        "workload": {"preset": "llama-3.1-405b", "task": "inference", "batch_size": 1},
        "constraints": {"acquisition": "buy", "max_purchase_usd": 800},
        "objective": "best_value",
    }
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    empty = r.json()["empty"]
    near = empty["nearest"][0]
    assert near["change"] == "renting as well as buying"
    # what the case rests on: fewer GPUs hold it than the instance it rents holds
    assert near["rent_gpus_paid"] is not None and near["rent_gpus_paid"] > near["num_gpus"]
    assert f"to rent a whole {near['rent_gpus_paid']}-GPU instance)" in empty["message"]

"""/estimate on a card that does not hold the job says what would let it, as a ranking's
empty answer does (the same variations, estimated on the card): Qwen3-32B on 2 × RTX 4090
had read only "weights take 30.5 GB of 23.7 GB per GPU", with no advice."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

SERVE = {"preset": "qwen3-32b", "task": "serving", "serving": {"concurrent_requests": 20}}


def _estimate(client: TestClient, **ask: Any) -> dict[str, Any]:
    r = client.post("/api/v1/estimate", json={"gpu": "rtx-4090", **ask})
    assert r.status_code == 200, r.text
    return r.json()


def test_a_misfit_names_the_changes_that_let_the_card_hold_it(read_client: TestClient) -> None:
    out = _estimate(read_client, num_gpus=2, workload=SERVE)
    assert out["result"] is None and out["excluded"]["code"] == "does_not_fit"
    advice = out["advice"]
    assert "Fits with fp8 weights: 2 × NVIDIA GeForce RTX 4090 hold it." in advice, advice
    assert "Fits with 4-bit weights allowed: 2 × NVIDIA GeForce RTX 4090 hold it." in advice
    more = next(a for a in advice if "any GPU count instead of exactly 2" in a)
    wide = int(re.search(r": (\d+) × ", more).group(1))  # type: ignore[union-attr]
    assert wide > 2, more
    # each is what the estimate answers with that change made
    fp8 = _estimate(read_client, num_gpus=2, workload={**SERVE, "precision": "fp8"})
    assert fp8["result"] is not None and fp8["result"]["num_gpus"] == 2
    free = _estimate(read_client, workload=SERVE)
    assert free["result"] is not None and free["result"]["num_gpus"] == wide


def test_a_card_that_holds_the_job_gets_no_such_advice(read_client: TestClient) -> None:
    out = _estimate(read_client, num_gpus=2, workload={**SERVE, "precision": "fp8"})
    assert not any(a.startswith("Fits with") for a in out["advice"]), out["advice"]

"""A card whose every GPU count misses the deadline is left out at its fastest count, the one
that came closest: SDXL on an RTX 5070 read 24.4 h (one GPU) where four copies take 6.5."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.domain.evaluate import hours_text


def test_a_late_card_is_said_at_its_fastest_count(read_client: TestClient) -> None:
    ask = {
        "workload": {"preset": "sdxl", "task": "inference", "batch_size": 2,
                     "dataset_samples": 10000},
        "constraints": {"max_gpus": 4, "max_hours": 1, "acquisition": "rent"},
    }  # fmt: skip
    r = read_client.post("/api/v1/recommendations", json=ask)
    assert r.status_code == 200, r.text
    late = {e["slug"]: e["reason"] for e in r.json()["excluded"] if e["code"] == "misses_deadline"}
    # a 24 GB card: two 1024² SDXL images no longer fit a 12 GB one (r43 "mem": fp32 decode)
    reason = late["a10"]
    assert "(its fastest: 4 GPUs)" in reason, reason
    one = read_client.post(
        "/api/v1/estimate",
        json={"gpu": "a10", "workload": ask["workload"], "constraints": {"num_gpus": 4}},
    ).json()["result"]
    said = re.search(r"takes ([\d.]+ h)", reason).group(1)  # type: ignore[union-attr]
    assert said == hours_text(one["time_to_finish_h"])

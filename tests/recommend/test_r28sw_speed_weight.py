"""A speed weight beside an objective that does not read it is said to be ignored, as other
ignored fields are (it had been dropped silently under 'fastest')."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _warnings(client: TestClient, **body: object) -> list[str]:
    r = client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": "resnet-50"}, "limit": 1, **body},
    )
    assert r.status_code == 200, r.text
    return list(r.json()["warnings"])


def test_a_weight_without_balanced_is_said_ignored(read_client: TestClient) -> None:
    said = [w for w in _warnings(read_client, objective="fastest", speed_weight=0.3)
            if "speed_weight" in w]  # fmt: skip
    assert said and "ignored under 'fastest'" in said[0]
    assert not any("speed_weight" in w for w in _warnings(read_client, speed_weight=0.3))
    assert not any("speed_weight" in w for w in _warnings(read_client, objective="fastest"))

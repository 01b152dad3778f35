"""`/docs` shows a serving request among the recommendation examples (a new user's walk,
thirty-eighth session: planning a deployment for 100 users under p95 targets, the two examples
were LLM inference and custom training, and the load and targets were found only by opening
WorkloadIn → ServingIn). The example runs, at p95, and its verdict quotes the p95 figures the
table and targets use."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def test_recommendations_have_a_serving_example_that_answers_at_p95(
    read_client: TestClient,
) -> None:
    spec: dict[str, Any] = read_client.get("/openapi.json").json()
    body = spec["paths"]["/api/v1/recommendations"]["post"]["requestBody"]
    examples = body["content"]["application/json"]["examples"]
    serving = [e for e in examples.values() if e["value"]["workload"].get("task") == "serving"]
    assert len(serving) == 1, list(examples)
    value = serving[0]["value"]
    assert value["workload"]["serving"]["target_percentile"] == "p95"
    r = read_client.post("/api/v1/recommendations", json=value)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["workload"]["serving"]["target_percentile"] == "p95"
    top = answer["recommendations"][0]["serving"]
    assert top["meets_slo"] and top["itl_p95_ms"] <= 50 and top["ttft_p95_ms"] <= 1000
    assert "(p95: a token every" in answer["summary"]["sentence"]

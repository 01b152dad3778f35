"""Serving under acquisition 'either' with a purchase budget: a row whose cards cost more than
the budget is shown with the price but offered as a rental, as every other task's row is
(review 2026-12-05: 4× H100 PCIe at $116,800 was 'cheaper to buy' within $5,000)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_a_serving_row_over_the_purchase_budget_is_offered_as_a_rental(
    client: TestClient,
) -> None:
    body = {
        "workload": {
            "preset": "llama-3.1-8b",
            "task": "serving",
            "serving": {"concurrent_requests": 8, "prompt_tokens": 1000, "output_tokens": 200},
        },
        "constraints": {
            "acquisition": "either",
            "max_purchase_usd": 300,
            "hours_per_week": 100,
            "years": 3,
        },
        "limit": 10,
    }
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    over = [
        row
        for row in r.json()["recommendations"]
        if row["cost"].get("buy") and row["cost"]["buy"]["usd"] > 300
    ]
    assert over
    for row in over:
        assert row["verdict"]["cheaper"] == "rent"
        assert "over the $300 purchase budget" in row["verdict"]["note"]
        assert row["cost"]["break_even_hours"] is None

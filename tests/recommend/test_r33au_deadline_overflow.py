"""r33au: a deadline so short that the fastest option's time over it overflows a float (1e-300
hours against a 10^18-sample job) had answered 500 on the API, the page and the CSV, and a
traceback on the CLI: the count of copies that would meet it, ceil(inf), cannot be taken. The
answer now says nothing finishes in time, without that count."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

QUESTION: dict[str, Any] = {
    "workload": {
        "preset": "llama-3-8b",
        "task": "inference",
        "dataset_samples": 1e13,
        "epochs": 1e5,
    },
    "constraints": {"max_hours": 1e-300},
}


def test_an_overflowing_deadline_is_answered_as_missed(read_client: TestClient) -> None:
    r = read_client.post("/api/v1/recommendations", json=QUESTION)
    assert r.status_code == 200, r.text
    deadline = r.json()["deadline"]
    assert deadline["met"] is False
    assert "over a million times the deadline" in deadline["message"]
    assert not any(w.startswith("copies side by side") for w in deadline["would"])


def test_a_short_but_finite_ratio_still_names_its_copies(read_client: TestClient) -> None:
    # the guard takes out only a count past the message's "over a million times" (r33fx):
    # 10^6 samples in an hour, about a thousand times missed, still names how many copies
    # would do it
    question = {
        "workload": {"preset": "llama-3-8b", "task": "inference", "dataset_samples": 1e6},
        "constraints": {"max_hours": 1.0},
    }
    r = read_client.post("/api/v1/recommendations", json=question)
    assert r.status_code == 200, r.text
    would = r.json()["deadline"]["would"]
    assert any(w.startswith("copies side by side") for w in would), would


def test_the_page_answers_an_overflowing_deadline(read_client: TestClient) -> None:
    query = "preset=llama-3-8b&task=inference&dataset_samples=1e13&epochs=1e5&max_hours=1e-300"
    assert read_client.get(f"/recommendations?{query}").status_code == 200
    assert read_client.get(f"/recommendations.csv?{query}").status_code == 200

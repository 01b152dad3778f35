"""r33fx: a deadline of 1e-12 hours (a finite ratio, but over a million times missed) had the
message say "over a million times the deadline" beside a count of copies 20 digits long and a
share of the dataset written with dozens of zeros. The one threshold of the message (a
million) now holds for the copies too, and a share is written in a few significant figures."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

from app.recommend.deadline import _share

QUESTION: dict[str, Any] = {
    "workload": {"preset": "llama-3-8b", "task": "inference", "dataset_samples": 1e6},
    "constraints": {"max_hours": 1e-12},
}


def test_a_share_is_a_few_significant_figures_however_small() -> None:
    assert _share(0.5) == "50%"
    assert _share(0.00543) == "0.54%"
    assert _share(1e-6) == "0.0001%"
    # under a millionth: the message's threshold, said in words, not in twenty digits
    assert _share(1.5e-20) == _share(3.7e-200) == "under 0.0001%"


def test_a_deadline_a_million_times_missed_names_no_copies(read_client: TestClient) -> None:
    r = read_client.post("/api/v1/recommendations", json=QUESTION)
    assert r.status_code == 200, r.text
    deadline = r.json()["deadline"]
    assert "over a million times the deadline" in deadline["message"]
    would = deadline["would"]
    assert not any(w.startswith("copies side by side") for w in would), would
    shorter = next(w for w in would if w.startswith("a shorter job"))
    # no run of digits longer than the sample count's own
    assert max(len(d) for d in re.findall(r"[0-9][0-9,.]*", shorter)) <= len("1,000,000"), shorter

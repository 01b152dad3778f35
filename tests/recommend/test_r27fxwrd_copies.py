"""A missed deadline's "copies side by side" line prices the copies on the basis asked: buying
them buys every card, past the budget and the GPU cap (9 × 2 RTX 5090 under $10,000 and 2
GPUs had read "renting: the same cost"); renting them costs the same."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.recommend.deadline import COPIES

SDXL = {"preset": "sdxl", "task": "inference", "batch_size": 1, "dataset_samples": 5000}


def _copies(client: TestClient, **constraints: object) -> str:
    ask = {
        "workload": SDXL,
        "constraints": {"max_gpus": 2, "max_hours": 0.25, **constraints},
        "objective": "cheapest",
    }
    r = client.post("/api/v1/recommendations", json=ask)
    assert r.status_code == 200, r.text
    would = r.json()["deadline"]["would"]
    return next(w for w in would if w.startswith(COPIES))


def test_bought_copies_say_their_price_and_the_limits_they_lift(read_client: TestClient) -> None:
    line = _copies(read_client, acquisition="buy", max_purchase_usd=10000)
    assert "the same cost" not in line, line
    copies, per = map(int, re.search(r": (\d+) × \((\d+) × ", line).groups())  # type: ignore[union-attr]
    cards = re.search(r"buying: (\d+) cards, \$([\d,]+)", line)
    assert cards is not None, line
    assert int(cards.group(1)) == copies * per
    assert float(cards.group(2).replace(",", "")) > 10000
    assert line.endswith("without the limits on max_gpus, max_purchase_usd"), line


def test_rented_copies_cost_the_same(read_client: TestClient) -> None:
    line = _copies(read_client, acquisition="rent")
    # each instance pays its own start-up minute (cost.RENT_STARTUP_H): about the same
    assert "renting: about the same cost" in line and "minute of start-up" in line, line
    assert "buying" not in line and "max_purchase_usd" not in line, line
    assert "without the limits on max_gpus" in line, line

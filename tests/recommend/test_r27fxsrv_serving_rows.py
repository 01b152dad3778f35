"""Serving rows as the review read them: a bought row carries the hardware caveats every task's
bought rows carry, a rate near a plan's slots misses a p95 first-token target, and a job budget
serving says it does not apply changes nothing."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _ask(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_bought_serving_row_says_what_the_cards_need(read_client: TestClient) -> None:
    ask = {
        "workload": {"preset": "qwen3-32b", "task": "serving",
                     "serving": {"concurrent_requests": 20}},
        "constraints": {"acquisition": "buy", "vendors": ["nvidia"]},
    }  # fmt: skip
    rows = _ask(read_client, ask)["recommendations"]
    assert rows
    for row in rows[:3]:
        said = " | ".join(row["warnings"])
        # the host the card-alone price leaves out, and the wall's power beyond the boards (a
        # rig's words, or one to three cards' "no host computer nor cooling": since session 33
        # a rig priced without its host is listed after the rows priced whole)
        assert "cards alone" in said and "electricity" in said, said
        assert "host" in said or "server" in said, said


def test_a_rented_serving_row_carries_no_purchase_caveat(read_client: TestClient) -> None:
    ask = {
        "workload": {"preset": "qwen3-32b", "task": "serving",
                     "serving": {"concurrent_requests": 20}},
        "constraints": {"acquisition": "rent", "vendors": ["nvidia"]},
    }  # fmt: skip
    row = _ask(read_client, ask)["recommendations"][0]
    assert not any("electricity counts" in w for w in row["warnings"]), row["warnings"]


def test_a_rate_at_the_slots_edge_misses_a_p95_target(read_client: TestClient) -> None:
    ask = {
        "workload": {"preset": "qwen3-8b", "task": "serving",
                     "serving": {"requests_per_s": 0.5, "prompt_tokens": 1500,
                                 "output_tokens": 400, "target_percentile": "p95",
                                 "ttft_ms_target": 1000, "itl_ms_target": 40}},
        "constraints": {"acquisition": "either", "hours_per_week": 60, "years": 1.5,
                        "resale_fraction": 0.4},
        "limit": 10,
    }  # fmt: skip
    answer = _ask(read_client, ask)
    for row in answer["recommendations"]:
        sv = row["serving"]
        if not row["meets_latency_target"]:
            continue
        assert sv["ttft_p95_ms"] <= 1000
        # a row said to meet the target is not one run at 97 % of 4 slots: the slots it
        # holds on average (requests/s × the time each holds one) leave room for arrivals
        hold_s = (sv["ttft_ms"] + 399 * sv["itl_ms"]) / 1e3
        assert sv["requests_per_s"] * hold_s < 0.9 * sv["max_concurrency"], sv


def test_a_job_budget_serving_ignores_changes_nothing(read_client: TestClient) -> None:
    base: dict[str, Any] = {
        "workload": {"preset": "llama-3.1-8b", "task": "serving",
                     "serving": {"concurrent_requests": 20}},
        "limit": 1,
    }  # fmt: skip
    free = _ask(read_client, base)
    held = _ask(read_client, {**base, "constraints": {"max_job_cost_usd": 5}})
    assert any("max_job_cost_usd not applied" in w for w in held["warnings"])
    assert held["counts"] == free["counts"]
    assert held["excluded"] == free["excluded"]
    assert held["recommendations"] == free["recommendations"]


def test_a_bought_geforce_serving_row_says_the_licence_before_the_purchase_caveats(
    read_client: TestClient,
) -> None:
    """The answer's verdict quotes a row's first warning: the GeForce licence stays ahead of
    the purchase caveats (the regression hunt: they had pushed it out of the verdict)."""
    ask = {
        "workload": {"preset": "qwen3-32b", "task": "serving",
                     "serving": {"concurrent_requests": 20}},
        "constraints": {"acquisition": "buy", "vendors": ["nvidia"], "segments": ["consumer"]},
    }  # fmt: skip
    rows = _ask(read_client, ask)["recommendations"]
    assert rows
    for row in rows:
        said = row["warnings"]
        lic = next(i for i, w in enumerate(said) if "GeForce driver licence" in w)
        alone = next(i for i, w in enumerate(said) if "cards alone" in w or "card alone" in w)
        assert lic < alone, said

"""Task 'serving' priced from offers, through the API on a real database: every row rents
instances that exist (replicas packed, a tensor-parallel group inside one instance), carries
rent and buy apart with the verdict, prices tokens on the offer's basis, and GPUs without a
price stay in a non-cost answer. Alternatives name their instance, for every task."""

from __future__ import annotations

import math

import pytest
from fastapi.testclient import TestClient

LOAD = {
    "concurrent_requests": 50, "prompt_tokens": 1000, "output_tokens": 300,
    "ttft_ms_target": 1000, "itl_ms_target": 50,
}  # fmt: skip


def _ask(client: TestClient, **body: object) -> dict:
    req = {
        "workload": {"preset": "llama-3-70b", "task": "serving", "serving": LOAD},
        "constraints": {"acquisition": "rent"},
        "objective": "cheapest",
        "limit": 30,
    } | body
    r = client.post("/api/v1/recommendations", json=req)
    assert r.status_code == 200, r.text
    out: dict = r.json()
    return out


def _listed(client: TestClient, slug: str) -> dict[tuple[str, str], dict]:
    items = client.get(
        "/api/v1/offers", params={"gpu": slug, "kind": "cloud", "limit": 500}
    ).json()["items"]
    return {(o["provider"], o["instance_type"]): o for o in items}


def test_70b_serving_rows_rent_instances_that_exist(read_client: TestClient) -> None:
    body = _ask(read_client)
    rows = body["recommendations"]
    assert rows and body["serving"]["met"] is True
    for row in rows:
        sv, offer, rent = row["serving"], row["offer"], row["cost"]["rent"]
        slug = row["gpu"]["slug"]
        assert offer is not None and rent is not None, slug
        listed = _listed(read_client, slug)[(offer["provider"], offer["instance_type"])]
        assert listed["gpus"] == offer["gpus"] and listed["usd_per_hour"] == offer["usd_per_hour"]
        # a tensor-parallel group fits in one instance; the replicas in whole instances
        tp, replicas = sv["gpus_per_replica"], sv["replicas"]
        assert tp <= offer["gpus"]
        assert offer["instances"] == math.ceil(replicas / (offer["gpus"] // tp))
        assert rent["usd_per_hour"] == pytest.approx(offer["usd_per_hour"] * offer["instances"])
        assert sv["usd_per_hour"] == rent["usd_per_hour"] and sv["price_basis"] == "rent"
        assert row["cost"]["hourly_usd"] == rent["usd_per_hour"]
        # $ per million tokens on the rented basis: the hour split by the prefill share
        paid = rent["usd_per_hour"] / 3600 * 1e6
        assert row["usd_per_million_output_tokens"] == sv["usd_per_million_output_tokens"]
        assert sv["usd_per_million_output_tokens"] < paid / sv["output_tokens_per_s"]
        assert sv["usd_per_million_input_tokens"] < paid / sv["input_tokens_per_s"]
        # the blended figure: the whole hour over the output tokens, above the split one
        blended = paid / sv["output_tokens_per_s"]
        assert sv["usd_per_million_output_tokens_blended"] == pytest.approx(blended)
        assert row["usd_per_million_output_tokens_blended"] == pytest.approx(blended)
        assert row["usd_per_million_output_tokens_blended"] > row["usd_per_million_output_tokens"]
        assert any("whole hour" in line for line in row["explanation"])
        assert any(offer["instance_type"] in line for line in row["explanation"])
    hourly = [r["serving"]["usd_per_hour"] for r in rows]
    assert hourly == sorted(hourly)
    # the top row was "2 × 4 RTX 4090" at 8 × a one-GPU marketplace price: now whatever
    # it is, it names a shape its provider rents
    top = rows[0]
    assert top["offer"]["gpus"] >= top["serving"]["gpus_per_replica"]


def test_rent_and_buy_apart_with_the_verdict_over_the_users_usage(read_client: TestClient) -> None:
    body = _ask(
        read_client,
        constraints={"acquisition": "either", "hours_per_week": 168, "years": 2},
        objective="balanced",
    )
    both = [r for r in body["recommendations"] if r["cost"]["rent"] and r["cost"]["buy"]]
    assert both
    for row in both:
        buy, rent, v = row["cost"]["buy"], row["cost"]["rent"], row["verdict"]
        # a module sold only as whole servers is bought 8 at a time (cost.whole_servers)
        whole = any("sold as whole 8-GPU servers" in w for w in row["warnings"])
        units = -(-row["num_gpus"] // 8) * 8 if whole else row["num_gpus"]
        assert buy["usd"] == pytest.approx(buy["unit_usd"] * units)
        assert buy["condition"] in ("new", "used", "market", "launch") and buy["as_of"]
        assert v["hours"] == pytest.approx(168 * 52 * 2)
        assert v["rent_total_usd"] == pytest.approx(rent["usd_per_hour"] * v["hours"])
        sv = row["serving"]
        # the row ranks on the cheaper basis per hour of use, and says which
        cheaper = min(rent["usd_per_hour"], v["buy_total_usd"] / v["hours"])
        assert sv["usd_per_hour"] == pytest.approx(cheaper)
        assert sv["price_basis"] == v["cheaper"]


def test_a_node_paid_whole_is_said_or_used(read_client: TestClient) -> None:
    body = _ask(read_client, constraints={"acquisition": "rent", "providers": ["nebius"]})
    rows = body["recommendations"]
    assert rows and all(r["offer"]["provider"] == "nebius" for r in rows)
    for row in rows:
        o = row["offer"]
        paid, used = o["gpus"] * o["instances"], row["num_gpus"]
        assert paid >= used
        if paid > used:
            assert "pays for" in o["note"] and f"to use {used}" in o["note"]
        else:
            assert o["note"] is None


def test_unpriced_gpus_stay_in_a_non_cost_answer_and_a_budget_excludes_them(
    read_client: TestClient,
) -> None:
    # 'fastest' asked either way ranks cards with no price; asked to rent, it leaves them out
    fast = _ask(read_client, objective="fastest", limit=100, constraints={"acquisition": "either"})
    assert not [e for e in fast["excluded"] if e["code"] == "no_price"]
    unpriced = [r for r in fast["recommendations"] if not r["price_known"]]
    assert unpriced and len(unpriced) == fast["counts"]["unpriced"]
    assert fast["counts"]["ranked"] == fast["count"] == len(fast["recommendations"])
    assert all(r["offer"] is None and r["serving"]["usd_per_hour"] is None for r in unpriced)
    for objective in ("cheapest", "fastest"):
        cheap = _ask(read_client, limit=100, objective=objective)
        no_price = {e["slug"] for e in cheap["excluded"] if e["code"] == "no_price"}
        assert {r["gpu"]["slug"] for r in unpriced} <= no_price, objective
    capped = _ask(read_client, objective="fastest", constraints={"acquisition": "rent",
                                                            "max_hourly_usd": 3})  # fmt: skip
    assert capped["counts"]["unpriced"] == 0
    assert all(r["cost"]["rent"]["usd_per_hour"] <= 3 for r in capped["recommendations"])
    over = [e for e in capped["excluded"] if e["code"] == "over_budget"]
    # each names the GPUs its hourly price rents (evaluate.budget)
    assert over and all(
        e["reason"].startswith("rent") and "/h > $3.00/h" in e["reason"] for e in over
    )


def test_serving_alternatives_name_their_instance(read_client: TestClient) -> None:
    body = _ask(read_client)
    alts = [a for r in body["recommendations"] for a in r["alternatives"]]
    assert alts
    for row in body["recommendations"]:
        sv = row["serving"]
        # a shape is its layout and its formats: an alternative differs in one of them
        shape = (sv["replicas"], sv["gpus_per_replica"], sv["weight_precision"],
                 sv["kv_cache_precision"])  # fmt: skip
        for a in row["alternatives"]:
            alt = (a["replicas"], a["gpus_per_replica"], a["precision"], a["kv_cache_precision"])
            assert alt != shape
            assert a["num_gpus"] == a["replicas"] * a["gpus_per_replica"]
            if a["offer"] is not None:
                assert a["gpus_per_replica"] <= a["offer"]["gpus"]
                assert a["hourly_usd"] == pytest.approx(
                    a["offer"]["usd_per_hour"] * a["offer"]["instances"]
                )
    assert any(a["offer"] is not None for a in alts)


def test_training_alternatives_name_their_instance(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "resnet-50", "task": "training",
                         "dataset_samples": 1281167, "epochs": 90},
            "constraints": {"acquisition": "rent"},
            "objective": "fastest",
            "group_by": "gpu",
            "limit": 10,
        },
    )  # fmt: skip
    assert r.status_code == 200, r.text
    alts = [a for row in r.json()["recommendations"] for a in row["alternatives"]]
    rented = [a for a in alts if a["offer"] is not None]
    assert rented
    for a in rented:
        assert a["offer"]["gpus"] * a["offer"]["instances"] >= a["num_gpus"]
        assert a["hourly_usd"] == pytest.approx(
            a["offer"]["usd_per_hour"] * a["offer"]["instances"]
        )


def test_estimate_of_one_gpu_names_its_offer(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/estimate",
        json={"workload": {"preset": "llama-3-70b", "task": "serving", "precision": "fp8",
                           "serving": LOAD},
              "gpu": "h100-sxm", "num_gpus": 2},
    )  # fmt: skip
    assert r.status_code == 200, r.text
    res = r.json()["result"]
    assert res["serving"]["gpus_per_replica"] == 2
    assert res["offer"] is not None and res["offer"]["gpus"] >= 2
    assert res["cost"]["rent"]["usd_per_hour"] == pytest.approx(
        res["offer"]["usd_per_hour"] * res["offer"]["instances"]
    )

"""Session 33's walk through the API: QLoRA of Llama 3 8B bought for at most $1,500, ranked by
the default objective, had picked 4 × RTX 3080 (its cards' $1,220, not the 4-slot host and
1,920 W supply they need) over one RTX 4080 at $730, and said its fit held "only if" PEFT's fp32
cast were skipped, which FSDP-QLoRA skips anyway."""

from __future__ import annotations

from fastapi.testclient import TestClient

WORK = {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "qlora"}
BUY = {"acquisition": "buy", "max_purchase_usd": 1500}


def test_balanced_buy_picks_one_card_over_a_rig_priced_without_its_host(
    read_client: TestClient,
) -> None:
    r = read_client.post(
        "/api/v1/recommendations", json={"workload": WORK, "constraints": BUY, "limit": 60}
    )
    assert r.status_code == 200, r.text
    rows = r.json()["recommendations"]
    assert rows[0]["num_gpus"] == 1, rows[0]["gpu"]["slug"]
    # every rig of four or more bought consumer cards comes after every row priced whole
    # (experimental software, Apple's here, is listed after both, as before)
    rigs = [i for i, x in enumerate(rows) if x["num_gpus"] >= 4]
    supported = [(i, x) for i, x in enumerate(rows) if x["framework_status"] == "supported"]
    whole = [i for i, x in supported if x["num_gpus"] < 4 and x["price_known"]]
    assert rigs and whole and min(rigs) > max(whole)
    rig = rows[rigs[0]]
    assert any("listed after every option priced whole" in e for e in rig["explanation"])
    # fastest weighs no money: the rig, faster, still leads
    fast = read_client.post(
        "/api/v1/recommendations",
        json={"workload": WORK, "constraints": BUY, "objective": "fastest", "limit": 1},
    )
    assert fast.json()["recommendations"][0]["num_gpus"] == 4


def test_fsdp_qlora_rig_says_nothing_of_the_kbit_cast(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/estimate",
        json={"gpu": "rtx-3080-10gb", "num_gpus": 4, "workload": WORK},
    )
    assert r.status_code == 200, r.text
    res = r.json()["result"]
    assert res["memory"]["num_gpus"] == 4  # sharded: FSDP-QLoRA
    assert any("FSDP-QLoRA" in w for w in res["warnings"])
    assert not [t for t in res["tips"] if "prepare_model_for_kbit_training" in t]

"""A module sold only as whole servers is bought a server at a time: one H100 SXM at a $317k
8-GPU server's price ÷ 8 had passed a $40k purchase budget at $39,625."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.domain import cost as costs


def _offer(note: str | None) -> costs.PurchaseOffer:
    return costs.PurchaseOffer(
        usd=39_625, condition="new", as_of="2024-08-22", source="x", note=note
    )


def test_a_server_share_buys_whole_servers() -> None:
    share = _offer("an 8-GPU server's price ÷ 8: sold only as whole servers")
    assert costs.whole_servers(share, 1, 8) == 8
    assert costs.whole_servers(share, 12, 8) == 16
    assert costs.whole_servers(share, 16, 8) == 0  # whole servers already: n itself
    assert costs.whole_servers(_offer(None), 1, 8) == 0  # a card's own price
    assert costs.whole_servers(None, 1, 8) == 0


def _buy(client: TestClient, **cons: object) -> dict:
    body = {
        "workload": {"preset": "llama-3-70b", "task": "fine-tuning", "peft": "qlora",
                     "batch_size": 4, "seq_len": 2048, "dataset_samples": 10_000},
        "constraints": {"acquisition": "buy", **cons}, "objective": "fastest", "limit": 50,
    }  # fmt: skip
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_one_sxm_module_is_priced_as_its_server(read_client: TestClient) -> None:
    rows = [x for x in _buy(read_client, num_gpus=1)["recommendations"]
            if x["gpu"]["slug"] == "h100-sxm"]  # fmt: skip
    assert rows
    row = rows[0]
    unit = row["gpu"]["purchase_usd"]
    assert row["cost"]["purchase_usd"] == unit * 8
    assert any("whole 8-GPU servers: priced for 8 GPUs, 1 used" in w for w in row["warnings"])
    over = _buy(read_client, num_gpus=1, max_purchase_usd=40_000)
    assert not any(x["gpu"]["slug"] == "h100-sxm" for x in over["recommendations"])


def test_copies_buy_whole_servers_too(read_client: TestClient) -> None:
    """Copies that share nothing (batch inference over a dataset, LLM copies) are priced on
    their own paths: two modules had cost $79,250 beside words saying they buy a server."""
    for workload in (
        {"preset": "resnet-50", "task": "inference", "batch_size": 64,
         "dataset_samples": 1_000_000},
        {"preset": "llama-3.1-8b", "task": "inference", "batch_size": 64,
         "dataset_samples": 100_000},
    ):  # fmt: skip
        r = read_client.post(
            "/api/v1/recommendations",
            json={"workload": workload, "limit": 100,
                  "constraints": {"acquisition": "buy", "num_gpus": 2}},
        )  # fmt: skip
        assert r.status_code == 200, r.text
        rows = [x for x in r.json()["recommendations"] if x["gpu"]["slug"] == "h100-sxm"]
        assert rows, workload
        for row in rows:
            assert row["num_gpus"] == 2
            assert row["cost"]["purchase_usd"] == row["gpu"]["purchase_usd"] * 8
            assert any(
                "whole 8-GPU servers: priced for 8 GPUs, 2 used" in w for w in row["warnings"]
            )

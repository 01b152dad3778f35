"""Closing review (2026-12-06): balanced ranks a row on its band's low end only where the band's
"likely overstates" reason is about the row's own convolutions. The "train" regime also holds
BERT, whose AMD and Intel rows carry the vendor reason too; they are not marked down, and a
ResNet-50 row of the same vendors still is."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

LOW_END = "Ranked on the low end of its likely range"


def _rows(client: TestClient, preset: str) -> list[dict[str, Any]]:
    r = client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": preset}, "objective": "balanced", "limit": 200},
    )
    assert r.status_code == 200, r.text
    rows: list[dict[str, Any]] = r.json()["recommendations"]
    return [x for x in rows if x["gpu"]["vendor"] in ("amd", "intel")]


def test_a_bert_training_row_is_not_ranked_down_by_a_convolution_reason(
    read_client: TestClient,
) -> None:
    rows = _rows(read_client, "bert-base")
    assert rows, "AMD and Intel cards train BERT"
    # since the thirty-seventh session the band names BERT's GEMMs, not the convolution
    # library (tests/domain/test_r37lo_gemm_reason.py): no lean to be ranked down by
    named = [x for x in rows if "GEMMs and attention" in x["uncertainty"]["basis"]]
    assert named, "the vendor reason reaches BERT's training band (what this guards)"
    for x in rows:
        assert "likely overstates" not in x["uncertainty"]["basis"], x["gpu"]["slug"]
        assert not any(LOW_END in line for line in x["explanation"]), x["gpu"]["slug"]


def test_a_cnn_training_row_of_the_same_vendors_still_is(read_client: TestClient) -> None:
    rows = _rows(read_client, "resnet-50")
    leaning = [x for x in rows if "likely overstates" in x["uncertainty"]["basis"]]
    assert leaning
    assert all(any(LOW_END in line for line in x["explanation"]) for x in leaning)


def test_a_bought_jobs_words_say_the_verdict_counts_the_purchase(read_client: TestClient) -> None:
    """Nothing resold, the buy-versus-rent verdict still counts the whole purchase: it had read
    "counts energy" alone."""
    r = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "qwen2.5-7b"},
            "constraints": {"acquisition": "either", "resale_fraction": 0},
            "limit": 10,
        },
    )
    assert r.status_code == 200, r.text
    lines = [line for x in r.json()["recommendations"] for line in x["explanation"]]
    said = [line for line in lines if line.startswith("To buy, the job costs")]
    assert said
    assert all("verdict counts the same purchase plus energy" in line for line in said)


def test_a_short_jobs_one_card_figure_is_its_rent_with_the_start_up(
    read_client: TestClient,
) -> None:
    """'The job is short: one … finishes it in … ($x rented)': under 'either' the one-GPU
    alternative's job cost can be a purchase; the figure is its rent, start-up included."""
    r = read_client.post(
        "/api/v1/recommendations",
        json={
            "workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "lora"},
            "constraints": {"acquisition": "either"},
            "objective": "fastest",
            "limit": 5,
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    top = body["recommendations"][0]
    sentence = body["summary"]["sentence"]
    assert "The job is short" in sentence, sentence  # 8 cards for under a minute's job
    one = next(a for a in top["alternatives"] if a["num_gpus"] == 1)
    clause = sentence.split("The job is short")[1].split(";")[0]
    if one["hourly_usd"] is None:
        # no offer rents one of these cards alone: no figure is said to be rented
        assert "rented" not in clause, clause
    else:
        job = one["hourly_usd"] * (one["time_to_finish_h"] + 1 / 60)
        shown = f"${job:,.3f}" if job < 1 else f"${job:,.0f}"
        assert f"({shown} rented)" in clause, clause

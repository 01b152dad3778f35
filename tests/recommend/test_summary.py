"""The verdict sentence says what the ranking says: the first row's card and price, the
runner-up, and for an empty answer what would change it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.recommend.summary import mid_sentence


def _ask(client: TestClient, body: dict) -> dict:
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_the_sentence_names_the_pick_its_rent_and_the_runner_up(read_client: TestClient) -> None:
    answer = _ask(
        read_client,
        {
            "workload": {"preset": "llama-3-8b", "task": "inference"},
            "constraints": {"acquisition": "rent"},
        },
    )
    top, second = answer["recommendations"][:2]
    sentence = answer["summary"]["sentence"]
    assert (
        sentence.startswith(f"Pick {top['gpu']['name']}") or f"× {top['gpu']['name']}" in sentence
    )
    rent = top["cost"]["rent"]["usd_per_hour"]
    assert f"${rent:,.2f}/h" in sentence
    assert "Runner-up: " in sentence and second["gpu"]["name"] in sentence
    assert top["throughput"]["unit"] in sentence
    assert f"limited by {top['bottleneck']}" in sentence
    assert answer["summary"]["assumptions"].startswith("Assuming inference, ")


def test_a_buy_question_prices_the_pick_to_buy(read_client: TestClient) -> None:
    answer = _ask(
        read_client, {"workload": {"preset": "resnet-50"}, "constraints": {"acquisition": "buy"}}
    )
    top = answer["recommendations"][0]
    sentence = answer["summary"]["sentence"]
    assert "to buy" in sentence and "rents at" not in sentence
    assert (
        f"${top['cost']['buy']['usd']:,.0f}" in sentence
        or f"${top['cost']['buy']['usd']:,.2f}" in sentence
    )


def test_an_empty_answer_says_so_and_what_would_change_it(read_client: TestClient) -> None:
    answer = _ask(
        read_client,
        {
            "workload": {"preset": "llama-3-70b", "task": "fine-tuning", "peft": "qlora"},
            "constraints": {"acquisition": "buy", "max_purchase_usd": 300},
            "what_if": True,
        },
    )
    assert answer["recommendations"] == []
    sentence = answer["summary"]["sentence"]
    assert sentence.startswith("No GPU in the catalog can run this job")
    helps = [v for v in answer["what_if"] or [] if v["can_run"]]
    assert helps  # lifting the budget lets cards run it
    n, change = helps[0]["can_run"], helps[0]["change"].rstrip(".")
    # the what-if label follows a colon: "…; 45 GPUs could with one change: no budget limit …"
    assert sentence.endswith(f"; {n} GPUs could with one change: {change}.")


def test_a_serving_verdict_names_the_formats_it_runs(read_client: TestClient) -> None:
    answer = _ask(
        read_client,
        {
            "workload": {
                "preset": "llama-3.3-70b",
                "task": "serving",
                "serving": {"concurrent_requests": 20},
            },
            "constraints": {"acquisition": "rent"},
        },
    )
    sv = answer["recommendations"][0]["serving"]
    sentence = answer["summary"]["sentence"]
    assert f"{sv['weight_precision']} weights and {sv['kv_cache_precision']} KV cache" in sentence


@pytest.mark.parametrize(
    ("caveat", "said"),
    [
        ("Spot capacity can be taken back", "spot capacity can be taken back"),
        ("ROCm PyTorch on Windows is a preview", "ROCm PyTorch on Windows is a preview"),
        ("QLoRA's NF4 base", "QLoRA's NF4 base"),
        ("TensorFlow on Apple runs tensorflow-metal", "TensorFlow on Apple runs tensorflow-metal"),
        ("A", "a"),
    ],
)
def test_a_caveat_continues_the_sentence_without_breaking_a_name(caveat: str, said: str) -> None:
    assert mid_sentence(caveat) == said

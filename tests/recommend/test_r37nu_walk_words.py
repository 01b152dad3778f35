"""New user's walk (thirty-seventh session): what tripped a first-time reader of an answer.

- A student's first ResNet-50 card under $500, to finish within a day: nothing in budget
  does, and "a faster card" named 8 × H200 NVL (1.4 h, $290,400 of cards)
  where a $750 card meets the day: the line now names the cheapest option that finishes in
  time once the limits are lifted, with its price.
- A deadline missed by far read "10892.9× the deadline": the ratio is written as every
  other figure (three significant figures, whole from 1,000).
- A LoRA fine-tune's verdict closed on "Caveat: LoRA rank 16 on all linear layers …", the
  modules the engine assumed, an assumption and no risk of the pick.
- QLoRA on a Mac picked a Mac whose software runs the job only experimentally, and the
  verdict's caveat was its bf16 speed: an experimental pick now says so first.
- The assumptions line read "batch 1024" beside "sequence 2,048", and a prompt past the
  context "1000256 tokens".
- A kept row "may miss" a 2.0 h deadline "up to 2.0 h at the slow end of its range": a time
  past the deadline is written so that it does not read as the deadline."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.recommend.deadline import past


def _ask(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    return dict(r.json())


STUDENT: dict[str, Any] = {
    "workload": {"preset": "resnet-50", "task": "training"},
    "constraints": {"acquisition": "buy", "max_purchase_usd": 500, "max_hours": "1 day"},
    "limit": 3,
}


def test_a_faster_card_is_the_cheapest_that_meets_the_deadline(read_client: TestClient) -> None:
    d = _ask(read_client, STUDENT)["deadline"]
    assert d["met"] is False, d
    line = next(w for w in d["would"] if w.startswith("a faster card: "))
    assert line.endswith(
        "without the limits on max_purchase_usd, the cheapest that finishes in time"
    )
    took = re.search(r" takes ([\d.,]+) h \(\$([\d,]+) to buy\)", line)
    assert took is not None, line
    assert float(took.group(1)) <= 24.0
    price = float(took.group(2).replace(",", ""))
    # the same question ranked cheapest to finish (its price and the job's energy) with the
    # budget lifted and the deadline kept: its top row is the one named, at its price
    lifted = {**STUDENT, "constraints": {**STUDENT["constraints"], "max_purchase_usd": None}}
    rows = _ask(read_client, {**lifted, "objective": "cheapest", "limit": 1})["recommendations"]
    assert rows and line.startswith(f"a faster card: {_name(rows[0])} takes "), (line, rows[0])
    assert price == round(rows[0]["cost"]["buy"]["usd"]) > 500
    # which is far less than the fastest card past the budget (8 × H200 NVL had been named)
    fastest = _ask(read_client, {**lifted, "objective": "fastest", "limit": 1})
    assert price < fastest["recommendations"][0]["cost"]["buy"]["usd"]


def _name(row: dict[str, Any]) -> str:
    n = row["num_gpus"]
    return f"{n} × {row['gpu']['name']}" if n > 1 else str(row["gpu"]["name"])


def test_a_far_missed_deadline_writes_its_ratio_as_figures_are_written(
    read_client: TestClient,
) -> None:
    body = {
        "workload": {"preset": "llama-3-70b", "task": "training"},
        "constraints": {"acquisition": "rent", "max_hours": "2h"},
        "limit": 1,
    }
    message = _ask(read_client, body)["deadline"]["message"]
    ratio = re.search(r"\(([\d,.]+)× the deadline\)", message)
    assert ratio is not None, message
    said = ratio.group(1)
    assert "." not in said and re.fullmatch(r"\d{1,3}(,\d{3})+", said), message


def test_the_modules_lora_was_counted_on_are_no_caveat(read_client: TestClient) -> None:
    body = {
        "workload": {
            "preset": "llama-3-8b",
            "task": "fine-tuning",
            "peft": "lora",
            "dataset_samples": "50k",
        },
        "constraints": {"acquisition": "rent", "max_hours": "30 min"},
        "limit": 3,
    }
    answer = _ask(read_client, body)
    # the note is still said, once, at the top of the answer
    assert any(w.startswith("LoRA rank 16 on all linear layers") for w in answer["warnings"])
    sentence = answer["summary"]["sentence"]
    assert "Caveat: LoRA rank" not in sentence and "on all linear layers" not in sentence, sentence


def test_an_experimental_pick_says_so_first(read_client: TestClient) -> None:
    body = {
        "workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "qlora"},
        "constraints": {"acquisition": "buy", "vendors": ["apple"]},
        "limit": 3,
    }
    answer = _ask(read_client, body)
    top = answer["recommendations"][0]
    assert top["framework_status"] == "experimental" and top["gpu"]["vendor"] == "apple"
    sentence = answer["summary"]["sentence"]
    assert "Caveat: QLoRA (bitsandbytes 4-bit) on Apple GPUs (MPS) is experimental." in sentence, (
        sentence
    )


def test_a_supported_pick_keeps_its_own_caveat(read_client: TestClient) -> None:
    """The experimental rule reads only an experimental pick's warnings."""
    body = {"workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "qlora"},
            "constraints": {"acquisition": "rent"}, "limit": 3}  # fmt: skip
    answer = _ask(read_client, body)
    assert answer["recommendations"][0]["framework_status"] == "supported"
    assert "experimental" not in answer["summary"]["sentence"]


def test_the_assumptions_write_a_batch_as_every_count(read_client: TestClient) -> None:
    body = {"workload": {"preset": "llama-3-70b", "task": "training"}, "limit": 1}
    said = _ask(read_client, body)["summary"]["assumptions"]
    assert "batch 1,024" in said and "sequence 2,048" in said, said


def test_a_prompt_past_the_context_writes_its_counts_as_counts(read_client: TestClient) -> None:
    """The form's "1M" for a sequence was refused "prompt + output = 1000256 tokens exceeds
    the model's context of 8192"."""
    r = read_client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": "llama-3-8b", "task": "inference", "seq_len": "1M"}},
    )
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["details"]["field"] == "workload.seq_len"
    assert (
        "prompt + output = 1,000,256 tokens exceeds the model's context of 8,192"
        in (error["message"])
    ), error["message"]


@pytest.mark.parametrize(
    ("slow", "limit", "said"),
    [
        (2.04, 2.0, "2.04 h"),  # had read "up to 2.0 h" under a 2.0 h deadline
        (2.001, 2.0, "2.001 h"),  # a fourth figure where three tie (figures.duration)
        (2.0001, 2.0, "just over 2 h"),
        (0.50001, 0.5, "just over 30 min"),
        (0.505, 0.5, "30.3 min"),
        (49.0, 48.0, "2.04 days"),
        (2.5, 2.0, "2.5 h"),  # apart already: as every time is written
    ],
)
def test_a_slow_end_past_the_deadline_never_reads_as_the_deadline(
    slow: float, limit: float, said: str
) -> None:
    assert past(slow, limit) == said


def test_the_slow_end_words_of_a_kept_row(read_client: TestClient) -> None:
    """SDXL over 5,000 images within 2 h: a row whose slow end rounds to the deadline."""
    body = {
        "workload": {"preset": "sdxl", "task": "inference", "dataset_samples": "5k"},
        "constraints": {"acquisition": "either", "max_purchase_usd": 1500, "max_hours": "2h"},
        "limit": 3,
    }
    d = _ask(read_client, body)["deadline"]
    assert d["met"] is True and d["may_miss"] > 0
    assert "up to 2.0 h" not in d["message"], d["message"]

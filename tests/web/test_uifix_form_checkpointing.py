"""The form's blank "Activation checkpointing" says what the engine will do: fine-tuning
recipes turn it on for a decoder LLM or adapters whatever the preset says, and the form had
read "No (preset)" above an answer saying "Gradient checkpointing is on"."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.recommend.workloads import blank_peft, recipe_checkpointing


def _blank_option(html: str) -> str:
    select = html.split('name="gradient_checkpointing"')[1].split("</select>")[0]
    return select.split("data-default-option>")[1].split("</option>")[0]


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("preset=llama-3-8b&task=fine-tuning&peft=qlora", "Yes (fine-tuning default)"),
        ("preset=llama-3-8b&task=fine-tuning", "Yes (fine-tuning default)"),
        ("preset=llama-3-8b&task=training", "No (preset)"),
        # an encoder fine-tuned on all its weights: recipes leave it off, as the preset says
        ("preset=bert-base&task=fine-tuning", "No (preset)"),
        ("preset=bert-base&task=fine-tuning&peft=lora", "Yes (fine-tuning default)"),
        ("preset=&task=fine-tuning&family=decoder", "Yes (fine-tuning default)"),
        ("preset=&task=training&family=decoder", "Default"),
    ],
)
def test_the_blank_checkpointing_option_says_what_the_engine_does(
    read_client: TestClient, query: str, said: str
) -> None:
    r = read_client.get("/?" + query)
    assert r.status_code == 200
    assert _blank_option(r.text) == said


def test_the_label_agrees_with_the_answer(read_client: TestClient) -> None:
    """The same question's answer runs with checkpointing on where the form says Yes."""
    body = {"workload": {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "qlora"},
            "constraints": {"acquisition": "buy", "max_gpus": 1}, "limit": 1}  # fmt: skip
    answer = read_client.post("/api/v1/recommendations", json=body).json()
    assert answer["workload"]["gradient_checkpointing"] is True
    assert recipe_checkpointing("fine-tuning", blank_peft("fine-tuning", None), "decoder")
    assert not recipe_checkpointing("training", blank_peft("training", "qlora"), "encoder")

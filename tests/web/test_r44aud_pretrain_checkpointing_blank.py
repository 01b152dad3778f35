"""The blank "Activation checkpointing" follows the task as the engine reads it: GPT-2 XL's
fine-tuning recipe turns it on, a pretraining run of the same preset does not carry it
(workloads._gradient_checkpointing), so "Yes (preset)" is not shown over an answer priced
without it; the script gets the same words per task."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

from app.web import question_pages


def _blank(html: str) -> str:
    sel = re.search(r'<select[^>]*name="gradient_checkpointing".*?</select>', html, re.S)
    assert sel, "no gradient_checkpointing select"
    opt = re.search(r"<option[^>]*data-default-option[^>]*>([^<]*)</option>", sel.group(0))
    assert opt
    return opt.group(1).strip()


def test_pretraining_a_fine_tuning_preset_reads_no(read_client: TestClient) -> None:
    assert _blank(read_client.get("/?preset=gpt2-xl&task=training").text) == "No (preset)"
    tuned = _blank(read_client.get("/?preset=gpt2-xl&task=fine-tuning").text)
    assert tuned.startswith("Yes")


def test_the_script_gets_the_tasks_checkpointing(read_settings: Any) -> None:
    views = {p.id: p for p in question_pages._presets(read_settings)}
    assert views["gpt2-xl"].task_hints["training"]["gradient_checkpointing"] == "No"
    # an inference preset's fine-tuning says its recipe through the blank label, not a hint
    assert "gradient_checkpointing" not in views["llama-3.1-8b"].task_hints["fine-tuning"]

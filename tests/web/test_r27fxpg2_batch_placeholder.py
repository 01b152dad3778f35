"""The blank batch size says what the engine assumes under the task asked, as the blank
"Activation checkpointing" does (review: /?preset=llama-3.1-8b&task=fine-tuning showed "1",
the inference preset's batch, where the answer says "assumed 128 sequences (Stanford
Alpaca)")."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.recommend import schemas as rs
from app.recommend.workloads import resolve_workload
from app.web import question_pages
from app.web.forms import fields_by_name


def _placeholder(html: str) -> str:
    tag = re.search(r'<input id="f-batch_size"[^>]*>', html, re.S)
    assert tag, "no batch_size input"
    found = re.search(r'placeholder="([^"]*)"', tag.group(0))
    assert found
    return found.group(1)


def _assumed(preset: str, task: str, settings: Any) -> str:
    work, _ = resolve_workload(rs.WorkloadIn(preset=preset, task=task), settings.data_dir)
    return fields_by_name()["batch_size"].show(work.batch_size)


@pytest.mark.parametrize(
    ("preset", "task"),
    [
        ("llama-3.1-8b", "fine-tuning"),
        ("llama-3.1-8b", "training"),
        ("llama-3.1-8b", "inference"),
        ("mistral-7b", "training"),
        ("mistral-7b", "fine-tuning"),
    ],
)
def test_the_blank_batch_follows_the_task(
    read_client: TestClient, read_settings: Any, preset: str, task: str
) -> None:
    html = read_client.get(f"/?preset={preset}&task={task}").text
    assert _placeholder(html) == _assumed(preset, task, read_settings)


def test_fine_tuning_an_inference_preset_reads_128(read_client: TestClient) -> None:
    html = read_client.get("/?preset=llama-3.1-8b&task=fine-tuning").text
    assert _placeholder(html) == "128"
    assert _placeholder(read_client.get("/?preset=llama-3.1-8b").text) == "1"


def test_the_script_gets_each_tasks_batch(read_settings: Any) -> None:
    views = {p.id: p for p in question_pages._presets(read_settings)}
    assert views["llama-3.1-8b"].task_hints["fine-tuning"] == {"batch_size": "128"}
    # the preset's own task keeps its own hint
    assert "fine-tuning" not in views["mistral-7b"].task_hints

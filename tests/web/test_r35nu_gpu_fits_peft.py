"""New user's walk (thirty-fifth session): an RTX 4090's page listed "Mistral 7B (v0.1) ·
Fine-tuning · runs BF16 · 2,083 tokens/s", which a student reads as full fine-tuning of a 7B
model on a 24 GiB card; the preset's recipe is QLoRA (4-bit base weights). The compare page's
job said "Fine-tuning" alike. A preset's adapter recipe is named beside its task on both."""

from __future__ import annotations

import html as html_lib
import re

from fastapi.testclient import TestClient

from tests.web.test_pages import page


def _task_cells(text: str) -> dict[str, str]:
    rows = re.findall(r'<tr data-preset="([^"]+)">.*?<td data-label="Task">(.*?)</td>', text, re.S)
    return {p: html_lib.unescape(re.sub(r"<[^>]+>", "", cell)).strip() for p, cell in rows}


def test_a_presets_adapter_recipe_is_named_beside_its_task(read_client: TestClient) -> None:
    cells = _task_cells(page(read_client, "/gpus/rtx-4090"))
    assert cells["mistral-7b"] == "Fine-tuning · QLoRA (4-bit base)", cells["mistral-7b"]
    # a preset that trains every weight says only its task
    assert cells["resnet-50"] == "Training from scratch", cells["resnet-50"]
    assert not any("None (all weights" in c for c in cells.values())


def test_the_compare_pages_job_names_its_adapter_recipe(read_client: TestClient) -> None:
    text = page(read_client, "/compare?slugs=rtx-4090,rtx-3090&preset=mistral-7b")
    head = re.search(r'<h2 id="job-h">(.*?)</h2>', text, re.S)
    assert head is not None
    said = html_lib.unescape(re.sub(r"<[^>]+>", "", head.group(1)))
    # the sizes the job runs at follow the recipe (the preset's own when none is asked)
    assert (
        said
        == "For the job: Mistral 7B (v0.1), Fine-tuning · QLoRA (4-bit base) · batch 4, 2,048 tokens"
    ), said
    plain = page(read_client, "/compare?slugs=rtx-4090,rtx-3090&preset=resnet-50")
    assert "data-peft" not in plain

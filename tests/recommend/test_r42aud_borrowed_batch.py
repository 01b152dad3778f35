"""A training job that takes its preset's batch set for another task says so, as an assumed
batch is said: Whisper large-v3 fine-tuned with no batch ran at its inference preset's batch
of 1 (5.9 windows a second on an RTX 4090) with no word that the 1 was not the user's. A
preset's batch set for the task asked, and a stated batch, say nothing."""

from __future__ import annotations

import pytest

from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload

WORDS = "batch_size not given: the preset's batch"


@pytest.mark.parametrize(
    ("preset", "task", "batch", "made_for"),
    [
        ("whisper-large-v3", "fine-tuning", 1, "inference"),
        ("sdxl", "fine-tuning", 1, "inference"),
        ("bert-base", "training", 32, "fine-tuning"),
    ],
)
def test_a_batch_set_for_another_task_is_said(
    preset: str, task: str, batch: int, made_for: str
) -> None:
    work, warnings = resolve_workload(s.WorkloadIn(preset=preset, task=task))
    assert work.batch_size == batch
    assert (
        f"{WORDS} of {batch:,}, set for its {made_for}, is assumed for this {task}; set "
        "batch_size for your own (run as micro-batches that fit, with gradient accumulation)"
    ) in warnings


@pytest.mark.parametrize(
    ("preset", "task", "batch"),
    [("whisper-small", "fine-tuning", None), ("resnet-50", "inference", None),
     ("whisper-large-v3", "fine-tuning", 16)],
)  # fmt: skip
def test_its_own_task_or_a_stated_batch_says_nothing(
    preset: str, task: str, batch: int | None
) -> None:
    _, warnings = resolve_workload(s.WorkloadIn(preset=preset, task=task, batch_size=batch))
    assert not any(w.startswith(WORDS) for w in warnings)

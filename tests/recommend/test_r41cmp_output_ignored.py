"""output_tokens on a training question is said to be ignored, as latency_target_ms on one is:
512 asked on a fine-tune had been dropped without a word (and /compare, which now takes the
field, shows the engine's note)."""

from __future__ import annotations

import pytest

from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload

IGNORED = "output_tokens only applies to inference"


@pytest.mark.parametrize("task", ["fine-tuning", "training"])
def test_training_says_it_ignores_the_output(task: str) -> None:
    w = s.WorkloadIn(preset="llama-3.1-8b", task=task, output_tokens=512)
    spec, warnings = resolve_workload(w)
    assert any(IGNORED in x and "ignored" in x for x in warnings), warnings
    plain, _ = resolve_workload(s.WorkloadIn(preset="llama-3.1-8b", task=task))
    assert spec.seq_len == plain.seq_len  # nothing of the job changed


def test_inference_runs_it_without_a_word() -> None:
    w = s.WorkloadIn(preset="llama-3.1-8b", task="inference", output_tokens=512)
    spec, warnings = resolve_workload(w)
    assert spec.output_tokens == 512
    assert not any(IGNORED in x for x in warnings)

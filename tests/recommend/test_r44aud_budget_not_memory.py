"""An empty answer held off by its budget, not by memory: a LoRA of Llama 3.1 8B on 50,000 ×
2,048 tokens, twice, for at most $2 rented (the RTX 4090 runs it as asked for $6.08) had led
with "every memory change at once (sequence 512, …)" at $1.46: the sequence cut kept the
samples asked, so it trained a quarter of the tokens, a saving of money presented as one of
memory. A shorter sequence now keeps a stated dataset's tokens (twice the samples each time
it halves), and the combined change with every limit lifted, which changes the job too, is
named after lifting the budget alone."""

from __future__ import annotations

from typing import Any

from app.recommend import misfit, whatif
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from tests.support import recommend_with

LORA = {
    "preset": "llama-3.1-8b",
    "task": "fine-tuning",
    "peft": "lora",
    "seq_len": 2048,
    "batch_size": 16,
}


def _levers(**kw: Any) -> dict[str, dict[str, Any]]:
    work, _ = resolve_workload(s.WorkloadIn(**{**LORA, **kw}))
    return {label: c["workload"] for label, c in misfit.levers(work, True, True)}


def test_a_shorter_sequence_keeps_a_stated_datasets_tokens() -> None:
    got = _levers(dataset_samples=50_000, epochs=2)
    half = next(c for label, c in got.items() if label.startswith("sequence 1024 instead"))
    assert half == {"seq_len": 1024, "dataset_samples": 100_000}
    combined = [c for label, c in got.items() if misfit.is_combined(label)]
    assert combined
    for c in combined:
        # sequence × samples: the tokens asked, whatever the halving
        assert c["seq_len"] * c["dataset_samples"] == 2048 * 50_000
    label = next(label for label in got if label.startswith("sequence 1024"))
    assert "the same tokens: 100,000 samples" in label
    assert misfit._memory_change(label)  # still read as the memory change it is


def test_an_assumed_dataset_is_left_to_the_resolver() -> None:
    # no dataset given: the engine assumes 1 M tokens and re-sizes it by the sequence itself
    got = _levers()
    assert all("dataset_samples" not in c for c in got.values())
    assert "sequence 1024 instead of 2048" in got


def _row(change: str, can_run: int) -> s.WhatIfOut:
    return s.WhatIfOut(
        change=change, top_slug="rtx-4090", top_name="RTX 4090", num_gpus=1, throughput=1.0,
        unit="tokens/s", required_gb=1.0, can_run=can_run, same_top=False,
    )  # fmt: skip


def test_every_limit_lifted_comes_after_the_budget_alone() -> None:
    anywhere = _row(f"{misfit.ALL_AT_ONCE} (sequence 256) {misfit.ANYWHERE}", 89)
    budget = _row(whatif.BUDGET_LIFTED, 33)
    assert sorted([anywhere, budget], key=whatif._nearness) == [budget, anywhere]


def test_a_budget_bound_empty_answer_leads_with_the_budget(shipped_catalog: Any) -> None:
    answer = recommend_with(
        shipped_catalog,
        {
            "workload": {**LORA, "dataset_samples": 50_000, "epochs": 2},
            "constraints": {"acquisition": "rent", "max_job_cost_usd": 2},
            "objective": "cheapest",
            "limit": 3,
        },
    )
    assert not answer.recommendations and answer.empty is not None
    first = answer.empty.nearest[0]
    assert first.change == whatif.BUDGET_LIFTED
    # no memory change runs it within the $2: each trains the tokens asked
    tried = [v for v in answer.what_if or [] if misfit._memory_change(v.change)]
    assert tried and not any(v.can_run for v in tried if misfit.ANYWHERE not in v.change)

"""A pretraining researcher's questions: counts above 64 GPUs, the savers the engine picks, MFU,
mixture-of-experts, long contexts and Megatron micro-batches (the review of 2026-12)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from app.catalog.loader import read_gpu_specs
from app.domain import evaluate as ev
from app.errors import InvalidInput
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.rows import MOE_TRAINING_GAP
from app.shipped.rules import load_rules

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
RULES = load_rules(DATA)


def _estimate(slug: str, workload: dict[str, Any], **constraints: Any) -> s.EstimateResponse:
    req = s.EstimateRequest(workload=workload, gpu=slug, constraints=constraints)
    return service.estimate(req, GPUS[slug], RULES)


def test_counts_up_to_512_gpus_are_asked_and_planned() -> None:
    """num_gpus and max_gpus stopped at 64: a 128-GPU run could not be asked. Llama 3 70B on
    128 H100s weak-scales within a few per cent of 64 (whole 8-GPU servers, InfiniBand)."""
    assert s.MOST_GPUS == ev.COUNTS[-1] == 512
    s.ConstraintsIn(num_gpus=512, max_gpus=512)
    with pytest.raises(ValidationError):
        s.ConstraintsIn(num_gpus=513)
    assert s.ConstraintsIn().max_gpus == 8  # the open question plans no more than before
    llama = {"preset": "llama-3-70b", "task": "training", "batch_size": 1024, "seq_len": 8192}
    per_gpu = {}
    for n in (64, 128):
        row = _estimate("h100-sxm", llama, num_gpus=n).result
        assert row is not None and row.num_gpus == n
        per_gpu[n] = row.throughput.value / n
        split = next(line for line in row.explanation if line.startswith("Split over"))
        assert f"{n // 8} servers" in split
    assert per_gpu[128] == pytest.approx(per_gpu[64], rel=0.03)


def test_an_estimate_warns_of_the_gpu_cap_only_where_one_was_stated() -> None:
    """/estimate with constraints.num_gpus 64 alone warned "it runs 64 GPUs, over the 8 GPUs
    asked": 8 is the default, not a limit asked for."""
    job = {"preset": "llama-3-8b", "task": "training", "batch_size": 512}
    quiet = _estimate("h100-sxm", job, num_gpus=64)
    assert not any("max_gpus" in w for w in quiet.warnings)
    stated = _estimate("h100-sxm", job, num_gpus=64, max_gpus=8)
    assert any(w.startswith("constraints.max_gpus: it runs 64 GPUs") for w in stated.warnings)


def test_savers_the_engine_picks_leave_room() -> None:
    """Llama 3 8B pretraining on 64 H100s at 512 × 8192: the engine took 8-bit AdamW itself
    and left 0.03 GB of 84.9 free. Savers it adds leave ROOM, as a micro-batch it picks does."""
    job = {"preset": "llama-3-8b", "task": "training", "batch_size": 512, "seq_len": 8192}
    row = _estimate("h100-sxm", job, num_gpus=64).result
    assert row is not None and row.memory_savers
    free, avail = row.memory.headroom_gb, row.memory.available_gb
    assert free is not None and avail is not None and free >= ev.ROOM * avail * 0.999
    assert "gradient checkpointing" in row.memory_savers


def test_moe_training_rows_say_expert_parallelism_is_not_modelled() -> None:
    row = _estimate("h100-sxm", {"preset": "mixtral-8x7b", "task": "training"}, num_gpus=64)
    assert row.result is not None and MOE_TRAINING_GAP in row.result.warnings
    dense = _estimate("h100-sxm", {"preset": "llama-3-8b", "task": "training"}, num_gpus=8)
    assert dense.result is not None and MOE_TRAINING_GAP not in dense.result.warnings


def test_a_long_context_refusal_names_the_megatron_layout_that_holds_it() -> None:
    """Llama 3.1 70B at 16k on 64 H100s with checkpointing: refused as "860 GB on one GPU ...
    even when sharded", with no way out named; FSDP keeps whole sequences on every GPU."""
    job = {
        "preset": "llama-3.1-70b",
        "task": "training",
        "seq_len": 16384,
        "gradient_checkpointing": True,
    }
    out = _estimate("h100-sxm", job, num_gpus=64)
    assert out.excluded is not None
    assert "runtime 'megatron' with workload.megatron_layout {tensor_parallel: 8" in (
        out.excluded.reason
    )
    lay = {"tensor_parallel": 8, "context_parallel": 2}
    ran = _estimate("h100-sxm", job | {"runtime": "megatron", "megatron_layout": lay}, num_gpus=64)
    assert ran.result is not None


def _megatron(microbatches: int | None) -> dict[str, Any]:
    return {
        "preset": "llama-3-8b",
        "task": "training",
        "batch_size": 256,
        "seq_len": 4096,
        "runtime": "megatron",
        "megatron_layout": {"tensor_parallel": 4, "microbatches": microbatches},
    }


def test_megatron_microbatches_set_the_micro_batch_the_memory_uses() -> None:
    """workload.megatron_layout.microbatches changed only the bubble: the memory and its words
    kept the engine's micro-batch whatever was asked, and 256 micro-batches were taken where
    each replica has 128 sequences. 8 GPUs at TP4: 2 replicas of 128 sequences."""
    small = _estimate("h100-sxm", _megatron(128), num_gpus=8).result
    large = _estimate("h100-sxm", _megatron(32), num_gpus=8).result
    assert small is not None and large is not None
    assert any("at micro-batch 1" in n for n in small.memory.notes)
    assert any("at micro-batch 4" in n for n in large.memory.notes)
    assert small.memory.breakdown["activations"] < large.memory.breakdown["activations"]
    for bad in (256, 48):
        with pytest.raises(InvalidInput) as e:
            _estimate("h100-sxm", _megatron(bad), num_gpus=8)
        assert e.value.field == "workload.megatron_layout.microbatches"

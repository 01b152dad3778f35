"""A fine-tuning practitioner's review (round 25, ft): a refusal of a 70B full fine-tune at
2,048 tokens names more GPUs, not context parallelism; the tight-fit tip names what is large
(not 8-bit AdamW on a LoRA row); checkpointing's extra compute is one rule (a third in full training, half under LoRA)."""

from __future__ import annotations

from dataclasses import replace

from app.domain import megatron, rank
from app.domain.units import vram
from app.domain.workload import WorkloadSpec, memory_breakdown
from tests.domain.fixtures import H100, LLAMA3_8B, LLAMA3_70B, RTX4090
from tests.domain.test_word2fix_rank import _cand


def _llm(model: object = LLAMA3_8B, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="fine-tuning", model=model, precision="bf16", batch_size=8, seq_len=2048
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


# ---------------------------------------------------------------- 1. the refusal's remedy


def test_short_context_full_finetune_refusal_names_more_gpus_not_context_parallel() -> None:
    """70B full fine-tune at 2,048 tokens on 8 × 80 GB: the weights, gradients and AdamW
    states (16 bytes a parameter, ~140 GB a GPU over 8) are what miss; splitting a 2k sequence
    frees none of them."""
    work = _llm(LLAMA3_70B, peft="none", batch_size=64, gradient_checkpointing=True)
    hint = megatron.fits_hint(work, 8, 75.0, ("cuda",))
    assert "context_parallel" not in hint
    assert "model states" in hint and "sharded over 8" in hint
    # the count that holds it, sharded, at one sequence a GPU: checked against the model
    count = int(hint.split(" GPUs hold it sharded")[0].rsplit(" ", 1)[-1])
    assert count > 8
    one_each = replace(work, batch_size=count)
    assert memory_breakdown(one_each, num_gpus=count).total <= 75.0
    half = replace(work, batch_size=count // 2)
    assert memory_breakdown(half, num_gpus=count // 2).total > 75.0
    assert "constraints.max_gpus" in hint
    assert "CPU offload" in hint and "not modelled" in hint


def test_long_context_refusal_still_points_to_context_parallel() -> None:
    """8B full fine-tune at 131,072 tokens on 8 × 24 GB: the states fit sharded (~19 GB), one
    sequence's activations and logits do not: splitting the sequence is the remedy."""
    work = _llm(peft="none", seq_len=131072, gradient_checkpointing=True)
    mem = memory_breakdown(work, num_gpus=8)
    assert mem.weights + mem.gradients + mem.optimizer + mem.master_weights < 22.0
    hint = megatron.fits_hint(work, 8, 22.0, ("cuda",))
    assert "activations are what miss" in hint
    assert "workload.megatron_layout.context_parallel" in hint
    assert "CPU offload" not in hint


# ---------------------------------------------------------------- 3. the tight-fit tip


def test_tight_lora_row_names_the_logits_not_8bit_adamw() -> None:
    """An 8B LoRA at 8,192 tokens, one sample a GPU: Adam's moments are the adapters' (a
    fraction of a GB) beside GBs of logits; 8-bit AdamW frees nothing worth saying."""
    work = _llm(peft="lora", batch_size=1, seq_len=8192, gradient_checkpointing=True)
    c = _cand(RTX4090, work)
    assert c.memory.optimizer < 0.1 * c.memory.total < c.memory.logits
    tip = rank._training_headroom(c, "cuda")
    assert "one sample a GPU already" in tip
    assert "8-bit AdamW" not in tip
    assert f"the logits ({vram(c.memory.logits):,.1f} GiB) shrink with a fused cross-entropy" in tip


def test_tight_full_finetune_row_still_offers_8bit_adamw() -> None:
    """Full fine-tuning at one sample a GPU: the moments (8 bytes a parameter) are a large
    share, so 8-bit AdamW is named, after whatever is larger."""
    work = _llm(peft="none", batch_size=8, gradient_checkpointing=True)
    c = _cand(H100, work, n=8)
    assert c.memory.optimizer >= rank.ADAM8_SHARE * c.memory.total
    tip = rank._training_headroom(c, "cuda")
    assert "shrink with 8-bit AdamW" in tip


# ---------------------------------------------------------------- 2. one checkpointing rule


def test_checkpointing_tip_says_half_more_compute_under_lora() -> None:
    """The activations tip had said ~33 % on LoRA rows, whose fits line said ~50 %."""
    assert rank._recompute_pct(_llm(peft="lora")) == 50
    assert rank._recompute_pct(_llm(peft="none")) == 33

"""A QLoRA row that runs at fp16 (a card without bf16: Turing, Volta) had been told to cast
PEFT's fp32 embedding and LM head "back to bf16 (as the QLoRA paper's script does)": 2 ×
Quadro RTX 8000 for Llama 3 70B QLoRA at $5,000. The paper's qlora.py casts them back only
under --bf16 (``if args.bf16 and module.weight.dtype == torch.float32``), and a bf16 cast is
no answer on a card the row says runs fp16."""

from __future__ import annotations

from dataclasses import replace

from app.domain import cost, perf, rank
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec, memory_breakdown
from tests.domain.fixtures import LLAMA3_8B, RTX4090


def _cand(gpu: GpuSpec, work: WorkloadSpec, available_gb: float) -> rank.Candidate:
    est = perf.estimate(gpu, work, num_gpus=1)
    return rank.Candidate(
        gpu=gpu,
        work=work,
        memory=memory_breakdown(work, num_gpus=1),
        available_gb=available_gb,
        perf=est,
        cost=cost.estimate_cost(gpu, 1, est.throughput, 10.0),
    )


def _cast_tip(precision: str) -> str:
    work = WorkloadSpec(
        task="fine-tuning",
        model=LLAMA3_8B,
        precision=precision,
        peft="qlora",
        gradient_checkpointing=True,
        batch_size=1,
        seq_len=2048,
    )
    tight = memory_breakdown(work, num_gpus=1).total + 0.5  # under the ~2.1 GB cast
    c = replace(_cand(RTX4090, work, tight), micro_batch=1, accumulation_steps=1)
    return next(t for t in rank.tips(c, c.work) if "prepare_model_for_kbit_training" in t)


def test_an_fp16_qlora_row_is_told_to_cast_to_fp16_not_bf16() -> None:
    tip = _cast_tip("fp16")
    assert "cast them to fp16 yourself" in tip, tip
    assert "bf16 (as the QLoRA paper's script does)" not in tip
    assert "casts them back under --bf16 only" in tip


def test_a_bf16_qlora_row_keeps_the_papers_cast_back() -> None:
    tip = _cast_tip("bf16")
    assert tip.endswith("cast them back to bf16 (as the QLoRA paper's script does).")

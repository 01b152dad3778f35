"""LoRA against full fine-tuning at the same shape (helper "lfp", 2026-12-07): under gradient
checkpointing PEFT's LoRA on every block linear takes about as long as full fine-tuning, and
longer on a small model, because the adapters' reads, writes and launches outweigh the
weight-gradient GEMMs LoRA skips. The engine's LoRA ÷ full time is checked against published
pairs (tests/data/lora_full_pairs.yaml, never tuned on)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.catalog.loader import read_gpu_specs
from app.shipped import yamlio
from benchmarks.finetune import finetune_job
from benchmarks.llm_pretrain import decoder

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
PAIRS = yamlio.safe_load((ROOT / "tests" / "data" / "lora_full_pairs.yaml").read_text("utf-8"))
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
A100 = "a100-sxm4-80gb"


def _ratio(model: str, gpu: str, seq: int, accum: int, rank: int, full_master: str) -> float:
    """The engine's LoRA ÷ full micro-step time of one row's job (batch 1, checkpointing)."""
    shape = decoder(PAIRS["models"][model])
    times = []
    for peft in ("lora", "none"):
        job: dict[str, Any] = {
            "peft": peft,
            "precision": "bf16",
            "micro_batch": 1,
            "grad_accum": accum,
            "seq_len": seq,
            "checkpointing": True,
            "lora_rank": rank,
        }
        if peft == "none" and full_master == "none":
            job["master_weights"] = "none"
        times.append(finetune_job(GPUS[gpu], shape, job, DATA)[1].step_time_s)
    return times[0] / times[1]


# The engine reads LoRA ÷ full 6–13 % below these pairs (0.968 against 1.025 on Qwen-7B, 1.067
# and 1.058 against 1.179 and 1.214 on Qwen-1.8B): both recipes run lora_dropout 0.05, a
# kernel per adapted linear over its input each pass, which the engine does not price.
WITHIN = 1.2


@pytest.mark.parametrize(
    "row", PAIRS["rows"], ids=[f"{r['source']}-{r['model']}-{r['seq_len']}" for r in PAIRS["rows"]]
)
def test_lora_on_every_linear_against_full_at_the_same_shape(row: dict[str, Any]) -> None:
    engine = _ratio(
        row["model"], row["gpu_slug"], int(row["seq_len"]), int(row["grad_accum"]),
        int(row["lora_rank"]), str(row["full_master_weights"]),
    )  # fmt: skip
    published = row["lora_s"] / row["full_s"]
    assert published / WITHIN < engine < published * WITHIN
    # FLOPs alone would put checkpointed LoRA at ~3/4 of full (it skips one of four GEMM
    # passes: the weight gradient); the pairs put it at or above full, and so must the engine
    assert engine > 0.9


@pytest.mark.parametrize(
    "row", PAIRS["bounds"], ids=[f"{r['model']}-{r['seq_len']}" for r in PAIRS["bounds"]]
)
def test_lora_on_every_linear_costs_at_least_what_c_attn_alone_did(row: dict[str, Any]) -> None:
    engine = _ratio(row["model"], A100, int(row["seq_len"]), 16, 8, "none")
    assert engine >= row["lora_s"] / row["full_s"]

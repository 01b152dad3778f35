"""Qwen-1.8B full fine-tuning rows (tests/data/finetune_throughput.yaml, peft none): how the
engine reads them (issues 21/23, helper "ft"). The rows ran DeepSpeed ZeRO-3 on one A100 with
nothing offloaded (Qwen README "Profiling of Memory and Speed", finetune_ds.sh): no collective
has a peer and no state leaves the GPU, so the engine prices them as one GPU with no link or
offload time; their flat ~2.1-2.3 s a step at 256-2048 tokens is a host floor that runs beside
the GPU's work, so the GPU-bound 4096/8192-token rows must stay where the GPU step puts them
(docs/methodology.md §6.7m, "ft")."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.shipped import yamlio
from benchmarks import finetune
from benchmarks.llm_pretrain import decoder

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "finetune_throughput.yaml"


@pytest.fixture(scope="module")
def full_rows() -> list[dict]:
    doc = yamlio.safe_load(FILE.read_text(encoding="utf-8"))
    defaults = doc.get("defaults") or {}
    return [{**defaults, **r} for r in doc["rows"] if r["peft"] == "none"]


def test_full_rows_are_one_gpu_without_a_link_or_offload_term(full_rows) -> None:
    doc = yamlio.safe_load(FILE.read_text(encoding="utf-8"))
    gpu = next(g for g in read_gpu_specs(ROOT / "data") if g.slug == "a100-sxm4-80gb")
    assert len(full_rows) == 6
    for row in full_rows:
        assert int(row.get("num_gpus") or 1) == 1, row
        assert row["micro_batch"] == 1 and row["grad_accum"] == 8, row
        assert row["checkpointing"] is True, row
        _, est = finetune.finetune_job(
            gpu, decoder(doc["models"][row["model"]]), row, ROOT / "data"
        )
        # one rank: ZeRO-3's fetch gathers nothing and its reduce-scatter has no peer
        assert est.num_gpus == 1 and est.comm_s == 0.0, row


def test_gpu_bound_full_rows_stay_at_the_gpu_step() -> None:
    """The floor runs beside the GPU's work (max, not sum): at 4096 and 8192 tokens the measured
    step (2.8 and 5.6 s) is the engine's GPU step within 10 %, so a host term for DeepSpeed's
    hooks, if one is ever priced, must not add to these rows."""
    rows, _ = finetune.evaluate_finetune(ROOT / "data", FILE)
    full = {r.label: r for r in rows if r.method == "none"}
    for label in ("qwen-1.8b none s4096", "qwen-1.8b none s8192"):
        ratio = full[label].predicted / full[label].measured
        assert 0.9 <= ratio <= 1.1, (label, ratio)
    # and the short rows are where the unpriced part shows: with the plain HF host floor priced
    # per call (0.079 s a micro-step) the engine is still > 3x fast at 256 tokens, DeepSpeed
    # ZeRO-3's hook path (~0.17 s a micro-step) having no sourced price
    short = full["qwen-1.8b none s256"]
    assert 3.0 < short.predicted / short.measured < 4.0


@pytest.mark.parametrize(("seq", "samples_per_s"), [(512, 10.77), (1024, 10.39)])
def test_plain_full_fine_tuning_is_not_priced_above_ms_swifts_run(
    seq: int, samples_per_s: float
) -> None:
    """The same model trained fully on one A100 without DeepSpeed (ms-swift
    docs/source_en/LLM/Benchmark.md @ 4692215, "Full": batch 1, 16 accumulation steps,
    gradient checkpointing, FlashAttention; evidence, not a tuning row): flat at ~0.09 s a
    micro-step, a host floor. Counted per call (perf._train_host_calls) the engine is within
    20 % of it; charged per engine kernel it read 1.7x fast at 512 tokens."""
    doc = yamlio.safe_load(FILE.read_text(encoding="utf-8"))
    gpu = next(g for g in read_gpu_specs(ROOT / "data") if g.slug == "a100-sxm4-80gb")
    row = {
        **doc["defaults"],
        "model": "qwen-1.8b",
        "peft": "none",
        "precision": "bf16",
        "seq_len": seq,
        "grad_accum": 16,
    }
    _, est = finetune.finetune_job(gpu, decoder(doc["models"]["qwen-1.8b"]), row, ROOT / "data")
    assert 0.8 <= samples_per_s / est.throughput <= 1.05, est.throughput

"""Megatron's tensor/pipeline layouts never gather a whole layer: no FSDP unsharded units in
their memory (regression hunt 2026-12-05: 70B on 64 A30s under Megatron was refused with
"sharded over 64 GPUs (FSDP/ZeRO-3)" words and 5 GB of gathered layers)."""

from __future__ import annotations

from dataclasses import replace

from app.domain.workload import WorkloadSpec, memory_breakdown
from tests.domain.fixtures import LLAMA3_8B, LLAMA3_70B


def test_megatron_memory_has_no_gathered_fsdp_units() -> None:
    job = WorkloadSpec(task="training", model=LLAMA3_70B, precision="bf16", batch_size=64,
                       seq_len=4096, gradient_checkpointing=True)  # fmt: skip
    fsdp = memory_breakdown(job, num_gpus=64)
    meg = memory_breakdown(replace(job, runtime="megatron"), num_gpus=64)
    assert any("FSDP" in n for n in fsdp.notes)
    assert not any("FSDP" in n for n in meg.notes)
    assert meg.weights < fsdp.weights


def test_a_decoder_shape_without_an_intermediate_size_is_read_gated() -> None:
    """Regression hunt 2026-12-05: Llama-2-7B's shape without intermediate_size read as a plain
    MLP (at the 4·h default both MLPs give its parameter count), 30.0 → 21.6 GB of activations."""
    from app.domain.activations import gated_mlp

    llama2 = replace(LLAMA3_8B, params=6.74e9, layers=32, hidden_size=4096, vocab_size=32000,
                     num_kv_heads=32, intermediate_size=None)  # fmt: skip
    assert gated_mlp(llama2)
    whisper_like = replace(llama2, family="encoder-decoder", intermediate_size=5120)
    assert not gated_mlp(whisper_like)

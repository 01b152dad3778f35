"""FSDP's root unit stays gathered on every GPU (rev7 #1).

Under the usual auto-wrap on the decoder layers the input embedding, the final norm and the
LM head form the root unit, which FSDP does not reshard after forward (FSDP1's
``_post_forward_reshard`` skips the root; FSDP2's ``fully_shard`` sets the root's
``reshard_after_forward`` to False), so each GPU holds it whole from forward through backward,
and the LM head's unsharded gradient beside the logits at the start of backward.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain.workload import (
    ModelSpec,
    WorkloadSpec,
    fsdp_block_bytes,
    fsdp_root_bytes,
    memory_breakdown,
)

GB = 1e9
GIB = 2**30
# meta-llama/Llama-3.1-8B and -70B config.json: untied heads, vocabulary 128,256
LLAMA31_8B = ModelSpec(
    family="decoder",
    params=8.03e9,
    layers=32,
    hidden_size=4096,
    num_heads=32,
    num_kv_heads=8,
    intermediate_size=14336,
    vocab_size=128256,
)
LLAMA31_70B = ModelSpec(
    family="decoder",
    params=70.6e9,
    layers=80,
    hidden_size=8192,
    num_heads=64,
    num_kv_heads=8,
    intermediate_size=28672,
    vocab_size=128256,
)
TABLE_8B = 128256 * 4096  # 525.3 M
TABLE_70B = 128256 * 8192  # 1.05 B


def _full_ft(**kw: object) -> WorkloadSpec:
    base: dict[str, object] = {
        "task": "fine-tuning",
        "model": LLAMA31_8B,
        "precision": "bf16",
        "optimizer": "adamw",
        "seq_len": 2048,
        "batch_size": 8,
        "gradient_checkpointing": True,
    }
    return WorkloadSpec(**{**base, **kw})  # type: ignore[arg-type]


def _qlora_70b() -> WorkloadSpec:
    return WorkloadSpec(
        task="fine-tuning",
        model=LLAMA31_70B,
        precision="bf16",
        peft="qlora",
        lora_rank=16,
        seq_len=512,
        batch_size=2,
        gradient_checkpointing=True,
    )


def test_the_root_is_the_embedding_and_head_in_16_bit_with_the_heads_gradient() -> None:
    params, grad = fsdp_root_bytes(_full_ft())
    assert params == pytest.approx(2 * 2.0 * TABLE_8B)  # 2.1 GB: embedding + head
    assert grad == pytest.approx(2.0 * TABLE_8B)  # 1.05 GB: the head's, first in backward
    assert params / GB == pytest.approx(2.10, abs=0.01)


def test_a_tied_table_counts_once() -> None:
    tied = replace(LLAMA31_8B, tied_embeddings=True, params=8.03e9 - TABLE_8B)
    params, grad = fsdp_root_bytes(_full_ft(model=tied))
    assert params == pytest.approx(2.0 * TABLE_8B)
    assert grad == pytest.approx(2.0 * TABLE_8B)


def test_a_frozen_root_has_no_gradient_and_qlora_keeps_it_16_bit() -> None:
    params, grad = fsdp_root_bytes(_qlora_70b())
    assert params == pytest.approx(2 * 2.0 * TABLE_70B)  # 4.2 GB
    assert grad == 0.0


def test_one_gpu_holds_no_root_unit() -> None:
    mem = memory_breakdown(_full_ft(), num_gpus=1)
    assert not any("root FSDP unit" in note for note in mem.notes)


def test_every_gpu_holds_the_whole_root() -> None:
    work = _full_ft()
    root, _ = fsdp_root_bytes(work)
    layer, _ = fsdp_block_bytes(work)
    one = memory_breakdown(work, num_gpus=1)
    for n in (2, 8):
        mem = memory_breakdown(work, num_gpus=n)
        assert any("root FSDP unit" in note for note in mem.notes)
        # the 16-bit copies split n ways but for the head's, which is the gathered root: the
        # whole 2.1 GB on every GPU, once, beside two gathered layers
        split = (one.weights * GB - 2.0 * TABLE_8B) / n
        assert mem.weights * GB == pytest.approx(split + 2 * layer + root)


def test_llama_8b_full_fine_tuning_no_longer_fits_8_rtx_a5000() -> None:
    # rev7 repro A: micro-batch 8 over 8 GPUs (one sample each), checkpointed; the engine had
    # 25.32 GB of the A5000's 24 GiB (25.77 GB), 0.45 GB spare, counting 1/8 of the root
    work = _full_ft(accumulates=True)
    mem = memory_breakdown(work, num_gpus=8)
    assert mem.total > 24 * GIB / GB
    # about 3 GB more than before: 2.1 GB of root, 1.05 GB of head gradient, less the eighth
    # of the head's 16-bit copy the shards had held
    root, grad = fsdp_root_bytes(work)
    assert (root + grad - 2.0 * TABLE_8B / 8) / GB == pytest.approx(3.02, abs=0.01)


def test_qlora_70b_at_seq_512_no_longer_fits_2_rtx_3090() -> None:
    # rev7 repro B: 25.24 GB of the 3090's 23.7 GiB (25.45 GB); the shards hold half the
    # 16-bit embedding and head, and each GPU the whole 4.2 GB root beside them
    work = _qlora_70b()
    two = memory_breakdown(work, num_gpus=2)
    assert two.total > 25.45
    root, _ = fsdp_root_bytes(work)
    assert root / GB == pytest.approx(4.20, abs=0.01)

"""Memory per GPU under a stated Megatron layout (app/domain/megatron.py, after Megatron-LM's
megatron/training/theoretical_memory_usage.py), worked by hand for a small decoder."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain.megatron import MegatronLayout
from app.domain.workload import GB, ModelSpec, WorkloadSpec, memory_breakdown

H, F, L, V, S = 256, 1024, 4, 1000, 512
# per layer: q, o (h x h), k, v (h x h: 4 KV heads of 64), gate, up, down (h x F)
BLOCKS = L * (2 * H * H + 2 * H * H + 3 * H * F)
EMBED = V * H
SMALL = ModelSpec(
    family="decoder",
    params=float(BLOCKS + 2 * EMBED),
    layers=L,
    hidden_size=H,
    num_heads=4,
    num_kv_heads=4,
    intermediate_size=F,
    vocab_size=V,
    tied_embeddings=False,
)


def _work(lay: MegatronLayout, batch: int, **kw: object) -> WorkloadSpec:
    base: dict[str, object] = {
        "task": "training",
        "model": SMALL,
        "batch_size": batch,
        "seq_len": S,
        "runtime": "megatron",
        "megatron": lay,
    }
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


def test_tp2_pp2_dp2_by_hand() -> None:
    lay = MegatronLayout(tp=2, pp=2)
    mem = memory_breakdown(_work(lay, 16), num_gpus=8)  # 2 sequences per GPU: micro-batch 2
    # first stage: half the blocks and the input embedding, split over TP 2
    shard = (BLOCKS / 2 + EMBED) / 2
    dp = 2
    assert mem.weights * GB == pytest.approx(2 * shard)
    assert mem.gradients * GB == pytest.approx(4 * shard)
    assert mem.master_weights * GB == pytest.approx(4 * shard / dp)
    assert mem.optimizer * GB == pytest.approx(8 * shard / dp)
    # Megatron's 6 + 12/d bytes per parameter of the shard
    states = mem.weights + mem.gradients + mem.master_weights + mem.optimizer
    assert states * GB == pytest.approx(shard * (6 + 12 / dp))
    # Korthikanti et al. 2022 (TP + SP): s·b·h·(18 + 6·F/h) per layer (SwiGLU), L layers in
    # flight on the first stage (pp micro-batches of L/pp), the embedding's input and dropout
    # mask for pp micro-batches, all over t; no output layer on the first of two stages
    sbh = S * 2 * H
    acts = (sbh * (18 + 6 * F / H) * L + 8 * S * 2 * 2 + sbh * 2) / 2
    assert mem.activations * GB == pytest.approx(acts)
    assert mem.logits == 0.0


def test_interleaving_one_stage_and_context_parallel_by_hand() -> None:
    sbh = S * 1 * H
    per_layer = sbh * (18 + 6 * F / H)
    # interleaved 1F1B: x (1 + (p - 1)/(p·v))
    vp = memory_breakdown(_work(MegatronLayout(tp=2, pp=2, vp=2), 8), num_gpus=8)
    want = (per_layer * L + 8 * S * 2 + sbh * 2) * (1 + 1 / 4) / 2
    assert vp.activations * GB == pytest.approx(want)
    # one stage holds the untied output layer and the loss: 4·s·b·h·(1 + V/h) over t
    one = memory_breakdown(_work(MegatronLayout(tp=4), 8), num_gpus=8)
    assert one.logits * GB == pytest.approx(4 * sbh * (1 + V / H) / 4)
    assert one.weights * GB == pytest.approx(2 * (BLOCKS + 2 * EMBED) / 4)
    # CP 2 halves the sequence; the distributed optimizer shards over DP x CP = 2 x 2
    cp = memory_breakdown(_work(MegatronLayout(tp=2, cp=2), 8), num_gpus=8)
    half = sbh / 2
    assert cp.activations * GB == pytest.approx(
        (half * (18 + 6 * F / H) * L + 8 * S / 2 + half) / 2
    )
    shard = (BLOCKS + 2 * EMBED) / 2
    assert cp.optimizer * GB == pytest.approx(8 * shard / 4)


def test_full_recompute_keeps_each_layers_input() -> None:
    lay = MegatronLayout(tp=2, pp=2)
    mem = memory_breakdown(_work(lay, 8, gradient_checkpointing=True), num_gpus=8)
    sbh = S * 1 * H
    want = (2 * sbh * L + 8 * S * 2 + sbh * 2 + sbh * (18 + 6 * F / H)) / 2
    assert mem.activations * GB == pytest.approx(want)


LLAMA3_70B = ModelSpec(
    family="decoder",
    params=70.6e9,
    layers=80,
    hidden_size=8192,
    num_heads=64,
    num_kv_heads=8,
    intermediate_size=28672,
    vocab_size=128256,
)


def test_llama3_70b_tp8_pp4_fits_32_gpus_of_80_gb_where_data_parallel_does_not() -> None:
    # 32 sequences of 8192 on 32 GPUs: Megatron micro-batch 1
    def on32(lay: MegatronLayout) -> float:
        work = WorkloadSpec(
            task="training",
            model=LLAMA3_70B,
            batch_size=32,
            seq_len=8192,
            runtime="megatron",
            megatron=lay,
        )
        return memory_breakdown(work, num_gpus=32).total

    assert on32(MegatronLayout(tp=8, pp=4)) < 80.0
    # pure data parallel with the distributed optimizer: 6 bytes per parameter on every GPU
    assert on32(MegatronLayout()) > 6 * 70.6e9 / GB


def test_a_gelu_mlp_keeps_korthikantis_4_ffn_over_h() -> None:
    # a GPT block (q, k, v, o; up and down of h x F; tied embedding): Megatron's own
    # 18 + 4·F/h, 34 at F = 4h (Korthikanti et al. 2022, eq. 1)
    gpt = replace(SMALL, params=float(L * (4 * H * H + 2 * H * F) + EMBED), tied_embeddings=None)
    work = WorkloadSpec(
        task="training",
        model=gpt,
        batch_size=8,
        seq_len=S,
        runtime="megatron",
        megatron=MegatronLayout(tp=2, pp=2),
    )
    sbh = S * 1 * H
    want = (sbh * 34 * L + 8 * S * 2 + sbh * 2) / 2
    assert memory_breakdown(work, num_gpus=8).activations * GB == pytest.approx(want)

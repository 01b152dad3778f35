"""Megatron-LM as Korthikanti et al. 2022 ran it (tests/data/megatron_pretrain.yaml): attention
without a fused kernel (kernels.MEGATRON_SOFTMAX), selective recomputation of the attention
core, and tensor parallelism with and without sequence parallelism."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from app.domain import megatron, perf, topology
from app.domain.kernels import MEGATRON_SOFTMAX
from app.domain.operators import attention, transformer_ops
from app.domain.parallelism import Job
from app.domain.workload import ModelSpec, WorkloadSpec
from app.shipped.rules import load_efficiency

# Korthikanti et al. 2022 Table 3's 22B GPT: 48 layers, h 6144, 64 heads, GeLU MLP of 4h
GPT_22B = ModelSpec(
    family="decoder",
    params=22074273792,
    layers=48,
    hidden_size=6144,
    num_heads=64,
    num_kv_heads=64,
    intermediate_size=24576,
    vocab_size=51200,
)
S, B, HEADS, HD = 2048.0, 4.0, 64.0, 96.0


def _att(**kw: object) -> list:
    return attention(
        "attention",
        tokens_q=B * S,
        q_len=S,
        kv_len=S,
        heads=HEADS,
        head_dim=HD,
        kv_heads=HEADS,
        count=1.0,
        act_b=2.0,
        causal=True,
        flash=False,
        **kw,  # type: ignore[arg-type]
    )


def test_megatron_core_attention_is_two_bmms_one_softmax_pass_and_a_dropout() -> None:
    ops = {o.name: o for o in _att(fused_softmax=True, dropout=True, softmax_b=4.0)}
    assert set(ops) == {
        "attention.qk",
        "attention.softmax",
        "attention.dropout",
        "attention.av",
        "attention.context_copy",
    }
    scores = B * HEADS * S * S
    # baddbmm computes the whole (causal) score matrix: no halving
    assert ops["attention.qk"].flops == pytest.approx(2 * S * S * HD * B * HEADS)
    # the fused scale-mask-softmax: one 16-bit read and write, whatever autocast would do
    assert ops["attention.softmax"].bytes_read == pytest.approx(2 * scores)
    assert ops["attention.softmax"].bytes_written == pytest.approx(2 * scores)
    # the probability dropout writes its output and a 1-byte mask; no runtime fuses it away
    assert ops["attention.dropout"].bytes_written == pytest.approx(3 * scores)
    assert ops["attention.dropout"].role == ""
    # the eager math path's separate scale and mask passes are not there
    eager = {o.name for o in _att(dropout=True, softmax_b=4.0)}
    assert {"attention.scale", "attention.mask", "attention.cast"} <= eager


def test_megatron_softmax_decoder_keeps_its_attention_dropout_when_training() -> None:
    ops = transformer_ops(GPT_22B, 1.0, S, megatron_softmax=True)
    names = {o.name for o in ops}
    assert "attention.dropout" in names and "attention" not in names
    # hidden dropouts stay fused into the residual adds
    assert "mlp.dropout" not in names
    assert "attention.dropout" not in {
        o.name for o in transformer_ops(GPT_22B, 1.0, S, megatron_softmax=True, training=False)
    }


def _work(**kw: object) -> WorkloadSpec:
    base = WorkloadSpec(
        task="training",
        model=GPT_22B,
        batch_size=4,
        seq_len=2048,
        runtime="megatron",
        attention_kernel=MEGATRON_SOFTMAX,
        efficiency=load_efficiency(),
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_selective_recompute_runs_the_attention_core_once_more() -> None:
    plain = perf.step_ops(_work(), True, 2.0) or []
    sel = perf.step_ops(_work(selective_recompute=True), True, 2.0) or []
    fwd = perf.forward_ops(_work(), True, 2.0) or []
    extra = list((Counter(o.name for o in sel) - Counter(o.name for o in plain)).elements())
    assert sorted(extra) == sorted(o.name for o in perf.attention_core(fwd))
    assert sorted(extra) == [
        "attention.av",
        "attention.dropout",
        "attention.qk",
        "attention.softmax",
    ]
    # under full recompute it adds nothing beyond the recomputed forward
    full = perf.step_ops(_work(gradient_checkpointing=True), True, 2.0) or []
    both = perf.step_ops(_work(gradient_checkpointing=True, selective_recompute=True), True, 2.0)
    assert both == full


def test_without_sequence_parallelism_norms_and_adds_move_tp_times_their_bytes() -> None:
    sp = _work(megatron=megatron.MegatronLayout(tp=8))
    nosp = _work(megatron=megatron.MegatronLayout(tp=8, sequence_parallel=False))
    a = {o.name: o for o in perf.forward_ops(sp, True, 2.0) or []}
    with_sp = {o.name: o for o in perf.step_ops(sp, True, 2.0) or []}
    without = {o.name: o for o in perf.step_ops(nosp, True, 2.0) or []}
    for name in ("layernorm.attn", "residual.mlp", "layernorm.attn.bwd"):
        assert without[name].bytes == pytest.approx(8 * with_sp[name].bytes)
    for name in ("mlp.up", "attention.softmax"):
        assert without[name].bytes == pytest.approx(with_sp[name].bytes)
    assert with_sp["layernorm.attn"].bytes == pytest.approx(a["layernorm.attn"].bytes)


def _job(recompute: bool = False) -> Job:
    return Job(
        grad_bytes=0.0,
        weight_bytes=0.0,
        layers=48,
        compute_s=1.0,
        backward_share=2 / 3,
        accumulation_steps=1,
        act_bytes_per_layer=S * B * 6144 * 2.0,
        recompute=recompute,
    )


def test_sequence_parallel_backward_regathers_the_column_parallel_inputs() -> None:
    act = S * B * 6144 * 2.0
    ar = topology.ring_allreduce_bytes(8, act)
    ag = topology.allgather_bytes(8, act)
    sp = megatron.MegatronLayout(tp=8)
    nosp = megatron.MegatronLayout(tp=8, sequence_parallel=False)
    k = 8  # micro-batches per engine micro-step
    assert megatron.tp_bytes(nosp, _job()) == pytest.approx(k * 48 * 4 * ar)
    assert megatron.tp_bytes(sp, _job()) == pytest.approx(k * 48 * (4 * ar + 2 * ag))
    assert megatron.tp_bytes(sp, _job(True)) == pytest.approx(k * 48 * (6 * ar + 2 * ag))
    # all-reduces are one call each; under SP an all-gather and a reduce-scatter, plus re-gathers
    assert megatron.tp_calls(nosp, _job(True)) == pytest.approx(k * 48 * 6)
    assert megatron.tp_calls(sp, _job()) == pytest.approx(k * 48 * (8 + 2))


def test_megatron_shapes_are_one_gpus_micro_batch_and_tp_shard() -> None:
    from app.domain.operators import megatron_shapes

    work = _work(batch_size=64, megatron=megatron.MegatronLayout(tp=8))
    whole = perf.step_ops(work, True, 2.0) or []
    shaped = {o.name: o for o in megatron_shapes(whole, 64.0, 1.0, 8)}
    t, h, ffn = 64 * 2048.0, 6144.0, 24576.0
    # column-parallel: output features / tp; row-parallel: input features / tp; tokens / 64
    assert (shaped["mlp.up"].m, shaped["mlp.up"].n, shaped["mlp.up"].k) == (t / 64, ffn / 8, h)
    assert (shaped["mlp.down"].m, shaped["mlp.down"].n, shaped["mlp.down"].k) == (
        t / 64,
        h,
        ffn / 8,
    )
    up_d, up_w = shaped["mlp.up.dgrad"], shaped["mlp.up.wgrad"]
    assert (up_d.m, up_d.n, up_d.k) == (t / 64, h, ffn / 8)
    assert (up_w.m, up_w.n, up_w.k) == (h, ffn / 8, t / 64)
    # attention: one sequence's 64 / 8 heads per launch
    assert shaped["attention.qk"].batch == pytest.approx(64 / 8)
    # FLOPs, bytes and launches are the step's
    by = {o.name: o for o in whole}
    for name, o in shaped.items():
        assert (o.flops, o.bytes, o.count) == (by[name].flops, by[name].bytes, by[name].count)
    # the job's own path: only with a stated micro-batch
    mb = _work(batch_size=64, megatron=megatron.MegatronLayout(tp=8, micro_batch=1))
    assert {o.name: o.m for o in perf.step_ops(mb, True, 2.0) or []}["q_proj"] == 2048.0
    assert {o.name: o.m for o in whole}["q_proj"] == t


def test_megatron_memory_saves_scores_unless_fused_or_selectively_recomputed() -> None:
    from app.domain.workload import memory_breakdown

    lay = megatron.MegatronLayout(tp=8, micro_batch=4)
    te = _work(attention_kernel="", megatron=lay)
    old = _work(megatron=lay)
    sel = _work(megatron=lay, selective_recompute=True)
    acts = {
        k: memory_breakdown(w, num_gpus=8, flash_attention=True).activations
        for k, w in (("te", te), ("old", old), ("sel", sel))
    }
    # Korthikanti et al. 2022 Table 2: 5·a·s/h more per s·b·h per layer with the scores saved
    sbh = 2048 * 4 * 6144
    extra = 48 * sbh * 5 * 64 * 2048 / 6144 / 8 / 1e9
    assert acts["old"] - acts["te"] == pytest.approx(extra, rel=1e-6)
    assert acts["sel"] == pytest.approx(acts["te"])

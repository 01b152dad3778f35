"""An MoE layer under tensor parallelism: the routed copies' h-wide outputs are whole on every
GPU (vLLM fused_experts_impl: intermediate_cache3 is (tokens, top_k, hidden) on each rank, and
moe_sum reads it back before the all-reduce); only the I-wide buffers split (issue 21)."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import llm_step
from app.domain.efficiency import RuntimeProfile
from tests.domain.fixtures import H100, LLAMA3_8B

TP = RuntimeProfile(kernel_us=2.0, span="tensor")
COMP = {p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")}
# Qwen3-235B-A22B's shape (data/workloads.yaml): 94 layers, hidden 4096, 128 experts of FFN
# 1536, 8 a token, no shared expert
QWEN3_235B = dataclasses.replace(
    LLAMA3_8B, params=235e9, active_params=22e9, experts=128, active_experts=8,
    shared_experts=0, layers=94, hidden_size=4096, num_heads=64, num_kv_heads=4,
    intermediate_size=1536,
)  # fmt: skip


def _rep(n: int, model=QWEN3_235B) -> llm_step.Replica:
    return llm_step.replica(
        H100, model, weights="bf16", kv="bf16", n=n, decode=TP, prefill=TP,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip


def test_each_tensor_parallel_gpu_moves_the_routed_copies_whole_hidden_rows():
    layers, k, i, h = 94, 8, 1536, 4096
    # one GPU: k copies × (gate/up 2I written and read, activation I, down output h) × 2 bytes
    one = layers * k * 2.0 * (6 * i + 2 * h)
    assert llm_step.moe_activation_bytes(QWEN3_235B) == pytest.approx(one)
    # eight GPUs: each holds I/8 of every expert, so its I-wide buffers are an eighth, but its
    # down projection writes all h columns of every routed copy and moe_sum reads them back
    per_gpu = layers * k * 2.0 * (6 * i / 8 + 2 * h)
    assert llm_step.moe_activation_bytes(QWEN3_235B, 8) == pytest.approx(8 * per_gpu)
    rep = _rep(8)
    assert rep.tp == 8
    assert rep.moe_act_bytes == pytest.approx(8 * per_gpu)
    # the step pays each GPU's share at one GPU's bandwidth (the replica's ÷ 8)
    no_traffic = dataclasses.replace(rep, moe_act_bytes=0.0)
    tokens = 512.0
    a, b = rep.parts(tokens, 300.0, 0.0, 300.0), no_traffic.parts(tokens, 300.0, 0.0, 300.0)
    assert a.memory_s - b.memory_s == pytest.approx(tokens * per_gpu / (rep.bw / 8))
    # at 512 decodes that is ~2.4 ms a step on these H100s where the split rule had 0.6 ms
    split_rule = tokens * one / rep.bw
    assert a.memory_s - b.memory_s > 4.0 * split_rule


def test_one_gpu_and_dense_models_are_unchanged():
    rep = _rep(1)
    assert rep.moe_act_bytes == pytest.approx(llm_step.moe_activation_bytes(QWEN3_235B))
    dense = dataclasses.replace(LLAMA3_8B)
    assert llm_step.moe_activation_bytes(dense, 8) == 0.0
    assert _rep(8, dense).moe_act_bytes == 0.0


def test_a_wider_split_moves_more_routed_bytes_per_token_in_all():
    # the h-wide part does not shrink with the split, so the replica's total grows with tp
    # while each GPU's I-wide share shrinks: per GPU, 4 GPUs move more than 8 (their I/4 slices)
    four, eight = _rep(4), _rep(8)
    assert eight.moe_act_bytes > four.moe_act_bytes > _rep(1).moe_act_bytes
    assert four.moe_act_bytes / 4 > eight.moe_act_bytes / 8

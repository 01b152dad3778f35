"""DeepSeek-V3/R1 under tensor parallelism: the latent down-projections every rank keeps whole
are in each GPU's weight memory (serving.memory_plan, workload.memory_breakdown), and a decode
step reads each distinct routed expert it touches once, at the rate vLLM's fused MoE kernel
reaches on an H200 (methodology §6.7t, "ds")."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import efficiency, llm_step
from app.domain import serving as sv
from app.domain.workload import (
    WorkloadSpec,
    memory_breakdown,
    replicated_params,
    replicated_weight_bytes,
)
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import DEEPSEEK_V3, H100, H200, LLAMA3_8B

TABLE = load_efficiency()
GB = 1e9
COMP = dict.fromkeys(("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"), 0.56)
# q_a_proj + kv_a_proj_with_mqa over 61 layers: 0.92 B weights, FP8 in the release
LATENT_A = 61 * 7168 * (1536 + 512 + 64)


def _rt(name: str = "vllm") -> sv.RuntimeProfile:
    return sv.runtime_profile(TABLE, name, TABLE.profile(H100, "cuda", name, "bf16", "decode"))


def _cfg(n: int) -> sv.ServingConfig:
    return sv.ServingConfig(
        gpus_per_replica=n, replicas=1, weight_precision="fp8", kv_precision="bf16", runtime="vllm"
    )


def test_the_replicated_bytes_are_the_seven_eighths_an_even_split_leaves_out():
    assert replicated_params(DEEPSEEK_V3) == LATENT_A
    # FP8: one byte a weight; at TP 8 each GPU holds all of them, the 1/8 share counted 1/8
    assert replicated_weight_bytes(DEEPSEEK_V3, 1.0, 8) == pytest.approx(LATENT_A * 7 / 8)
    assert replicated_weight_bytes(DEEPSEEK_V3, 1.0, 8) / GB == pytest.approx(0.808, abs=1e-3)
    # 16-bit weights twice that; two stages of TP 8 each hold their own layers' copy
    assert replicated_weight_bytes(DEEPSEEK_V3, 2.0, 8) == pytest.approx(LATENT_A * 7 / 4)
    assert replicated_weight_bytes(DEEPSEEK_V3, 1.0, 16) == pytest.approx(LATENT_A * 7 / 16)
    # one GPU, or a model without latent attention: nothing beyond the share
    assert replicated_weight_bytes(DEEPSEEK_V3, 1.0, 1) == 0.0
    assert replicated_weight_bytes(LLAMA3_8B, 1.0, 8) == 0.0


def test_the_serving_plan_per_gpu_weights_of_deepseek_v3_at_tp8_include_them():
    rt = _rt()
    held = sv.held_weights(DEEPSEEK_V3, "fp8", rt)
    usable = efficiency.usable_gb(H200)
    weights, act, fw, pool = sv.memory_plan(H200, DEEPSEEK_V3, _cfg(8), rt, usable)
    assert weights * GB == pytest.approx(held / 8 + LATENT_A * 7 / 8)
    assert weights * GB - held / 8 == pytest.approx(0.808 * GB, rel=1e-3)
    # the KV pool is what the claim leaves after them: 0.81 GB a GPU less than an even split
    # would leave (vLLM claims a share of the whole GPU, gpu_memory_utilization)
    even = efficiency.kv_pool_gb(usable, held / 8 / GB + act + fw, 0.9, False)
    assert even - pool == pytest.approx(LATENT_A * 7 / 8 / GB, rel=1e-6)
    one = sv.memory_plan(H200, DEEPSEEK_V3, _cfg(1), rt, usable)
    assert one[0] * GB == pytest.approx(held)  # one GPU: the whole model once, nothing more


def test_a_dense_model_and_a_layer_split_keep_the_even_share():
    rt = _rt()
    held = sv.held_weights(LLAMA3_8B, "fp8", rt)
    assert sv.weights_per_gpu(LLAMA3_8B, "fp8", rt, 4) == pytest.approx(held / 4)
    # llama.cpp splits whole layers: no rank multiplies a layer's projection twice
    layers = dataclasses.replace(rt, multi_gpu="layers")
    held_mla = sv.held_weights(DEEPSEEK_V3, "fp8", layers)
    assert sv.weights_per_gpu(DEEPSEEK_V3, "fp8", layers, 8) == pytest.approx(held_mla / 8)


def test_the_inference_memory_of_deepseek_v3_on_eight_gpus_holds_them_too():
    work = WorkloadSpec(
        task="inference", model=DEEPSEEK_V3, precision="fp8", batch_size=1, seq_len=2048,
        output_tokens=256, runtime="vllm", efficiency=TABLE,
    )  # fmt: skip
    one_share = work.weight_bytes / 8
    mem = memory_breakdown(work, num_gpus=8)
    assert mem.weights * GB == pytest.approx(one_share + LATENT_A * 7 / 8)
    # the serving plan and LLM inference agree on the per-GPU weights (one weight rule)
    assert mem.weights == pytest.approx(sv.weights_per_gpu(DEEPSEEK_V3, "fp8", _rt(), 8) / GB)


# vLLM PR #36554 / #36559 (swap-AB, 2026-03), benchmarks/kernels/benchmark_moe.py on an H200,
# DeepSeek-R1-0528 fp8_w8a8 block [128, 128] at the script's default --tp-size 2 (w13 N = 2048,
# w2 K = 1024), main branch, BLOCK_SIZE_M 16 / N 128 / K 128: the whole fused_moe call (routing,
# align, both grouped GEMMs, activation, sum) under a CUDA graph, µs by tokens
FUSED_MOE_H200_US = {2: 112.23, 4: 190.77, 8: 350.54}


@pytest.mark.parametrize("tokens", sorted(FUSED_MOE_H200_US))
def test_a_decode_step_reads_each_distinct_expert_it_touches_at_the_kernels_rate(tokens):
    prof = TABLE.profile(H200, "cuda", "vllm", "bf16", "decode")
    rep = llm_step.replica(
        H200, DEEPSEEK_V3, weights="fp8", kv="bf16", n=1, decode=prof, prefill=prof,
        memory_efficiency=0.88, compute_efficiency=COMP,  # the engine's Hopper prior
    )  # fmt: skip
    # the bytes: every distinct routed expert the step's tokens touch, read once — the
    # expected count 256·(1 − (1 − 8/256)^T), fewer than T × 8
    touched = 1.0 - (1.0 - 8 / 256) ** tokens
    assert rep.weights_read(tokens) == pytest.approx(rep.dense_bytes + rep.expert_bytes * touched)
    assert 256 * touched < 8 * tokens
    # the rate: one MoE layer's touched experts at the benchmark's TP-2 slice (half of each
    # expert), at the replica's bandwidth, plus the routed block's small kernels
    # (moe_block_us) lands within 15 % of the published kernel time at 2-8 tokens: the
    # kernel is bandwidth-bound there and the engine prices it so (methodology §6.7t, "ds")
    layer = rep.expert_bytes / 58 / 2 * touched
    priced_us = layer / rep.bw * 1e6 + prof.moe_block_us
    assert priced_us == pytest.approx(FUSED_MOE_H200_US[tokens], rel=0.15)

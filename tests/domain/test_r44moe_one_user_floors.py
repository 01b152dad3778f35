"""One user's MoE decode step and the floors it rests on (issue 21, "MoE decode for one user is
too fast"): routing and the routed block, grouped expert GEMMs at one token, MLA's absorbed
projections and decode kernel, and the per-layer tensor-parallel all-reduces. Each floor is a
term of the one step function (app/domain/llm_step.py); these tests show that each exists, that
the communication term exists on eight GPUs and vanishes on one, and that a one-user DeepSeek-R1
step on 8 x B200 cannot beat the sum of the sourced figures (docs/methodology.md §6.3 "Kernel
floors" and §6.7z "moe")."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import pytest

from app.domain import llm_step, topology
from app.domain.efficiency import RuntimeProfile
from app.domain.gpu import GpuSpec
from tests.domain.fixtures import DEEPSEEK_V3, H100, LLAMA3_8B

DATA = Path(__file__).resolve().parents[2] / "data"
COMP = {p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")}
CONTEXT = 2048.0

# The sourced figures the floors rest on (data/efficiency.yaml; methodology §6.3): a GEMM or an
# attention kernel takes at least 5 µs (SemiAnalysis InferenceX #863, B200 decode profile:
# small-M GEMMs 4.1-8.9 µs), an MoE layer's routed block's small kernels 21 µs (FlashInfer PR
# #5301's B200 NVFP4 sweep, 35 µs span less its 7 kernels' 2 µs gaps), each kernel a 2 µs gap
# under CUDA graphs, one small all-reduce over NVLink/NVSwitch ~10 µs (nccl-tests small sizes;
# TensorRT-LLM's one-shot all-reduce fused with the MoE finalize at one token, FlashInfer PR
# #4875: 12.5-25.8 µs with the finalize's ~7 µs inside)
GEMM_MIN_US, ATTENTION_MIN_US, MOE_BLOCK_US, GAP_US, ALLREDUCE_US = 5.0, 5.0, 21.0, 2.0, 10.0


@cache
def _b200() -> GpuSpec:
    from app.catalog.loader import read_gpu_specs

    return next(g for g in read_gpu_specs(DATA) if g.slug == "b200")


@cache
def _trtllm() -> tuple[RuntimeProfile, RuntimeProfile]:
    from app.shipped.rules import load_efficiency

    table = load_efficiency(DATA)
    gpu = _b200()
    return (
        table.profile(gpu, "cuda", "tensorrt-llm", "fp4", "decode"),
        table.profile(gpu, "cuda", "tensorrt-llm", "fp4", "prefill"),
    )


def _deepseek(n: int, model=DEEPSEEK_V3) -> llm_step.Replica:
    """DeepSeek-R1 (DeepSeek-V3's shape) in NVFP4 with an FP8 latent cache on ``n`` B200s under
    TensorRT-LLM's shipped decode and prefill profiles (CUDA graphs, tensor parallel)."""
    dec, pre = _trtllm()
    return llm_step.replica(
        _b200(), model, weights="fp4", kv="fp8", n=n, decode=dec, prefill=pre,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip


def _one_user(rep: llm_step.Replica) -> llm_step.StepTime:
    return rep.parts(1.0, CONTEXT, 0.0, CONTEXT)


def test_the_shipped_profile_carries_the_sourced_floor_figures():
    # the floors below are the shipped rows' figures for TensorRT-LLM on a B200, not a test's
    dec, _ = _trtllm()
    assert dec.gemm_min_us == GEMM_MIN_US and dec.attention_min_us == ATTENTION_MIN_US
    assert dec.moe_block_us == MOE_BLOCK_US and dec.kernel_us == GAP_US
    link = topology.link(_b200(), 8)
    assert link.kind == "fast" and link.latency_s == pytest.approx(ALLREDUCE_US * 1e-6)


def test_the_per_layer_all_reduces_exist_on_eight_gpus_and_vanish_on_one():
    one, eight = _deepseek(1), _deepseek(8)
    assert one.tp == 1 and eight.tp == 8
    # one GPU: no link, no collective
    assert one.comm(1.0, 1.0) == 0.0 and _one_user(one).comm_s == 0.0
    # eight: two all-reduces per layer (after attention, after the MoE block) and the step's
    # two beyond its layers (the vocabulary-parallel embedding's all-reduce, the LM head's
    # logits gather), each paying the link's small-message latency; at one token (7168 × 2
    # bytes a layer, 129,280 × 2 bytes of logits) the latency is nearly all of it
    comm = _one_user(eight).comm_s
    latency = (2 * 61 + 2) * ALLREDUCE_US * 1e-6
    assert comm == pytest.approx(eight.comm(1.0, 1.0))
    assert latency <= comm <= 1.01 * latency
    # two per layer: half the layers, half the layers' collectives
    half = _deepseek(8, dataclasses.replace(DEEPSEEK_V3, layers=30))
    per_call = comm / (2 * 61 + 2)
    assert half.comm(1.0, 1.0) == pytest.approx(per_call * (2 * 30 + 2), rel=0.01)


def test_the_steps_own_collectives_exist_under_tensor_parallelism_alone():
    eight = _deepseek(8)
    link = eight.tp_link
    no_head = llm_step.step_comm(1.0, 7168, 61, 8, 1, link, link)
    # the layers' 122 all-reduces and the embedding's one, all of one token's activations
    ring = topology.ring_allreduce_bytes(8, 7168 * 2.0)
    assert no_head == pytest.approx(topology.comm_seconds(link, ring * 123, collectives=123))
    # the logits gather: one more call, its bytes the 7/8 of a row's logits the other GPUs hold
    gathered = eight.comm(1.0, 1.0) - eight.comm(1.0, 0.0)
    assert gathered == pytest.approx(link.latency_s + 7 / 8 * 129280 * 2.0 / (link.gbs * 1e9))
    # a prompt chunk gathers only its prompts' last rows (``logit_rows``), not every token's
    chunk = _deepseek(8).parts(0.0, 0.0, 2048.0, 2048.0, with_prompt=True)
    assert chunk.comm_s == pytest.approx(eight.comm(2048.0, 1.0))
    # and none of it on one GPU, where the embedding and head are whole
    assert llm_step.step_comm(1.0, 7168, 61, 1, 1, link, link, 2.0, 1.0, 129280.0) == 0.0


def test_a_one_user_moe_decode_step_cannot_beat_its_sourced_floor():
    rep = _deepseek(8)
    step = _one_user(rep)
    # per layer: 7 GEMMs (fused q_a/kv_a, q_b, the absorbed W_UK and W_UV, o, the shared
    # expert's gate/up and down) at their floor, the MLA decode kernel at its floor, the routed
    # block's small kernels, 22 kernels' gaps (10 a decoder layer, 7 for the routed block, 5 for
    # MLA) and two all-reduces
    per_layer_us = (
        7 * GEMM_MIN_US + ATTENTION_MIN_US + MOE_BLOCK_US + 22 * GAP_US + 2 * ALLREDUCE_US
    )
    # and the step's two collectives beyond its layers (embedding all-reduce, logits gather)
    floor = (61 * per_layer_us + 2 * ALLREDUCE_US) * 1e-6
    assert floor == pytest.approx(7.645e-3)
    assert step.seconds >= floor
    assert 1.0 / step.seconds <= 1.0 / floor  # at most ~131 tokens/s for one user
    # the floors, not the bytes, bound it: the active weights and the latent cache a token
    # reads over 8 GPUs take under a tenth of the step, so a bandwidth roofline alone would
    # price one user ~10x too fast
    assert step.memory_s < 0.1 * step.seconds
    assert step.bound == "kernel launches"


def test_the_routed_block_and_its_kernels_are_charged_per_moe_layer():
    # the routed block (router GEMM, top-k, quantise, permute, the grouped GEMMs, finalize):
    # its 7 kernels' gaps and its small kernels' fixed time, layer by layer, beside a dense twin
    # (the same shape with one dense MLP in place of the routed experts)
    moe = _deepseek(8)
    dense = _deepseek(8, dataclasses.replace(DEEPSEEK_V3, experts=0, active_experts=0))
    extra = 61 * (llm_step.MOE_KERNELS_PER_LAYER * GAP_US + MOE_BLOCK_US) * 1e-6
    assert moe.launch_s - dense.launch_s == pytest.approx(extra)


def test_grouped_expert_gemms_at_one_token_read_each_touched_expert_once():
    rep = _deepseek(8)
    # one token touches its 8 experts (1 - (1 - 8/256)^1 of all 256), each expert's weights read
    # in full once, whatever the few rows it multiplies
    assert rep.weights_read(1.0) - rep.dense_bytes == pytest.approx(rep.expert_bytes * 8 / 256)
    # eight tokens touch ~57 of them: more bytes, not 8x
    share8 = 1.0 - (1.0 - 8 / 256) ** 8
    assert rep.weights_read(8.0) - rep.dense_bytes == pytest.approx(rep.expert_bytes * share8)


def test_mla_adds_its_absorbed_projections_and_kernels_to_the_floors():
    # latent attention runs 3 more GEMMs (q_b and the absorbed W_UK / W_UV batched GEMMs) and 5
    # more kernels (those and the two latent RMSNorms) than grouped-query attention would
    mla = _deepseek(8)
    gqa = _deepseek(8, dataclasses.replace(DEEPSEEK_V3, attention="gqa", num_kv_heads=8))
    assert mla.gemm_floor_s - gqa.gemm_floor_s == pytest.approx(
        61 * llm_step.MLA_GEMMS * GEMM_MIN_US * 1e-6
    )
    assert mla.launch_s - gqa.launch_s == pytest.approx(61 * llm_step.MLA_KERNELS * GAP_US * 1e-6)
    # and its decode kernel takes its floor: each GPU reads the whole ~2.5 MB latent, ~0.5 µs
    assert mla.attn_floor_s == pytest.approx(61 * ATTENTION_MIN_US * 1e-6)


def test_the_floors_leave_a_dense_single_gpu_decode_to_its_bytes():
    # Llama 3 8B in bf16 on one H100 reads ~16 GB a token: its 32 x 4 GEMM floors (0.64 ms) sit
    # under its bytes and no link term exists, so they leave a dense one-GPU decode as it was;
    # the attention kernels' floor adds at most its 32 x 5 µs (a 2k-token cache of 8 KV heads
    # reads ~8 MB a layer, ~3 µs)
    def step(prof: RuntimeProfile) -> llm_step.StepTime:
        rep = llm_step.replica(
            H100, LLAMA3_8B, weights="bf16", kv="bf16", n=1, decode=prof, prefill=prof,
            memory_efficiency=0.88, compute_efficiency=COMP,
        )  # fmt: skip
        return _one_user(rep)

    floorless = step(RuntimeProfile(kernel_us=GAP_US))
    gemm = step(RuntimeProfile(kernel_us=GAP_US, gemm_min_us=GEMM_MIN_US))
    both = step(RuntimeProfile(kernel_us=GAP_US, gemm_min_us=GEMM_MIN_US, attention_min_us=5.0))
    assert gemm.seconds == pytest.approx(floorless.seconds) and gemm.comm_s == 0.0
    assert 0.0 <= both.seconds - floorless.seconds <= 32 * ATTENTION_MIN_US * 1e-6
    assert both.bound == "memory bandwidth"

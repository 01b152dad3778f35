"""The routed experts' grouped GEMMs in the LLM step (llm_step.expert_tiles, k_depth_rate,
routed_slowdown, Replica.linear): experts touched, token tiles, shallow K; and the same K-depth
rule for the dense GEMMs (dense_slowdown)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from app.domain import llm_step
from app.domain.efficiency import RuntimeProfile
from tests.domain.fixtures import H100, LLAMA3_8B

COMP = {p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")}
# data/efficiency.yaml's grouped-GEMM rows (vLLM's tuned tiles, DeepGEMM's K overhead)
GROUPED = RuntimeProfile(
    kernel_us=2.0, moe_tile_min=16, moe_tile_max=128, gemm_k_overhead_bytes=630,
    gemm_k_ref_bytes=7168,
)  # fmt: skip
PLAIN = RuntimeProfile(kernel_us=2.0)
QWEN3_30B_A3B = dataclasses.replace(
    LLAMA3_8B, params=30.5e9, active_params=3.3e9, experts=128, active_experts=8,
    layers=48, hidden_size=2048, num_heads=32, num_kv_heads=4, intermediate_size=768,
)  # fmt: skip


def _rep(model=QWEN3_30B_A3B, prof=GROUPED, w="bf16", n=1) -> llm_step.Replica:
    return llm_step.replica(
        H100, model, weights=w, kv="bf16", n=n, decode=prof, prefill=prof,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip


def _exact_tiles(n: int, p: float, tile: int) -> float:
    """E[ceil(X / tile)] for X ~ Binomial(n, p), summed over the pmf (log space)."""
    total = 0.0
    for x in range(1, n + 1):
        log_pmf = (
            math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
            + x * math.log(p) + (n - x) * math.log1p(-p)
        )  # fmt: skip
        total += math.exp(log_pmf) * math.ceil(x / tile)
    return total


def test_one_token_touches_k_experts_and_pays_one_small_tile_each():
    tiles, tile = llm_step.expert_tiles(1.0, 8, 128, 16, 128)
    assert tile == 16
    assert tiles == pytest.approx(8 / 128)  # each expert: touched with probability k/E


@pytest.mark.parametrize("tokens", [8, 64, 300, 1545, 3164, 8192])
def test_expected_tiles_follow_the_binomial_spread_of_rows(tokens: int):
    tiles, tile = llm_step.expert_tiles(float(tokens), 8, 128, 16, 128)
    assert tiles == pytest.approx(_exact_tiles(tokens, 8 / 128, tile), rel=0.01)


def test_the_tile_grows_with_the_rows_an_expert_gets_as_vllms_tuned_table_does():
    # vLLM fused_moe E=128,N=768 (Qwen3-30B-A3B) H100 table: BLOCK_SIZE_M by tokens per step
    for tokens, block_m in ((64, 16), (128, 16), (256, 32), (512, 64), (1536, 128), (4096, 128)):
        assert llm_step.expert_tiles(float(tokens), 8, 128, 16, 128)[1] == block_m


def test_padding_to_the_tile_costs_most_when_an_expert_holds_part_of_a_tile():
    def padded(tokens: float) -> float:
        tiles, tile = llm_step.expert_tiles(tokens, 8, 128, 16, 128)
        return 128 * tile * tiles / (8 * tokens)  # padded rows ÷ routed rows

    assert padded(1545.0) == pytest.approx(128 / 96.6, rel=0.01)  # 96.6 rows in a 128 tile
    assert padded(24718.0) < 1.06  # ~1545 rows each: half a tile of waste in twelve
    assert padded(1545.0) > padded(3164.0) > padded(24718.0)


def test_a_shallow_k_runs_below_the_dense_rate_as_deepgemms_table_does():
    # DeepGEMM README (H800, fp8, M=4096), TFLOPS at K bytes, relative to K=7168's 1304
    for k, tflops, n in ((512, 590, 32768), (1536, 990, 24576), (2048, 1025, 7168)):
        model = llm_step.k_depth_rate(k, 630, 7168)
        assert model == pytest.approx(tflops / 1304, rel=0.10), n
    assert llm_step.k_depth_rate(16384, 630, 7168) == 1.0  # deeper than the prior's: capped


def test_fp4_experts_lose_more_to_a_shallow_k_than_fp8_and_tensor_parallel_more_still():
    fp8 = llm_step.routed_slowdown(QWEN3_30B_A3B, 1, "fp8", GROUPED)
    fp4 = llm_step.routed_slowdown(QWEN3_30B_A3B, 1, "fp4", GROUPED)
    tp4 = llm_step.routed_slowdown(QWEN3_30B_A3B, 4, "fp8", GROUPED)
    assert 1.0 < fp8 < fp4 and fp8 < tp4
    # gate/up at K = 2048 bytes, down at 768 (fp8)
    rate = lambda k: llm_step.k_depth_rate(k, 630, 7168)  # noqa: E731
    assert fp8 == pytest.approx(2 / 3 / rate(2048) + 1 / 3 / rate(768))
    assert llm_step.routed_slowdown(QWEN3_30B_A3B, 1, "fp8", PLAIN) == 1.0


def test_a_prefill_pays_padded_rows_at_the_shallow_rate_a_decode_token_its_weights():
    grouped, plain = _rep(), _rep(prof=PLAIN)
    tokens = 8192.0
    _w, lin, t = grouped.linear(tokens)
    tiles, tile = llm_step.expert_tiles(tokens, 8, 128, 16, 128)
    routed = 128 * tile * tiles * grouped.routed_flops_per_row * grouped.routed_slowdown
    dense = tokens * (grouped.flops_per_token - 8 * grouped.routed_flops_per_row)
    dense += tokens * grouped.head_flops  # the LM head on every row (a decode's; ``linear``)
    dense *= grouped.dense_slowdown  # attention projections at K = 2048 bf16: the same rule
    assert lin == pytest.approx((dense + routed) / grouped.flops)
    assert t > max(plain.linear(tokens)[:2])  # slower than all FLOPs at the dense rate
    # one token: the touched experts' weights bound it, grouped or not
    assert grouped.linear(1.0)[2] == pytest.approx(plain.linear(1.0)[2])
    assert grouped.parts(1.0, 500.0, 0.0, 500.0).seconds == pytest.approx(
        plain.parts(1.0, 500.0, 0.0, 500.0).seconds
    )


def test_every_touched_experts_weights_are_read_once_whatever_its_rows():
    rep = _rep()
    w1, _, _ = rep.linear(1.0)
    w64, _, _ = rep.linear(64.0)
    touched = 1 - (1 - 8 / 128) ** 64
    assert w64 * rep.bw == pytest.approx(rep.dense_bytes + rep.expert_bytes * touched)
    assert w1 < w64


def test_dense_models_are_not_touched_by_the_grouped_gemm_rows():
    dense, dense_plain = _rep(LLAMA3_8B), _rep(LLAMA3_8B, PLAIN)
    assert dense.tile_max == 0 and dense.routed_slowdown == 1.0
    for tokens in (1.0, 300.0, 8192.0):
        w, lin, t = dense.linear(tokens)
        assert t == max(w, lin) == dense_plain.linear(tokens)[2]
    step = dense.parts(64.0, 1000.0, 2048.0, 2048.0).seconds
    assert step == dense_plain.parts(64.0, 1000.0, 2048.0, 2048.0).seconds


def test_dense_gemms_pay_the_same_short_k_rule_at_their_own_k():
    # one rule for every GEMM (DeepGEMM's dense table; CUTLASS 3.6 runs its short-K shapes at
    # the same rate, README speedup 1.0x): QKV and gate/up at K = hidden, the attention output
    # at K = heads × head size ÷ TP, down at K = FFN ÷ TP, the rest of a token's FLOPs at hidden
    m = LLAMA3_8B
    h, inter, layers = 4096.0, 14336.0, 32.0
    rate = lambda k: llm_step.k_depth_rate(k, 630, 7168)  # noqa: E731
    qkv, out, mlp = h * (4096 + 2 * 1024), 4096 * h, 3 * h * inter
    dense = m.params_per_token
    rest = dense - layers * (qkv + out + mlp)
    want = (
        layers * (qkv / rate(h) + out / rate(4096) + h * inter * (2 / rate(h) + 1 / rate(inter)))
        + rest / rate(h)
    ) / dense
    assert llm_step.dense_slowdown(m, 1, "fp8", GROUPED) == pytest.approx(want)
    assert 1.0 < want < 1.06  # 4 KiB of K: ~6 % below the prior on most of the FLOPs
    # bf16's K of 8 KiB is as deep as the prior's: untouched; fp4 halves the bytes of K, and
    # tensor parallelism shortens the output and down projections' K
    assert llm_step.dense_slowdown(m, 1, "bf16", GROUPED) == 1.0
    assert llm_step.dense_slowdown(m, 1, "fp4", GROUPED) > want
    assert llm_step.dense_slowdown(m, 8, "fp8", GROUPED) > want
    assert llm_step.dense_slowdown(m, 1, "fp8", PLAIN) == 1.0  # not modelled: the prior


def test_a_dense_step_runs_its_flops_at_the_short_k_rate():
    fp8, plain = _rep(LLAMA3_8B, w="fp8"), _rep(LLAMA3_8B, PLAIN, w="fp8")
    assert fp8.dense_slowdown == llm_step.dense_slowdown(LLAMA3_8B, 1, "fp8", GROUPED)
    tokens = 8192.0
    _w, lin, t = fp8.linear(tokens)
    # the layers' FLOPs and the LM head's on every row (``linear``'s default: a decode's)
    flops = tokens * fp8.flops_per_token + tokens * fp8.head_flops
    assert lin == flops * fp8.dense_slowdown / fp8.flops
    assert t == pytest.approx(plain.linear(tokens)[2] * fp8.dense_slowdown)  # compute-bound
    assert fp8.linear(1.0)[2] == plain.linear(1.0)[2]  # one token: its weights bound it


# llama.cpp's mul_mat_id at a few tokens: one matrix-vector product per selected expert
# (ggml_cuda_mul_mat_id -> mul_mat_vec_q with ids; Metal kernel_mul_mv_id_*), no token tile
GEMV_PER_EXPERT = dataclasses.replace(GROUPED, moe_tile_min=1)


def test_one_token_on_gemv_experts_computes_only_its_own_k_rows():
    tiles, tile = llm_step.expert_tiles(1.0, 8, 128, 1, 128)
    assert tile == 1 and tiles == pytest.approx(8 / 128)
    gemv, grouped = _rep(prof=GEMV_PER_EXPERT), _rep()
    _w, lin, _t = gemv.linear(1.0)
    routed = 8 * gemv.routed_flops_per_row * gemv.routed_slowdown  # k rows, one token
    # the dense layers and the LM head's one row
    dense = gemv.flops_per_token - 8 * gemv.routed_flops_per_row + gemv.head_flops
    dense *= gemv.dense_slowdown
    assert lin == pytest.approx((dense + routed) / gemv.flops)
    # the 16-row tile computes 16 rows per touched expert: 16x the routed math
    routed_16 = grouped.linear(1.0)[1] * grouped.flops - dense
    assert routed_16 == pytest.approx(16 * routed)
    # the weights read are the same k experts either way
    assert gemv.linear(1.0)[0] == grouped.linear(1.0)[0]


def test_shipped_llamacpp_profile_runs_experts_without_a_token_tile_other_runtimes_keep_it():
    from app.catalog.loader import read_gpu_specs
    from app.shipped.rules import load_efficiency

    data = Path(__file__).resolve().parents[2] / "data"
    table = load_efficiency(data)
    gpus = {g.slug: g for g in read_gpu_specs(data)}
    for slug, backend in (("apple-m2-max", "metal"), ("rtx-4090", "cuda")):
        for regime in ("decode", "prefill"):
            llama = table.profile(gpus[slug], backend, "llama.cpp", "int4", regime)
            assert llama.moe_tile_min == 1 and llama.moe_tile_max == 128
    vllm = table.profile(gpus["h100-sxm"], "cuda", "vllm", "bf16", "prefill")
    assert vllm.moe_tile_min == 16


# A weight-only FP8 MoE (WorkloadSpec.experts_16bit: TensorRT-LLM before 0.10, whose 0.10.0
# release notes first list FP8 quantization for Mixtral): the experts' weights are read as FP8,
# their GEMMs multiply at the card's 16-bit rate
def _fp8_rep(model=QWEN3_30B_A3B, experts_16bit: bool = False) -> llm_step.Replica:
    return llm_step.replica(
        H100, model, weights="fp8", kv="bf16", n=1, decode=GROUPED, prefill=GROUPED,
        memory_efficiency=0.88, compute_efficiency=COMP, experts_16bit=experts_16bit,
    )  # fmt: skip


def test_weight_only_fp8_experts_multiply_at_the_16bit_rate_and_read_fp8_bytes():
    fp8, w16 = _fp8_rep(), _fp8_rep(experts_16bit=True)
    # at the card's 16-bit tensor rate (its attention's): the H100's FP8 peak is twice its
    # 16-bit one (the same efficiency here), so about twice the routed time
    ratio = fp8.flops / fp8.attn_flops
    assert w16.routed_slowdown == pytest.approx(ratio * fp8.routed_slowdown)
    assert ratio == pytest.approx(2.0, rel=0.01)
    assert w16.dense_slowdown == fp8.dense_slowdown  # attention projections, router: FP8
    assert (w16.dense_bytes, w16.expert_bytes) == (fp8.dense_bytes, fp8.expert_bytes)
    tokens = 8192.0  # a prompt chunk: the experts' math bounds it
    w_fp8, lin_fp8, _ = fp8.linear(tokens)
    w_16, lin_16, t_16 = w16.linear(tokens)
    assert w_16 == w_fp8  # the bytes are the FP8 weights either way
    tiles, tile = llm_step.expert_tiles(tokens, 8, 128, 16, 128)
    routed = 128 * tile * tiles * fp8.routed_flops_per_row * fp8.routed_slowdown / fp8.flops
    assert lin_16 - lin_fp8 == pytest.approx((ratio - 1.0) * routed)  # the routed math, again
    assert t_16 > fp8.linear(tokens)[2]
    # one token reads its experts' bytes, far longer than their math: unchanged
    assert w16.linear(1.0)[2] == pytest.approx(fp8.linear(1.0)[2])


def test_the_16bit_expert_rule_leaves_16bit_and_dense_jobs_alone():
    bf16 = _rep(w="bf16")
    bf16_flag = llm_step.replica(
        H100, QWEN3_30B_A3B, weights="bf16", kv="bf16", n=1, decode=GROUPED, prefill=GROUPED,
        memory_efficiency=0.88, compute_efficiency=COMP, experts_16bit=True,
    )  # fmt: skip
    assert bf16_flag.routed_slowdown == bf16.routed_slowdown  # already at the 16-bit rate
    dense, dense_flag = _fp8_rep(LLAMA3_8B), _fp8_rep(LLAMA3_8B, experts_16bit=True)
    assert dense_flag.parts(64.0, 1000.0, 2048.0, 2048.0) == dense.parts(
        64.0, 1000.0, 2048.0, 2048.0
    )

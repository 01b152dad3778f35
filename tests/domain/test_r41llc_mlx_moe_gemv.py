"""MLX runs a few tokens' routed experts as one quantised matrix-vector product per selected
expert: mlx-lm's SwitchGLU (mlx_lm/models/switch_layers.py) hands mx.gather_qmm one row per
(token, expert), sorting only from 64 pairs, and MLX's Metal GatherQMM
(mlx/backend/metal/quantized.cpp) sends M == 1 unsorted rows to gather_qmv. No 16-row token
tile (vLLM's Triton fused_moe) is padded at one token: gpt-oss-120b's batch-1 decode on an M4
Max is bound by reading its active weights, not by 16x its routed math."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step
from app.domain.workload import ModelSpec
from app.shipped.rules import load_efficiency

DATA = Path(__file__).resolve().parents[2] / "data"
TABLE = load_efficiency(DATA)
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}
COMP = {p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")}
# openai/gpt-oss-120b config.json (data/workloads.yaml preset gpt-oss-120b)
GPT_OSS_120B = ModelSpec(
    family="decoder", params=1.168e11, layers=36, hidden_size=2880, num_heads=64,
    num_kv_heads=8, intermediate_size=2880, vocab_size=201088, max_context=131072,
    experts=128, active_experts=4, shared_experts=0, active_params=5.712e9,
    explicit_head_dim=64, sliding_window=128,
)  # fmt: skip


@pytest.mark.parametrize("regime", ["decode", "prefill"])
def test_shipped_mlx_profile_runs_experts_without_a_token_tile(regime: str) -> None:
    prof = TABLE.profile(GPUS["apple-m4-max"], "mps", "mlx", "int4", regime)
    assert prof.moe_tile_min == 1 and prof.moe_tile_max == 128
    # vLLM keeps its fused_moe tile
    assert TABLE.profile(GPUS["h100-sxm"], "cuda", "vllm", "bf16", regime).moe_tile_min == 16


def test_gpt_oss_120b_one_token_decode_on_mlx_reads_weights_not_padded_math() -> None:
    gpu = GPUS["apple-m4-max"]
    dec = TABLE.profile(gpu, "mps", "mlx", "int4", "decode")
    pre = TABLE.profile(gpu, "mps", "mlx", "int4", "prefill")
    rep = llm_step.replica(
        gpu, GPT_OSS_120B, weights="int4", kv="bf16", n=1, decode=dec, prefill=pre,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip
    t_w, t_lin, _ = rep.linear(1.0)
    routed = 4 * rep.routed_flops_per_row * rep.routed_slowdown
    dense = rep.flops_per_token - 4 * rep.routed_flops_per_row + rep.head_flops
    dense *= rep.dense_slowdown
    assert t_lin == pytest.approx((dense + routed) / rep.flops)  # 4 rows, not 4 × 16
    assert t_w > 5 * t_lin
    assert rep.parts(1.0, 2048.0, 0.0, 0.0).bound == "memory bandwidth"
    # the 16-row tile had made the same step compute-bound
    padded = dataclasses.replace(rep, tile_min=16)
    assert padded.parts(1.0, 2048.0, 0.0, 0.0).bound == "compute"

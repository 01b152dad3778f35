"""vLLM quantises each block-FP8 dense linear's input in a kernel of its own before the FP8
GEMM on Hopper; the step engine counts one such kernel a linear (methodology §6.7t, "ds2")."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import llm_step
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import DEEPSEEK_V3, H100, H200, LLAMA3_8B

TABLE = load_efficiency()
COMP = dict.fromkeys(("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"), 0.56)
# Qwen3-30B-A3B: 128 routed experts, no shared expert, grouped-query attention
QWEN3_30B_A3B = dataclasses.replace(
    LLAMA3_8B, params=30.5e9, active_params=3.3e9, experts=128, active_experts=8,
    layers=48, hidden_size=2048, num_heads=32, num_kv_heads=4, intermediate_size=768,
    shared_experts=0,
)  # fmt: skip


def test_the_block_fp8_linears_of_a_layer_are_its_dense_fp8_projections() -> None:
    # DeepSeek: fused q_a/kv_a, q_b, output, the shared expert's gate/up and down; the two
    # absorbed batched GEMMs multiply 16-bit W_UK / W_UV, not FP8 linears
    assert llm_step.quant_linears(DEEPSEEK_V3, "fp8") == 5
    # an MoE without a shared expert: QKV and output (its experts' are in moe_block_us)
    assert llm_step.quant_linears(QWEN3_30B_A3B, "fp8") == 2
    # 16-bit weights quantise nothing; a dense FP8 model's scales are per-tensor or per-channel
    assert llm_step.quant_linears(DEEPSEEK_V3, "bf16") == 0
    assert llm_step.quant_linears(LLAMA3_8B, "fp8") == 0


def test_vllm_on_hopper_launches_one_quantisation_kernel_a_block_fp8_linear() -> None:
    assert TABLE.profile(H200, "cuda", "vllm", "fp8", "decode").act_quant_kernels == 1
    # not read elsewhere: Ada's Triton path writes row-major scales, which the compiler may
    # fuse whole; other runtimes were not read
    ada = dataclasses.replace(H100, slug="l40s", name="L40S", compute_capability="8.9")
    assert TABLE.profile(ada, "cuda", "vllm", "fp8", "decode").act_quant_kernels == 0
    assert TABLE.profile(H200, "cuda", "sglang", "fp8", "decode").act_quant_kernels == 0


def _replica(model, weights: str, quant: float) -> llm_step.Replica:
    prof = dataclasses.replace(
        TABLE.profile(H200, "cuda", "vllm", "fp8", "decode"), act_quant_kernels=quant
    )
    return llm_step.replica(
        H200, model, weights=weights, kv="bf16", n=8, decode=prof, prefill=prof,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip


def test_a_deepseek_decode_step_pays_the_quantisation_kernels_gaps() -> None:
    prof = TABLE.profile(H200, "cuda", "vllm", "fp8", "decode")
    with_q, without = _replica(DEEPSEEK_V3, "fp8", 1.0), _replica(DEEPSEEK_V3, "fp8", 0.0)
    # 61 layers × 5 linears × the graphed gap (2 µs): 0.61 ms a step, at one token and many
    extra = 61 * 5 * prof.kernel_us * 1e-6
    assert prof.kernel_us == pytest.approx(2.0)
    assert with_q.launch_s - without.launch_s == pytest.approx(extra)
    # a step of 1, 4 and 64 decoding sequences at 1k context each
    for seqs in (1, 4, 64):
        assert with_q.step(seqs, seqs * 1024, 0, 0) > without.step(seqs, seqs * 1024, 0, 0)
    # 16-bit weights: nothing to quantise, the same step
    assert _replica(DEEPSEEK_V3, "bf16", 1.0).launch_s == _replica(DEEPSEEK_V3, "bf16", 0).launch_s

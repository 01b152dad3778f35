"""Latent attention (DeepSeek-V3/R1) under tensor parallelism, as vLLM and SGLang run it: a
prompt's attention over the up-projected heads (QK 192 wide, V 128, not the hidden size), and
the latent down-projections every rank multiplies whole (methodology §6.7s, "moe")."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.domain import llm_step
from app.domain.efficiency import RuntimeProfile
from tests.domain.fixtures import DEEPSEEK_V3, H100, LLAMA3_8B

COMP = {p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")}
TENSOR = RuntimeProfile(span="tensor", kernel_us=2.0)
DEEPSEEK_R1 = DEEPSEEK_V3  # R1 shares V3's config.json
# the same attention on a dense model (no routed experts): the array path steps it
DENSE_MLA = dataclasses.replace(
    DEEPSEEK_R1, params=37e9, active_params=37e9, experts=None, active_experts=None,
    shared_experts=None, intermediate_size=18432,
)  # fmt: skip
LATENT_A = 61 * 7168 * (1536 + 512 + 64)  # q_a_proj + kv_a_proj_with_mqa, all layers


def _rep(model=DEEPSEEK_R1, n=8, w="fp8") -> llm_step.Replica:
    return llm_step.replica(
        H100, model, weights=w, kv="bf16", n=n, decode=TENSOR, prefill=TENSOR,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip


def test_a_latent_attention_prompt_attends_over_the_up_projected_heads():
    # 2·128·192 (QKᵀ) + 2·128·128 (AV) FLOPs a pair = 4 × 20,480, not 4 × the hidden 7,168
    assert llm_step.prompt_attention_width(DEEPSEEK_R1) == 128 * (128 + 64 + 128) / 2
    assert llm_step.prompt_attention_width(DEEPSEEK_R1) == 20480
    # its decode keeps the absorbed width over the 576-value latent
    assert llm_step.attention_width(DEEPSEEK_R1, decode_step=True) == 128 * 576
    # without the head widths (an older preset) the hidden size stands, as before
    bare = dataclasses.replace(DEEPSEEK_R1, qk_nope_head_dim=None, qk_rope_head_dim=None)
    assert llm_step.prompt_attention_width(bare) == 7168
    # every other attention: its own width, unchanged
    assert llm_step.prompt_attention_width(LLAMA3_8B) == llm_step.attention_width(LLAMA3_8B)


def test_a_prompt_chunks_attention_time_is_priced_at_that_width():
    rep = _rep(n=1)
    assert rep.attn_width == 20480
    f, prompt = 2048.0, 32000.0
    with_attn = rep.parts(0.0, 0.0, f, prompt, with_prompt=True)
    short = rep.parts(0.0, 0.0, f, f, with_prompt=True)
    # the long prompt adds its pairs' attention FLOPs at the replica's attention rate (the
    # LM head's rows, one a prompt the chunk completes, differ by a sliver)
    extra = 4.0 * 61 * 20480 * f * (prompt - f) / 2.0 / rep.attn_flops
    assert with_attn.compute_s - short.compute_s == pytest.approx(extra, rel=1e-4)


def test_every_tensor_parallel_rank_multiplies_the_latent_down_projections_whole():
    assert llm_step.replicated_params(DEEPSEEK_R1) == LATENT_A
    assert llm_step.replicated_params(LLAMA3_8B) == 0.0
    one, eight = _rep(n=1), _rep(n=8)
    # one GPU counts them once, as every other weight; eight GPUs seven times more
    assert eight.flops_per_token - one.flops_per_token == pytest.approx(2.0 * 7 * LATENT_A)
    assert eight.dense_bytes - one.dense_bytes == pytest.approx(7 * LATENT_A * 1.0)  # fp8
    # a decode step of eight GPUs reads them eight times: its weights' time grows
    assert eight.weights_read(1.0) > one.weights_read(1.0) + 7 * LATENT_A * 0.99
    # a model without latent attention is untouched
    plain = llm_step.replica(
        H100, LLAMA3_8B, weights="bf16", kv="bf16", n=8, decode=TENSOR, prefill=TENSOR,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip
    job = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16")
    assert plain.flops_per_token == job.flops_per_token
    assert plain.dense_bytes == job.dense_read


def test_the_array_path_adds_the_same_copies_per_rows_gpu_count():
    job = llm_step.replica_job(DENSE_MLA, weights="fp8", kv="bf16")
    card = llm_step.card_terms(
        H100, weights="fp8", decode=TENSOR, prefill=TENSOR, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    counts = [1.0, 2.0, 8.0]
    cols = llm_step.dense_columns(
        job, llm_step.card_rows([card]), np.zeros(3, np.intp), np.array(counts)
    )
    reps = [
        llm_step.replica(
            H100, DENSE_MLA, weights="fp8", kv="bf16", n=int(n), decode=TENSOR, prefill=TENSOR,
            memory_efficiency=0.88, compute_efficiency=COMP, job=job, card=card, links=False,
        )
        for n in counts
    ]  # fmt: skip
    assert np.asarray(cols.flops_per_token).tolist() == [r.flops_per_token for r in reps]
    assert np.asarray(cols.dense_bytes).tolist() == pytest.approx([r.dense_bytes for r in reps])
    for step in ((0.0, 0.0, 2048.0, 4096.0), (16.0, 1000.0, 0.0, 1000.0)):
        assert cols.seconds(*step).tolist() == pytest.approx([r.parts(*step).seconds for r in reps])

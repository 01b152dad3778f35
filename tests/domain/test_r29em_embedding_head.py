"""An LLM step's input embedding and LM head as the runtimes run them (llm_step): a lookup
gathers its tokens' rows of an untied table, never the whole table; the head multiplies the
rows a step samples (each decode, each prompt's last token), every prompt position only where
the runtime computes them all (transformers' generate() before v4.45)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.domain import formats, llm_step
from app.domain.efficiency import RuntimeProfile
from tests.domain.fixtures import H100, LLAMA3_8B

COMP = {p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")}
VLLM = RuntimeProfile(runtime="vllm", kernel_us=2.0)
HF = RuntimeProfile(runtime="transformers", kernel_us=2.0)
TABLE = 128256 * 4096  # Llama 3's vocabulary × hidden
# the same shape with the LM head tied to the input embedding (one table fewer)
TIED_8B = dataclasses.replace(LLAMA3_8B, params=8.03e9 - TABLE, tied_embeddings=True)
QWEN3_30B_A3B = dataclasses.replace(
    LLAMA3_8B, params=30.5e9, active_params=3.3e9, experts=128, active_experts=8,
    layers=48, hidden_size=2048, num_heads=32, num_kv_heads=4, intermediate_size=768,
    vocab_size=151936, tied_embeddings=False,
)  # fmt: skip


def _rep(model=LLAMA3_8B, prof=VLLM, weights="bf16", **kw) -> llm_step.Replica:
    return llm_step.replica(
        H100, model, weights=weights, kv="bf16", n=1, decode=prof, prefill=prof,
        memory_efficiency=0.88, compute_efficiency=COMP, **kw,
    )  # fmt: skip


def _card(prof: RuntimeProfile) -> llm_step.CardTerms:
    return llm_step.card_terms(
        H100, weights="bf16", decode=prof, prefill=prof, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip


def test_a_decode_step_reads_an_untied_table_by_its_rows_and_a_tied_one_whole():
    untied, tied = _rep(), _rep(TIED_8B)
    # Llama 3 8B: the 1.05 GB input table is no weight a step streams (6.5 % of 16.06 GB)
    assert untied.dense_bytes == pytest.approx((8.03e9 - TABLE) * 2.0)
    # a tied table is the LM head's weight, read whole by every step
    assert tied.dense_bytes == pytest.approx(TIED_8B.params * 2.0)
    # the lookup gathers one 4,096-value row per token, tied or not
    assert untied.row_bytes == tied.row_bytes == 4096 * 2.0
    one = untied.parts(1.0, 1000.0, 0.0, 1000.0)
    whole = dataclasses.replace(untied, dense_bytes=8.03e9 * 2.0).parts(1.0, 1000.0, 0.0, 1000.0)
    assert whole.memory_s - one.memory_s == pytest.approx(TABLE * 2.0 / untied.bw)


def test_a_quantised_checkpoint_keeps_its_table_16_bit_a_gguf_at_the_files_mean():
    fp8 = _rep(weights="fp8")
    stored = formats.weight_bytes(LLAMA3_8B, "fp8")
    assert fp8.dense_bytes == pytest.approx(stored - TABLE * 2.0)
    gguf = _rep(weights="int4", own_bits=4.84)
    assert gguf.dense_bytes == pytest.approx((8.03e9 - TABLE) * 4.84 / 8)
    assert formats.table_value_bytes("fp8") == 2.0
    assert formats.table_value_bytes("fp32") == 4.0
    assert formats.table_value_bytes("int4", 4.84) == pytest.approx(0.605)


def test_a_decode_token_multiplies_every_weight_but_the_lookup():
    untied, tied = _rep(), _rep(TIED_8B)
    # the head is 2 × vocabulary × hidden FLOPs a row; the layers the rest but the lookup
    assert untied.head_flops == tied.head_flops == 2.0 * TABLE
    assert untied.flops_per_token + untied.head_flops == pytest.approx(2.0 * (8.03e9 - TABLE))
    assert tied.flops_per_token + tied.head_flops == pytest.approx(2.0 * TIED_8B.params)
    # a decode step's head runs on each of its sequences
    assert untied.linear(64.0)[1] == pytest.approx(untied.linear(64.0, 64.0)[1])


def test_the_prompt_pass_computes_the_head_for_each_prompts_last_token():
    rep = _rep()
    rows = rep.rows(0.0, 4 * 512.0, 512.0)
    assert rows == 4.0  # four prompts of 512 tokens: four rows, not 2,048
    t_lin = rep.linear_step(0.0, 2048.0, 512.0, with_prompt=True)[1]
    body = 2048.0 * rep.flops_per_token + 4.0 * rep.head_flops
    assert t_lin == pytest.approx(body * rep.dense_slowdown / rep.flops)
    # decodes beside the prompts each compute their own row
    assert rep.rows(8.0, 512.0, 512.0) == 9.0


def test_transformers_before_4_45_computes_every_prompt_positions_logits():
    assert llm_step.all_prompt_logits("transformers", "4.44.2")
    assert llm_step.all_prompt_logits("transformers", "4.35.2")
    assert not llm_step.all_prompt_logits("transformers", "4.45.0")
    assert not llm_step.all_prompt_logits("transformers", "")  # unstated: a current release
    for runtime in ("vllm", "sglang", "tensorrt-llm", "llama.cpp", "mlx"):
        assert not llm_step.all_prompt_logits(runtime, "0.1")
    job = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16", runtime_release="4.35.2")
    old, new = _rep(prof=HF, job=job), _rep(prof=HF)
    assert (old.prompt_logits, new.prompt_logits) == (1.0, 0.0)
    # a runtime that keeps the last position only whatever the release states
    assert _rep(prof=VLLM, job=job).prompt_logits == 0.0
    # a 2,048-token prompt: 2,047 more head rows, the old generate()'s compute
    a = old.parts(0.0, 0.0, 2048.0, 2048.0).compute_s
    b = new.parts(0.0, 0.0, 2048.0, 2048.0).compute_s
    assert a - b == pytest.approx(2047.0 * old.head_flops * old.dense_slowdown / old.flops)


def test_the_columns_price_the_head_and_lookup_to_the_bit():
    job = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16", runtime_release="4.35.2")
    cards = [_card(p) for p in (VLLM, HF)]
    reps = [_rep(prof=p, job=job, card=c) for p, c in zip((VLLM, HF), cards, strict=True)]
    dense = llm_step.dense_columns(
        job, llm_step.card_rows(cards), np.array([0, 1], np.intp), np.array([1.0, 1.0])
    )
    cols = llm_step.columns(reps)
    assert dense.prompt_logits.tolist() == [0.0, 1.0]
    for args in (
        (0.0, 0.0, 2048.0, 512.0),
        (64.0, 1500.0, 0.0, 1000.0),
        (32.0, 800.0, 96.0, 500.0),
    ):
        want = [r.parts(*args).seconds for r in reps]
        assert cols.seconds(*args).tolist() == want
        assert dense.seconds(*args).tolist() == want


def test_a_quantised_moes_16_bit_tables_sit_in_the_layers_every_token_reads():
    """A quantised checkpoint keeps its vocabulary tables 16-bit (formats.sixteen_bit_params):
    they are in the weights every token reads, the routed experts at the format's own bytes,
    not both at the whole model's mean (which had spread the tables over the experts)."""
    job = llm_step.replica_job(QWEN3_30B_A3B, weights="fp4", kv="bf16")
    table = 151936 * 2048
    stored = formats.weight_bytes(QWEN3_30B_A3B, "fp4")
    assert job.expert_wb == 4.5 / 8
    # the experts, the layers read every step and the untied input table: the stored bytes
    assert job.experts * job.expert_wb + job.dense_read + table * 2.0 == pytest.approx(stored)
    assert job.dense_read > job.dense * job.wb - table * 2.0  # the head's 16-bit bytes
    # 16-bit weights: one bytes per weight, as before
    bf16 = llm_step.replica_job(QWEN3_30B_A3B, weights="bf16", kv="bf16")
    assert bf16.dense_read == pytest.approx(bf16.dense * 2.0 - table * 2.0)
    assert bf16.expert_wb == 2.0

"""The sampler: every sampled sequence's logits over the whole vocabulary, each step, on
every tensor-parallel GPU (llm_step.SAMPLER_BYTES_PER_LOGIT, docs/methodology.md §6.7j)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.domain import llm_step
from app.domain.efficiency import RuntimeProfile
from tests.domain.fixtures import H100, LLAMA3_8B

GRAPHS = RuntimeProfile(kernel_us=2.0, span="tensor")
COMP = {"bf16": 0.7, "fp16": 0.7, "fp8": 0.6}


def _rep(n: int = 1, model=LLAMA3_8B) -> llm_step.Replica:
    return llm_step.replica(
        H100, model, weights="bf16", kv="bf16", n=n, decode=GRAPHS, prefill=GRAPHS,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip


def test_a_step_pays_the_vocabularys_logits_per_sampled_sequence():
    rep = _rep()
    assert LLAMA3_8B.vocab_size is not None
    per_seq = LLAMA3_8B.vocab_size * llm_step.SAMPLER_BYTES_PER_LOGIT / (rep.bw / rep.tp)
    assert rep.sampler_s == pytest.approx(per_seq)
    # 256 decodes: 256 × 128,256 × 12 B ≈ 394 MB a step, ~0.17 ms on an H100 at 0.88
    bare = dataclasses.replace(rep, sampler_s=0.0)
    got = rep.parts(256.0, 1000.0, 0.0, 1000.0)
    want = bare.parts(256.0, 1000.0, 0.0, 1000.0)
    assert got.seconds - want.seconds == pytest.approx(256.0 * per_seq)
    assert 1.2e-4 < 256.0 * per_seq < 2.5e-4
    assert got.gpu_s - want.gpu_s == pytest.approx(256.0 * per_seq)
    assert got.memory_s == want.memory_s  # beside the weights and KV reads, not among them
    # a prefill chunk samples the prompts it completes (on average prefill ÷ prompt), not its
    # tokens
    chunk = rep.parts(0.0, 0.0, 2048.0, 1024.0, with_prompt=True).seconds
    assert chunk - bare.parts(0.0, 0.0, 2048.0, 1024.0, with_prompt=True).seconds == (
        pytest.approx(2.0 * per_seq)
    )


def test_every_tensor_parallel_gpu_samples_the_whole_vocabulary():
    one, eight = _rep(1), _rep(8)
    # the gathered logits are whole on each rank: the same seconds per sequence at any tp
    assert eight.sampler_s == pytest.approx(one.sampler_s)


def test_no_vocabulary_no_sampler_and_the_columns_match_to_the_bit():
    assert _rep(model=dataclasses.replace(LLAMA3_8B, vocab_size=None)).sampler_s == 0.0
    reps = [_rep(1), _rep(8)]
    cols = llm_step.columns(reps)
    job = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16")
    dense = llm_step.dense_columns(
        job, llm_step.card_rows([rep_card(GRAPHS)]), np.zeros(2, np.intp), np.array([1.0, 8.0]),
        gpus=[H100] * 2,
    )  # fmt: skip
    assert dense.sampler_s.tolist() == [r.sampler_s for r in reps]
    for args in ((64.0, 1500.0, 0.0, 1000.0), (200.0, 800.0, 30.0, 500.0)):
        want = [r.parts(*args).seconds for r in reps]
        assert cols.seconds(*args).tolist() == want
        assert dense.seconds(*args).tolist() == want


def test_llama_cpp_samples_on_the_host_not_the_gpu() -> None:
    """llama.cpp copies the logits to the host and samples on the CPU: no GPU pass over the
    vocabulary (code review: the vLLM sampler had been charged to every runtime)."""
    from app.shipped.rules import load_efficiency

    prof = load_efficiency().profile(H100, "cuda", "llama.cpp", "bf16", "decode")
    assert prof.runtime == "llama.cpp"
    rep = llm_step.replica(
        H100, LLAMA3_8B, weights="bf16", kv="bf16", n=1, decode=prof, prefill=prof,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip
    assert rep.sampler_s == 0.0
    assert _rep().sampler_s > 0.0  # a GPU-sampling runtime's profile
    rows = llm_step.card_rows([rep_card(prof), rep_card(GRAPHS)])
    assert rows.values[:, 19].tolist() == [0.0, 1.0]


def rep_card(prof: RuntimeProfile) -> llm_step.CardTerms:
    return llm_step.card_terms(
        H100, weights="bf16", decode=prof, prefill=prof, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip

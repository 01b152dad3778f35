"""Where a llama.cpp build replays its one-token CUDA graph (llm_step.GRAPH_BUILDS): builds
before PR #6766 (2024-05-08) replay none; builds before PR #13814 (2025-05-27) none on a layer
split, whose pipeline-parallel scheduler changed the graph at every evaluation, so every kernel
of a split's decode step was launched eagerly (docs/methodology.md §6.7m, ls)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.domain import llm_step
from app.domain.efficiency import RuntimeProfile
from tests.domain.fixtures import H100, LLAMA3_8B

# llama.cpp's decode profile in the shape data/efficiency.yaml gives it: 4 µs gaps under the
# one-token graph, 6 µs eager; whole layers per GPU, -ub 512 micro-batches
LLAMACPP = RuntimeProfile(
    runtime="llama.cpp", kernel_us=4.0, graph_max_tokens=1, eager_kernel_us=6.0,
    span="layers", microbatch_tokens=512, handoff_bytes=4.0,
)  # fmt: skip
COMP = {"bf16": 0.7, "fp16": 0.7, "fp8": 0.6}


def _rep(n: int, graphs: str) -> llm_step.Replica:
    job = llm_step.replica_job(LLAMA3_8B, weights="fp16", kv="fp16", graphs=graphs)
    return llm_step.replica(
        H100, LLAMA3_8B, weights="fp16", kv="fp16", n=n, decode=LLAMACPP, prefill=LLAMACPP,
        memory_efficiency=0.88, compute_efficiency=COMP, job=job,
    )  # fmt: skip


def _gaps_s() -> float:
    """The eager gaps of one pass over every layer: 2 µs more a kernel than under the graph."""
    job = llm_step.replica_job(LLAMA3_8B, weights="fp16", kv="fp16")
    return job.layers * job.kernels * 2.0e-6


def test_graph_launch_moves_the_eager_gaps_into_every_pass_only_where_the_build_has_none():
    assert llm_step.graph_launch(1.0, 0.5, 1.0, "", 4) == (1.0, 0.5, 1.0)
    assert llm_step.graph_launch(1.0, 0.5, 1.0, "one-gpu", 1) == (1.0, 0.5, 1.0)
    assert llm_step.graph_launch(1.0, 0.5, 1.0, "one-gpu", 2) == (1.5, 0.0, 0.0)
    assert llm_step.graph_launch(1.0, 0.5, 1.0, "none", 1) == (1.5, 0.0, 0.0)
    # a runtime with one launch policy at every step size has nothing to move
    assert llm_step.graph_launch(1.0, 0.0, 0.0, "none", 4) == (1.0, 0.0, 0.0)


def test_a_2024_layer_split_decodes_eagerly_a_today_split_and_one_gpu_do_not():
    token = (1.0, 1.0, 0.0, 1.0)  # one sequence decoding, empty context
    gaps = _gaps_s()
    assert 0.4e-3 < gaps < 1.0e-3  # Llama 3 8B's 32 layers of kernels, 2 µs each
    for n in (2, 4):
        today, old = _rep(n, "").parts(*token), _rep(n, "one-gpu").parts(*token)
        assert old.seconds - today.seconds == pytest.approx(gaps)
    # one GPU replays its graph on such a build
    assert _rep(1, "one-gpu").parts(*token).seconds == _rep(1, "").parts(*token).seconds
    # a build with no graphs at all pays the gaps on one GPU too
    one = _rep(1, "none").parts(*token).seconds - _rep(1, "").parts(*token).seconds
    assert one == pytest.approx(gaps)


def test_a_prompt_launches_eagerly_on_every_build_so_it_does_not_move():
    prompt = (0.0, 0.0, 512.0, 512.0)
    for n in (1, 4):
        want = _rep(n, "").parts(*prompt, with_prompt=True).seconds
        for graphs in ("one-gpu", "none"):
            assert _rep(n, graphs).parts(*prompt, with_prompt=True).seconds == want


def test_the_columns_follow_the_build_to_the_bit():
    job = llm_step.replica_job(LLAMA3_8B, weights="fp16", kv="fp16", graphs="one-gpu")
    card = llm_step.card_terms(
        H100, weights="fp16", decode=LLAMACPP, prefill=LLAMACPP, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    counts = np.array([1.0, 2.0, 4.0])
    dense = llm_step.dense_columns(
        job, llm_step.card_rows([card]), np.zeros(3, np.intp), counts, gpus=[H100] * 3
    )
    reps = [_rep(int(n), "one-gpu") for n in counts]
    for args in ((1.0, 1.0, 0.0, 1.0), (0.0, 0.0, 512.0, 512.0)):
        assert dense.seconds(*args).tolist() == [r.parts(*args).seconds for r in reps]


def test_an_unknown_build_is_refused():
    with pytest.raises(ValueError, match="CUDA-graph build"):
        llm_step.replica_job(LLAMA3_8B, weights="fp16", kv="fp16", graphs="sometimes")
    # the job keeps it, so two builds' jobs differ
    a = llm_step.replica_job(LLAMA3_8B, weights="fp16", kv="fp16")
    assert dataclasses.replace(a, graphs="one-gpu") != a

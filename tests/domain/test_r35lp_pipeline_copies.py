"""A llama.cpp layer split's micro-batch pipeline under the scheduler's ring of input copies
(llm_step.pipeline_passes; data/efficiency.yaml llamacpp-sched-copies): ggml_backend_sched
blocks the host on the copy's event before it copies a micro-batch's user inputs to a stage, so
at most copies + 1 micro-batches are in flight."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.domain import llm_step
from app.domain.efficiency import RuntimeProfile
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import LLAMA3_8B, RTX4090

COMP = {p: 0.56 for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")}
SPLIT = RuntimeProfile(kernel_us=2.0, span="layers", microbatch_tokens=512, handoff_bytes=4.0)


def _schedule(stages: int, u: int, copies: int) -> float:
    """Stage-times to the last micro-batch's end, event by event as the scheduler runs it:
    the host submits micro-batch j to stage s once j − copies has left stage s (its input copy
    is free: ggml_backend_event_synchronize), a stage runs one micro-batch at a time, in order."""
    done: dict[tuple[int, int], float] = {}
    host = 0.0
    for j in range(u):
        for s in range(stages):
            if j >= copies:
                host = max(host, done[(j - copies, s)])
            start = max(host, done.get((j, s - 1), 0.0), done.get((j - 1, s), 0.0))
            done[(j, s)] = start + 1.0
    return done[(u - 1, stages - 1)]


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 5, 6, 8, 12])
@pytest.mark.parametrize("copies", [1, 2, 4])
def test_the_closed_form_is_the_schedule_the_scheduler_runs(stages, copies):
    for u in range(1, 24):
        want = _schedule(stages, u, copies) / stages
        assert llm_step.pipeline_passes(u, stages, copies) == pytest.approx(want)
        got = llm_step.pipeline_passes_array(
            np.array([float(u)]), np.array([float(stages)]), np.array([float(copies)])
        )
        assert got[0] == pytest.approx(want)


def test_no_bound_is_the_free_pipeline_and_one_micro_batch_is_one_pass():
    for stages in (1, 2, 4, 8):
        assert llm_step.pipeline_passes(1, stages, 4) == 1.0
        for u in (1, 3, 16):
            free = (u + stages - 1) / stages
            assert llm_step.pipeline_passes(u, stages, 0) == pytest.approx(free)
    # two to five GPUs never fill the default ring: the free pipeline at any prompt length
    for stages in (2, 3, 4, 5):
        for u in (2, 6, 16, 64):
            assert llm_step.pipeline_passes(u, stages, 4) == pytest.approx(
                (u + stages - 1) / stages
            )


def test_eight_gpus_keep_five_of_eight_stages_busy_on_a_long_prompt():
    # waves of five micro-batches, eight stage-times apart: 5/8 of the free rate at length
    u = 512
    bound = llm_step.pipeline_passes(u, 8, 4)
    free = llm_step.pipeline_passes(u, 8, 0)
    assert free / bound == pytest.approx(5 / 8, rel=0.02)
    # PR #6017's 8 x A100 pp2048 (4 micro-batches) does not reach it
    assert llm_step.pipeline_passes(4, 8, 4) == pytest.approx(11 / 8)


def test_llama_cpp_keeps_four_input_copies():
    table = load_efficiency()
    assert table.runtime_value("llama.cpp", "microbatch_copies") == 4


def _replica(prof: RuntimeProfile, n: int) -> llm_step.Replica:
    return llm_step.replica(
        RTX4090, LLAMA3_8B, weights="bf16", kv="bf16", n=n, decode=prof, prefill=prof,
        memory_efficiency=0.88, compute_efficiency=COMP,
    )  # fmt: skip


def test_a_long_prompt_on_eight_gpus_pays_the_ring_and_the_array_path_agrees():
    ring = dataclasses.replace(SPLIT, microbatch_copies=4)
    free8, ring8 = _replica(SPLIT, 8), _replica(ring, 8)
    assert ring8.microbatch_copies == 4 and free8.microbatch_copies == 0
    prompt = (0.0, 0.0, 8192.0, 8192.0)  # 16 micro-batches of 512
    free_t = free8.parts(*prompt)
    ring_t = ring8.parts(*prompt)
    # the pipelined work, less the hand-offs and the one prompt's sampler beside it
    beside = ring8.comm(8192.0) + ring8.sampler_s
    ratio = llm_step.pipeline_passes(16, 8, 4) / llm_step.pipeline_passes(16, 8, 0)
    assert ratio > 1.3
    assert ring_t.gpu_s - beside == pytest.approx((free_t.gpu_s - beside) * ratio, rel=1e-9)
    # four GPUs, the same prompt: the ring is never reached
    assert _replica(ring, 4).parts(*prompt).seconds == pytest.approx(
        _replica(SPLIT, 4).parts(*prompt).seconds
    )
    # one GPU keeps no ring (stages 1)
    assert _replica(ring, 1).microbatch_copies == 0
    # the array path
    job = llm_step.replica_job(LLAMA3_8B, weights="bf16", kv="bf16")
    card = llm_step.card_terms(
        RTX4090, weights="bf16", decode=ring, prefill=ring, memory_efficiency=0.88,
        compute_efficiency=COMP,
    )  # fmt: skip
    cols = llm_step.dense_columns(
        job, llm_step.card_rows([card]), np.zeros(2, np.intp), np.array([8.0, 4.0]),
        gpus=[RTX4090, RTX4090],
    )  # fmt: skip
    got = cols.seconds(0.0, 0.0, 8192.0, 8192.0)
    assert got[0] == pytest.approx(ring_t.seconds, rel=1e-9)
    assert got[1] == pytest.approx(_replica(ring, 4).parts(*prompt).seconds, rel=1e-9)

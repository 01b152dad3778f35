"""A synchronous engine's host work per running sequence adds to the step (vLLM 0.10 without
--async-scheduling: vLLM PR #23914's sync/async sweep, 13 µs per sequence), where an
overlapped executor's (TensorRT-LLM's) only bounds it once it is the longer."""

from __future__ import annotations

import numpy as np
import pytest

from app.domain import llm_step
from app.domain import serving as sv
from app.shipped.rules import load_efficiency

# one Llama 3 8B replica on an H100 under CUDA graphs, as test_llm_step builds it
from tests.domain.test_llm_step import _replica as _rep


def test_serial_host_work_adds_to_the_step_at_every_batch():
    bare, sync = _rep(), _rep(serial_per_seq_s=13e-6)
    for seqs in (1.0, 32.0, 256.0):
        step = (seqs, 600.0, 0.0, 600.0)
        assert sync.parts(*step).seconds == pytest.approx(bare.parts(*step).seconds + seqs * 13e-6)
    # a prefill chunk's prompts count once each, not per token
    chunk = (0.0, 0.0, 8192.0, 2048.0)
    assert sync.parts(*chunk).seconds == pytest.approx(bare.parts(*chunk).seconds + 4 * 13e-6)


def test_overlapped_host_work_is_hidden_where_serial_work_is_not():
    # the same 13 µs per sequence: behind a 256-sequence step's GPU time when overlapped
    step = (256.0, 600.0, 0.0, 600.0)
    bare = _rep().parts(*step).seconds
    assert _rep(host_per_seq_s=13e-6).parts(*step).seconds == pytest.approx(bare)
    assert _rep(serial_per_seq_s=13e-6).parts(*step).seconds > bare * 1.05


def test_the_array_path_prices_serial_host_work_as_the_scalar_one():
    reps = [_rep(serial_per_seq_s=s) for s in (0.0, 13e-6, 40e-6)]
    cols = llm_step.columns(reps)
    for step in [(64.0, 1500.0, 0.0, 2048.0), (32.0, 900.0, 512.0, 256.0)]:
        got = cols.seconds(*step)
        want = np.array([r.parts(*step).seconds for r in reps])
        assert got == pytest.approx(want, rel=1e-12), step


def test_only_vllm_runs_its_per_sequence_host_work_serially():
    table = load_efficiency()
    assert table.serving["vllm"].step_serial_per_seq_us == pytest.approx(13.0)
    assert sv.runtime_profile(table, "vllm").serial_per_seq_s == pytest.approx(13e-6)
    # SGLang's and TensorRT-LLM's overlap schedulers (default on) hide theirs behind the GPU
    for name in ("sglang", "tensorrt-llm"):
        assert table.serving[name].step_serial_per_seq_us == 0.0

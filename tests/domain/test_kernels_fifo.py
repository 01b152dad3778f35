"""In-order kernel issue into one stream (kernels.fifo_finish, kernels.issue_order)."""

from __future__ import annotations

import pytest

from app.domain.kernels import fifo_finish, issue_order
from app.domain.operators import MEMORY, Op


def test_fifo_finish_is_the_max_when_one_side_binds_every_kernel() -> None:
    # host-bound throughout: the GPU waits for each kernel, the step ends one GPU time after
    # the last issue
    assert fifo_finish([(10.0, 1.0)] * 5) == pytest.approx(5 * 10.0 + 1.0)
    # GPU-bound throughout: the host runs ahead, the step is the first issue + Σ GPU
    assert fifo_finish([(1.0, 10.0)] * 5) == pytest.approx(1.0 + 5 * 10.0)


def test_the_gpu_cannot_start_a_kernel_before_the_host_issues_it() -> None:
    # host-heavy kernels first (weight casts issued at the step's start), GPU-heavy last:
    # Σ host = Σ GPU = 40, yet the GPU idles through the first 40 and the step is their sum
    host_first, gpu_last = [(10.0, 0.0)] * 4, [(0.0, 10.0)] * 4
    assert fifo_finish(host_first + gpu_last) == pytest.approx(80.0)
    # the other way round the host issues while the GPU works: max(Σ host, Σ GPU)
    assert fifo_finish(gpu_last + host_first) == pytest.approx(40.0)
    # interleaved: they overlap, max(Σ host, Σ GPU) + the last kernel's GPU time
    assert fifo_finish([(10.0, 0.0), (0.0, 10.0)] * 4) == pytest.approx(50.0)


def _op(name: str, count: float, role: str = "") -> Op:
    return Op("elementwise", name, MEMORY, count, 0.0, 1.0, 1.0, "fp16", role)


def test_issue_order_runs_a_repeated_block_count_times_and_casts_first() -> None:
    stem, a, b, head = _op("stem", 1), _op("block.a", 3), _op("block.b", 3), _op("fc", 1)
    cast = _op("cast", 2, "cast")
    # cuDNN's layout transform of block.a, listed after the table as tables list them
    nchw = _op("block.a.nchw", 3, "layout")
    runs = issue_order([stem, a, b, head, cast, nchw], ("cast",), ("layout",))
    flat = [o.name for run in runs for o in run]
    block = ["block.a", "block.a.nchw", "block.b"]
    assert flat == ["cast", "cast", "stem", *block * 3, "fc"]

"""Timing logic with an injected clock and sync; pure statistics; FLOP and byte counts."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from app.bench.timing import (
    NOISY_IQR_RATIO,
    Timer,
    TimingConfig,
    conv2d_flops,
    conv2d_train_flops,
    conv_output_size,
    fit_latency_bandwidth,
    fit_linear,
    fit_transfer,
    matmul_flops,
    measure,
    median,
    percentile,
    rates,
    saturation_batch,
    stream_bytes,
    summarize,
)


class FakeDevice:
    """A clock that only advances when 'device work' runs, and a sync that must precede
    every clock read (like torch.cuda.synchronize before perf_counter)."""

    def __init__(self, cost: float | list[float] = 0.01) -> None:
        self.t = 0.0
        self.costs = cost
        self.calls = 0
        self.synced = False
        self.syncs = 0
        self.unsynced_reads = 0

    def work(self) -> None:
        c = (
            self.costs
            if isinstance(self.costs, float)
            else self.costs[min(self.calls, len(self.costs) - 1)]
        )
        self.calls += 1
        self.t += c
        self.synced = False

    def sync(self) -> None:
        self.syncs += 1
        self.synced = True

    def clock(self) -> float:
        if not self.synced:
            self.unsynced_reads += 1
        return self.t


def test_measure_with_injected_clock_reports_exact_cost() -> None:
    dev = FakeDevice(0.01)
    cfg = TimingConfig(warmup_s=0.05, min_warmup_calls=3, block_s=0.1, n_blocks=7)
    timing = measure(dev.work, clock=dev.clock, sync=dev.sync, config=cfg)
    assert timing.n_blocks == 7
    assert timing.iters_per_block == 10
    assert all(t == pytest.approx(0.01) for t in timing.per_call_s)
    assert timing.median_s == pytest.approx(0.01)
    assert timing.stats.noisy is False
    # warm-up: at least 3 calls and at least 50 ms of device time
    assert timing.warmup_calls == 5
    assert dev.calls == 5 + 7 * 10


def test_sync_precedes_every_clock_read() -> None:
    dev = FakeDevice(0.001)
    Timer(clock=dev.clock, sync=dev.sync).measure(dev.work)
    assert dev.unsynced_reads == 0
    assert dev.syncs > 0


def test_warmup_excludes_slow_first_calls() -> None:
    # first call is 100× slower (compilation, autotuning, page faults)
    dev = FakeDevice([1.0, 0.01])
    cfg = TimingConfig(warmup_s=0.0, min_warmup_calls=3, block_s=0.05, n_blocks=5)
    timing = measure(dev.work, clock=dev.clock, sync=dev.sync, config=cfg)
    assert timing.median_s == pytest.approx(0.01)
    assert timing.iters_per_block == 5


def test_max_total_caps_blocks_for_slow_ops() -> None:
    dev = FakeDevice(0.5)
    cfg = TimingConfig(
        warmup_s=0.0, min_warmup_calls=3, block_s=0.05, n_blocks=7, min_blocks=3, max_total_s=1.0
    )
    timing = measure(dev.work, clock=dev.clock, sync=dev.sync, config=cfg)
    assert timing.iters_per_block == 1
    assert timing.n_blocks == 3  # never fewer than min_blocks


def test_before_block_runs_outside_timed_region() -> None:
    dev = FakeDevice(0.01)
    flushes = []

    def flush() -> None:
        flushes.append(dev.t)
        dev.t += 5.0  # an expensive flush must not show up in the timing

    cfg = TimingConfig(warmup_s=0.0, min_warmup_calls=3, block_s=0.02, n_blocks=4)
    timing = Timer(clock=dev.clock, sync=dev.sync, config=cfg).measure(dev.work, before_block=flush)
    assert len(flushes) == 4
    assert timing.median_s == pytest.approx(0.01)


def test_frozen_clock_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        measure(lambda: None, clock=lambda: 1.0, config=TimingConfig(warmup_s=0.0))


def test_noisy_flag_from_iqr() -> None:
    dev = FakeDevice([0.01, 0.01, 0.01, 0.01, 0.013, 0.01, 0.02, 0.01, 0.03, 0.01, 0.015])
    cfg = TimingConfig(warmup_s=0.0, min_warmup_calls=3, block_s=0.001, n_blocks=8)
    timing = measure(dev.work, clock=dev.clock, sync=dev.sync, config=cfg)
    assert timing.iters_per_block == 1
    assert timing.stats.noisy is True


@pytest.mark.parametrize("q", [0, 10, 25, 50, 75, 90, 100])
def test_percentile_matches_numpy(q: float) -> None:
    data = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.0]
    assert percentile(data, q) == pytest.approx(float(np.percentile(data, q)))


def test_summarize_and_noise_threshold() -> None:
    st = summarize([1.0, 1.0, 1.0, 1.0])
    assert (st.median, st.p10, st.p90, st.iqr, st.noisy) == (1.0, 1.0, 1.0, 0.0, False)
    # IQR/median exactly at the threshold is not noisy; above it is
    st = summarize([0.95, 1.05])
    assert st.iqr_ratio == pytest.approx(0.05)
    assert not st.noisy
    st = summarize([0.8, 1.2])
    assert st.iqr_ratio > NOISY_IQR_RATIO and st.noisy
    assert median([5.0, 1.0, 3.0]) == 3.0


def test_statistics_reject_bad_input() -> None:
    with pytest.raises(ValueError):
        summarize([])
    with pytest.raises(ValueError):
        summarize([1.0, math.nan])
    with pytest.raises(ValueError):
        percentile([1.0], 101)
    with pytest.raises(ValueError):
        rates(1.0, [0.0])


def test_fit_linear_and_alpha_beta() -> None:
    a, b = fit_linear([1, 2, 3, 4], [3, 5, 7, 9])
    assert (a, b) == (pytest.approx(1.0), pytest.approx(2.0))
    sizes = [4096 * 4**i for i in range(8)]
    alpha, beta = 10e-6, 25e9
    times = [alpha + s / beta for s in sizes]
    fa, fb = fit_latency_bandwidth(sizes, times)
    assert fa == pytest.approx(alpha, rel=1e-6)
    assert fb == pytest.approx(beta, rel=1e-6)
    with pytest.raises(ValueError):
        fit_linear([1, 1], [2, 3])


def test_saturation_batch() -> None:
    pts = [(1, 100.0), (2, 180.0), (4, 300.0), (8, 460.0), (16, 500.0), (32, 505.0)]
    assert saturation_batch(pts) == 8  # 460 ≥ 0.9 × 505 = 454.5
    pts2 = [(1, 100.0), (2, 180.0), (4, 300.0), (8, 400.0), (16, 500.0), (32, 505.0)]
    assert saturation_batch(pts2) == 16
    assert saturation_batch([]) is None


def test_flop_and_byte_counts() -> None:
    assert matmul_flops(2, 3, 4) == 48
    assert conv_output_size(56, 3, 1, 1) == 56
    assert conv_output_size(224, 7, 2, 3) == 112
    assert conv2d_flops(1, 64, 64, 3, 3, 56, 56) == 2 * 64 * 64 * 9 * 56 * 56
    assert conv2d_train_flops(10) == 30
    assert stream_bytes("copy", 10, 4) == 80
    assert stream_bytes("triad", 10, 4) == 120
    assert stream_bytes("read", 10, 4) == 40
    with pytest.raises(ValueError):
        stream_bytes("nope", 1, 1)


def test_counts_agree_with_torch_flop_counter() -> None:
    a, b = torch.randn(32, 48), torch.randn(48, 16)
    with FlopCounterMode(display=False) as fc:
        torch.mm(a, b)
    assert fc.get_total_flops() == matmul_flops(32, 16, 48)
    x, w = torch.randn(2, 8, 10, 10), torch.randn(16, 8, 3, 3)
    with FlopCounterMode(display=False) as fc:
        torch.nn.functional.conv2d(x, w, padding=1)
    assert fc.get_total_flops() == conv2d_flops(2, 8, 16, 3, 3, 10, 10)


def test_fit_transfer_resolves_the_link_when_the_sizes_allow() -> None:
    sizes = [1 << 16, 1 << 20, 1 << 24]
    times = [10e-6 + s / 50e9 for s in sizes]
    alpha, beta, lower = fit_transfer(sizes, times)
    assert not lower
    assert alpha == pytest.approx(10e-6, rel=1e-6) and beta == pytest.approx(50e9, rel=1e-6)


def test_fit_transfer_on_latency_bound_sizes_gives_a_lower_bound() -> None:
    # 4 KiB and 64 KiB over a fast link: both copies cost the ~10 µs latency, and noise made
    # the larger one a little faster (slope < 0). Seen on an H200 with the tiny test profile.
    sizes, times = [1 << 12, 1 << 16], [10.4e-6, 10.1e-6]
    assert fit_latency_bandwidth(sizes, times)[1] == math.inf
    alpha, beta, lower = fit_transfer(sizes, times)
    assert lower
    assert 10.1e-6 <= alpha <= 10.4e-6
    assert beta == pytest.approx((1 << 16) / 10.1e-6)  # the best rate achieved

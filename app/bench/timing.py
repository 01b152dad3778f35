"""Warm-up, synchronisation, blocked timing and statistics.

Everything in this module is pure Python: the clock and the device synchronisation are
injected, so the logic is testable without a device (see tests/bench/test_timing.py).

Method (after torch.utils.benchmark, triton do_bench and the MAMF finder):

* warm up every (op, shape, dtype) separately: at least ``min_warmup_calls`` calls and at
  least ``warmup_s`` seconds;
* estimate the cost of one call from the last warm-up calls, then time *blocks* of
  ``iters_per_block`` calls, each block lasting about ``block_s`` seconds so that the
  synchronisation overhead vanishes;
* synchronise the device before **every** clock read;
* report the median over blocks with p10/p90 and flag the figure as noisy when
  IQR/median > 0.10.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

NOISY_IQR_RATIO = 0.10


def _noop() -> None:
    return None


# ---------------------------------------------------------------------------------------
# statistics (pure)
# ---------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation (numpy's default method)."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q must lie in [0, 100], got {q}")
    data = sorted(float(v) for v in values)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    frac = pos - lo
    return data[lo] + (data[hi] - data[lo]) * frac


def median(values: Sequence[float]) -> float:
    return percentile(values, 50.0)


@dataclass(frozen=True)
class Stats:
    """Summary of a sample: median with p10/p90 and the interquartile range."""

    median: float
    p10: float
    p90: float
    q1: float
    q3: float
    n: int

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def iqr_ratio(self) -> float:
        if self.median == 0:
            return math.inf if self.iqr > 0 else 0.0
        return self.iqr / abs(self.median)

    @property
    def noisy(self) -> bool:
        return self.iqr_ratio > NOISY_IQR_RATIO


def summarize(values: Sequence[float]) -> Stats:
    """Median, p10, p90 and quartiles of a non-empty sample."""
    if not values:
        raise ValueError("cannot summarise an empty sample")
    for v in values:
        if not math.isfinite(v):
            raise ValueError(f"sample contains a non-finite value: {v!r}")
    return Stats(
        median=percentile(values, 50),
        p10=percentile(values, 10),
        p90=percentile(values, 90),
        q1=percentile(values, 25),
        q3=percentile(values, 75),
        n=len(values),
    )


def rates(work: float, times_s: Sequence[float]) -> list[float]:
    """Convert per-call times into rates (work per second), e.g. FLOP/s or bytes/s."""
    out = []
    for t in times_s:
        if t <= 0:
            raise ValueError(f"non-positive time {t!r}: the clock did not advance")
        out.append(work / t)
    return out


def fit_linear(
    xs: Sequence[float], ys: Sequence[float], weights: Sequence[float] | None = None
) -> tuple[float, float]:
    """Weighted least-squares fit ``y = a + b·x``; returns ``(a, b)``.

    Used for the transfer model t(s) = α + s/β, the batch model t(B) = t₀ + B·c and the
    memory model mem(B) = fixed + B·per_sample.
    """
    if len(xs) != len(ys):
        raise ValueError("xs and ys differ in length")
    if len(xs) < 2:
        raise ValueError("a linear fit needs at least two points")
    w = [1.0] * len(xs) if weights is None else [float(v) for v in weights]
    if len(w) != len(xs):
        raise ValueError("weights differ in length")
    sw = sum(w)
    mx = sum(wi * x for wi, x in zip(w, xs, strict=True)) / sw
    my = sum(wi * y for wi, y in zip(w, ys, strict=True)) / sw
    sxx = sum(wi * (x - mx) ** 2 for wi, x in zip(w, xs, strict=True))
    if sxx == 0:
        raise ValueError("a linear fit needs at least two distinct x values")
    sxy = sum(wi * (x - mx) * (y - my) for wi, x, y in zip(w, xs, ys, strict=True))
    b = sxy / sxx
    a = my - b * mx
    return a, b


def fit_latency_bandwidth(
    sizes_bytes: Sequence[float], times_s: Sequence[float]
) -> tuple[float, float]:
    """Fit t = α + s/β (α seconds, β bytes/s) with relative (1/t²) weights.

    Relative weights keep the small, latency-bound transfers from being drowned by the
    large ones. α is clamped at zero; β is returned as +inf if the fitted slope is not
    positive (which only happens with broken data).
    """
    weights = [1.0 / (t * t) for t in times_s]
    alpha, slope = fit_linear(sizes_bytes, times_s, weights)
    beta = math.inf if slope <= 0 else 1.0 / slope
    return max(alpha, 0.0), beta


def fit_transfer(
    sizes_bytes: Sequence[float], times_s: Sequence[float]
) -> tuple[float, float, bool]:
    """Latency α (s), bandwidth β (bytes/s), and whether β is only a lower bound.

    When every size is small enough that the copies are latency-bound (a few KiB on a fast
    link: the per-copy cost is ~10 µs, the bytes take ~0.1 µs), timing noise can make the
    fitted slope zero or negative. The data then say nothing about the asymptotic bandwidth
    except that it is at least the best rate achieved (t ≥ s/β for every copy), and the
    latency is the slope-free fit: the weighted mean time. Both are returned, flagged.
    """
    alpha, beta = fit_latency_bandwidth(sizes_bytes, times_s)
    if math.isfinite(beta):
        return alpha, beta, False
    weights = [1.0 / (t * t) for t in times_s]
    latency = sum(w * t for w, t in zip(weights, times_s, strict=True)) / sum(weights)
    achieved = max(s / t for s, t in zip(sizes_bytes, times_s, strict=True))
    return latency, achieved, True


def saturation_batch(points: Sequence[tuple[int, float]], fraction: float = 0.9) -> int | None:
    """Smallest batch whose throughput reaches ``fraction`` × the best throughput (B90)."""
    valid = [(b, t) for b, t in points if t is not None and math.isfinite(t) and t > 0]
    if not valid:
        return None
    best = max(t for _, t in valid)
    for b, t in sorted(valid):
        if t >= fraction * best:
            return b
    return None  # pragma: no cover - the best point always qualifies


# ---------------------------------------------------------------------------------------
# FLOP and byte counts (pure)
# ---------------------------------------------------------------------------------------


def matmul_flops(m: int, n: int, k: int) -> int:
    """A GEMM (M×K)·(K×N) is 2·M·N·K FLOPs (multiply + add, the flop_counter convention)."""
    return 2 * m * n * k


def conv_output_size(
    size: int, kernel: int, stride: int = 1, padding: int = 0, dilation: int = 1
) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv2d_flops(n: int, c: int, k: int, r: int, s: int, p: int, q: int, groups: int = 1) -> int:
    """Forward conv FLOPs = 2·N·K·(C/groups)·R·S·P·Q (padding and bias ignored)."""
    if c % groups or k % groups:
        raise ValueError("channels must be divisible by groups")
    return 2 * n * k * (c // groups) * r * s * p * q


def conv2d_train_flops(forward_flops: int) -> int:
    """Forward + backward (input and weight gradients) ≈ 3 × forward."""
    return 3 * forward_flops


#: Bytes counted per element for each STREAM-style kernel (read + written).
STREAM_BYTES_PER_ELEMENT_FACTOR: dict[str, int] = {
    "copy": 2,  # read a, write b
    "scale": 2,  # read a, write b
    "add": 3,  # read a and b, write c
    "triad": 3,  # read b and c, write a
    "read": 1,  # read a (the scalar result is negligible)
}


def stream_bytes(kernel: str, numel: int, element_size: int) -> int:
    try:
        factor = STREAM_BYTES_PER_ELEMENT_FACTOR[kernel]
    except KeyError:
        raise ValueError(f"unknown bandwidth kernel {kernel!r}") from None
    return factor * numel * element_size


# ---------------------------------------------------------------------------------------
# blocked timing with an injected clock and sync
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimingConfig:
    warmup_s: float = 0.05
    min_warmup_calls: int = 3
    max_warmup_calls: int = 10_000
    block_s: float = 0.05
    n_blocks: int = 7
    min_blocks: int = 3
    max_iters_per_block: int = 100_000
    #: Upper bound on the timed part (blocks) of one measurement; fewer blocks are run
    #: (never fewer than ``min_blocks``) when one call is slow.
    max_total_s: float | None = None


@dataclass(frozen=True)
class Timing:
    """Result of one measurement: seconds per call for each block."""

    per_call_s: list[float]
    iters_per_block: int
    warmup_calls: int
    warmup_s: float
    stats: Stats = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stats", summarize(self.per_call_s))

    @property
    def median_s(self) -> float:
        return self.stats.median

    @property
    def n_blocks(self) -> int:
        return len(self.per_call_s)


class Timer:
    """Blocked timer with an injected clock and device synchronisation.

    ``sync`` is called before every read of ``clock``. ``before_block`` (optional, e.g. a
    cache flush) runs before each block, outside the timed region.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.perf_counter,
        sync: Callable[[], None] | None = None,
        config: TimingConfig | None = None,
    ) -> None:
        self.clock = clock
        self.sync = sync or _noop
        self.config = config or TimingConfig()

    def now(self) -> float:
        self.sync()
        return self.clock()

    def measure(
        self,
        fn: Callable[[], object],
        *,
        before_block: Callable[[], object] | None = None,
        config: TimingConfig | None = None,
    ) -> Timing:
        cfg = config or self.config
        # --- warm-up: ≥ min_warmup_calls and ≥ warmup_s, each call timed to estimate cost
        warm_times: list[float] = []
        start = self.now()
        last = start
        while True:
            fn()
            t = self.now()
            warm_times.append(t - last)
            last = t
            if len(warm_times) >= cfg.max_warmup_calls:
                break
            if len(warm_times) >= cfg.min_warmup_calls and t - start >= cfg.warmup_s:
                break
        tail = warm_times[-min(len(warm_times), 5) :]
        estimate = max(median(tail), 1e-9)
        iters = int(min(cfg.max_iters_per_block, max(1, round(cfg.block_s / estimate))))
        n_blocks = cfg.n_blocks
        if cfg.max_total_s is not None:
            affordable = int(cfg.max_total_s // (estimate * iters)) if estimate > 0 else n_blocks
            n_blocks = max(cfg.min_blocks, min(n_blocks, affordable))
        per_call: list[float] = []
        for _ in range(n_blocks):
            if before_block is not None:
                before_block()
            t0 = self.now()
            for _ in range(iters):
                fn()
            t1 = self.now()
            elapsed = t1 - t0
            if elapsed <= 0:
                raise RuntimeError("the clock did not advance over a timed block")
            per_call.append(elapsed / iters)
        return Timing(
            per_call_s=per_call,
            iters_per_block=iters,
            warmup_calls=len(warm_times),
            warmup_s=last - start,
        )


def measure(
    fn: Callable[[], object],
    *,
    clock: Callable[[], float] = time.perf_counter,
    sync: Callable[[], None] | None = None,
    config: TimingConfig | None = None,
    before_block: Callable[[], object] | None = None,
) -> Timing:
    """Functional form of :meth:`Timer.measure`."""
    return Timer(clock=clock, sync=sync, config=config).measure(fn, before_block=before_block)

"""What the kernel-class suites share: their sizes per profile and one timed point.

A point is the median seconds per call of one (kernel class, op, shape, dtype) after the
warm-up and blocked timing of :mod:`app.bench.timing`, with the FLOPs and bytes the op
must do at minimum (so an op done in several eager kernels, like a hand-written RMSNorm,
shows its inefficiency as a low GB/s rather than a larger byte count).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.bench.device import empty_cache, is_oom
from app.bench.report import KernelPoint, KernelSuite, check_kernel_point, kernel_peak_key
from app.bench.suites.common import Context, flusher_for


def measure_point(
    ctx: Context,
    suite: KernelSuite,
    kernel_class: str,
    op: str,
    shape: dict[str, int],
    dtype: str,
    build: Callable[[], Callable[[], object]],
    *,
    flops: int | None = None,
    bytes_moved: int | None = None,
    flush: bool = False,
) -> None:
    """Build the op (allocations happen there, not in the timed calls), time it and append
    the point; a failure is noted in ``suite.skipped`` and the suite goes on."""
    label = f"{kernel_class} {op} {dtype} " + "x".join(str(v) for v in shape.values())
    try:
        fn = build()
        with flusher_for(ctx) as flusher:
            timing = ctx.measure(fn, before_block=flusher if flush else None)
    except Exception as exc:
        if is_oom(exc):
            empty_cache(ctx.device)
        suite.skipped[label] = f"{type(exc).__name__}: {exc}"[:300]
        return
    st = timing.stats
    data: dict[str, Any] = {
        "kernel_class": kernel_class,
        "op": op,
        "shape": shape,
        "dtype": dtype,
        "seconds": st.median,
        "p10_s": st.p10,
        "p90_s": st.p90,
        "noisy": st.noisy,
        "flops": flops,
        "bytes_moved": bytes_moved,
    }
    if flops is not None:
        data["tflops"] = flops / st.median / 1e12
    if bytes_moved is not None:
        data["gbs"] = bytes_moved / st.median / 1e9
    point = KernelPoint.model_validate(data)
    key = kernel_peak_key(point)
    point = check_kernel_point(point, ctx.peaks.get(key) if key else None)
    suite.points.append(point)


def element_size(dtype: str) -> int:
    return {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}[dtype]

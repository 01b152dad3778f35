"""The engine's kernel classes, each measured as raw points (``KernelSuite.points``):
GEMM grid, attention, element-wise/normalisation/embedding, launch overhead, and
collectives with two or more GPUs. The suite's share of the profile's budget is split
between the families so that a slow one cannot starve the rest; each family always
measures its first point."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable

from app.bench.device import empty_cache
from app.bench.report import KernelSuite
from app.bench.suites import attention, collectives, elementwise, gemm_grid, launch
from app.bench.suites.common import Context

_FAMILIES: tuple[tuple[str, float, Callable[[Context, KernelSuite], None]], ...] = (
    ("gemm", 0.45, gemm_grid.run),
    ("attention", 0.25, attention.run),
    ("elementwise", 0.2, elementwise.run),
    ("launch", 0.1, launch.run),
)


def run(ctx: Context) -> KernelSuite:
    start = time.perf_counter()
    suite = KernelSuite()
    outer_deadline, outer_progress = ctx.deadline, ctx.progress
    done = 0.0
    try:
        for i, (name, weight, fn) in enumerate(_FAMILIES):
            now = time.perf_counter()
            if outer_deadline is not None:
                left_w = sum(w for _, w, _ in _FAMILIES[i:])
                ctx.deadline = now + max(0.0, outer_deadline - now) * weight / left_w

            def sub(step: str, f: float, base: float = done, w: float = weight) -> None:
                if outer_progress is not None:
                    outer_progress(step, base + w * max(0.0, min(1.0, f)))

            ctx.progress = sub
            try:
                fn(ctx, suite)
            except Exception as exc:  # a family's crash is recorded, the others still run
                suite.skipped[name] = traceback.format_exception_only(type(exc), exc)[-1].strip()[
                    :300
                ]
            empty_cache(ctx.device)
            done += weight
        ctx.step("collectives", 1.0)
        collectives.run(suite, ctx.backend, ctx.profile.kernels.collective_bytes)
    finally:
        ctx.deadline, ctx.progress = outer_deadline, outer_progress
    if not suite.points:
        suite.status, suite.reason = "failed", "no kernel class could be measured"
    suite.duration_s = time.perf_counter() - start
    return suite

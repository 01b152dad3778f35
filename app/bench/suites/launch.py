"""Launch overhead: a loop of tiny one-element kernels run eagerly (Python dispatch and
the driver's launch, the floor under every small op of a decode step) and, where CUDA
exists, the same kernels replayed from a captured CUDA graph. A point's seconds are per
call of the op, which runs ``shape["kernels"]`` kernels."""

from __future__ import annotations

from collections.abc import Callable

import torch

from app.bench.report import KernelSuite
from app.bench.suites.common import Context
from app.bench.suites.kernel_points import measure_point


def _eager(ctx: Context) -> Callable[[], object]:
    x = torch.zeros(1, device=ctx.torch_device)
    return lambda: x.add_(1.0)


def _graph(ctx: Context, kernels: int) -> Callable[[], object]:
    x = torch.zeros(1, device=ctx.torch_device)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the default stream, as capture requires
        for _ in range(3):
            x.add_(1.0)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(kernels):
            x.add_(1.0)
    return graph.replay


def run(ctx: Context, suite: KernelSuite) -> None:
    ctx.step("launch overhead (eager)", 0.0)
    measure_point(ctx, suite, "launch_eager", "add_", {"kernels": 1}, "fp32", lambda: _eager(ctx))
    if ctx.backend != "cuda":
        suite.skipped["launch_graph"] = f"CUDA graphs need a CUDA device (this is {ctx.backend})"
        return
    n = ctx.profile.kernels.graph_kernels
    ctx.step("launch overhead (CUDA graph)", 0.5)
    measure_point(
        ctx, suite, "launch_graph", "add_", {"kernels": n}, "fp32", lambda: _graph(ctx, n)
    )

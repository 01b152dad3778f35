"""Memory-bound kernel classes: element-wise (add, GELU), normalisation (LayerNorm and a
hand-written RMSNorm, as eager models run it) and embedding gathers.

Bytes are the minimum the op must move: add reads two arrays and writes one, GELU reads
one and writes one, a norm reads x and writes y (the weights are negligible), a gather
reads the selected rows and the indices and writes the rows.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from app.bench.device import DTYPES
from app.bench.report import KernelSuite
from app.bench.suites.common import Context
from app.bench.suites.kernel_points import element_size, measure_point


def _add(ctx: Context, dtype: str, n: int) -> Callable[[], object]:
    dev, dt = ctx.torch_device, DTYPES[dtype]
    a, b, c = (torch.randn(n, device=dev, dtype=dt) for _ in range(3))
    return lambda: torch.add(a, b, out=c)


def _gelu(ctx: Context, dtype: str, n: int) -> Callable[[], object]:
    dev, dt = ctx.torch_device, DTYPES[dtype]
    a = torch.randn(n, device=dev, dtype=dt)
    return lambda: F.gelu(a)


def _layer_norm(ctx: Context, dtype: str, rows: int, hidden: int) -> Callable[[], object]:
    dev, dt = ctx.torch_device, DTYPES[dtype]
    x = torch.randn(rows, hidden, device=dev, dtype=dt)
    w = torch.ones(hidden, device=dev, dtype=dt)
    bias = torch.zeros(hidden, device=dev, dtype=dt)
    return lambda: F.layer_norm(x, (hidden,), w, bias)


def _rms_norm(ctx: Context, dtype: str, rows: int, hidden: int) -> Callable[[], object]:
    dev, dt = ctx.torch_device, DTYPES[dtype]
    x = torch.randn(rows, hidden, device=dev, dtype=dt)
    w = torch.ones(hidden, device=dev, dtype=dt)

    def op() -> object:  # the Llama reference implementation, several eager kernels
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    return op


def _embedding(
    ctx: Context, dtype: str, vocab: int, hidden: int, tokens: int
) -> Callable[[], object]:
    dev, dt = ctx.torch_device, DTYPES[dtype]
    table = torch.randn(vocab, hidden, device=dev, dtype=dt)
    idx = torch.randint(0, vocab, (tokens,), device=dev)
    return lambda: F.embedding(idx, table)


def _elementwise(ctx: Context, suite: KernelSuite, dtype: str) -> None:
    elt = element_size(dtype)
    for i, n in enumerate(ctx.profile.kernels.elementwise_numel):
        if i > 0 and ctx.out_of_time():
            ctx.skip_note("some element-wise sizes")
            return
        ctx.step(f"element-wise {dtype} {n}", 0.1)
        shape = {"numel": n}
        add, gelu = partial(_add, ctx, dtype, n), partial(_gelu, ctx, dtype, n)
        measure_point(ctx, suite, "elementwise", "add", shape, dtype, add, bytes_moved=3 * n * elt)
        measure_point(
            ctx, suite, "elementwise", "gelu", shape, dtype, gelu, bytes_moved=2 * n * elt
        )


def _norms(ctx: Context, suite: KernelSuite, dtype: str) -> None:
    elt = element_size(dtype)
    for i, (rows, hidden) in enumerate(ctx.profile.kernels.norm_shapes):
        if i > 0 and ctx.out_of_time():
            ctx.skip_note("some normalisation shapes")
            return
        ctx.step(f"normalisation {dtype} {rows}×{hidden}", 0.5)
        shape = {"rows": rows, "hidden": hidden}
        nbytes = 2 * rows * hidden * elt
        for op, build in (("layer_norm", _layer_norm), ("rms_norm", _rms_norm)):
            fn = partial(build, ctx, dtype, rows, hidden)
            measure_point(ctx, suite, "normalization", op, shape, dtype, fn, bytes_moved=nbytes)


def _embeddings(ctx: Context, suite: KernelSuite, dtype: str) -> None:
    elt = element_size(dtype)
    for i, (vocab, hidden, tokens) in enumerate(ctx.profile.kernels.embedding_shapes):
        if i > 0 and ctx.out_of_time():
            ctx.skip_note("some embedding shapes")
            return
        ctx.step(f"embedding {dtype} {tokens} of {vocab}", 0.8)
        shape = {"vocab": vocab, "hidden": hidden, "tokens": tokens}
        fn = partial(_embedding, ctx, dtype, vocab, hidden, tokens)
        nbytes = 2 * tokens * hidden * elt + 8 * tokens  # rows read and written, int64 indices
        measure_point(ctx, suite, "embedding", "embedding", shape, dtype, fn, bytes_moved=nbytes)


def run(ctx: Context, suite: KernelSuite) -> None:
    for dtype in ctx.profile.kernels.dtypes:
        _elementwise(ctx, suite, dtype)
        _norms(ctx, suite, dtype)
        _embeddings(ctx, suite, dtype)

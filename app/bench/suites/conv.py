"""Convolution throughput on ResNet-like layers, forward and forward+backward, NCHW and
channels_last; the faster layout is kept per layer and named.

FLOPs: forward = 2·N·K·C·R·S·P·Q, forward+backward = 3 × forward. Aggregates are Σ FLOPs ÷
Σ time over the layers (a time-weighted harmonic mean), never a mean of per-layer TFLOPS.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from app.bench.device import DTYPES, empty_cache, is_oom, precision_support
from app.bench.report import ConvAggregate, ConvLayerSpec, ConvRow, ConvSuite, Figure
from app.bench.suites.common import Context, ConvLayer, failed, flusher_for, rate_figure
from app.bench.timing import conv2d_flops, conv2d_train_flops, conv_output_size
from app.bench.torch_state import set_fp32_mode

LAYOUTS = ("nchw", "channels_last")
MODES = ("forward", "forward_backward")


def layer_flops(layer: ConvLayer, batch: int) -> int:
    out = conv_output_size(layer.hw, layer.kernel, layer.stride, layer.padding)
    return conv2d_flops(batch, layer.c, layer.k, layer.kernel, layer.kernel, out, out)


def _make_op(
    ctx: Context, layer: ConvLayer, batch: int, precision: str, mode: str, layout: str
) -> Callable[[], object]:
    dev = ctx.torch_device
    dtype = DTYPES[precision]
    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    x = torch.randn(batch, layer.c, layer.hw, layer.hw, device=dev, dtype=dtype)
    w = torch.randn(layer.k, layer.c, layer.kernel, layer.kernel, device=dev, dtype=dtype)
    w = (w * (2.0 / (layer.c * layer.kernel * layer.kernel)) ** 0.5).to(dtype)
    x = x.contiguous(memory_format=fmt)
    w = w.contiguous(memory_format=fmt)
    stride, padding = layer.stride, layer.padding
    if mode == "forward":

        def fwd() -> object:
            with torch.no_grad():
                return F.conv2d(x, w, None, stride, padding)

        return fwd
    x.requires_grad_(True)
    w.requires_grad_(True)
    with torch.no_grad():
        y0 = F.conv2d(x, w, None, stride, padding)
    gy = torch.randn_like(y0).contiguous(memory_format=fmt)
    del y0

    def fwd_bwd() -> object:
        with torch.enable_grad():
            y = F.conv2d(x, w, None, stride, padding)
            return torch.autograd.grad(y, (x, w), gy)

    return fwd_bwd


def _aggregate(rows: list[ConvRow], precision: str, mode: str) -> ConvAggregate | None:
    sel = [r for r in rows if r.precision == precision and r.mode == mode and r.figure.ok]
    if not sel:
        return None
    by_layer: dict[str, list[ConvRow]] = {}
    for r in sel:
        by_layer.setdefault(r.layer, []).append(r)

    def t_of(r: ConvRow, which: str = "value") -> float:
        v = getattr(r.figure, which) or r.figure.value or 0.0
        return r.flops / (v * 1e12)

    best_rows = {
        name: max(rs, key=lambda r: r.figure.value or 0.0) for name, rs in by_layer.items()
    }
    total_flops = sum(r.flops for r in best_rows.values())
    t_med = sum(t_of(r) for r in best_rows.values())
    t_fast = sum(t_of(r, "p90") for r in best_rows.values())
    t_slow = sum(t_of(r, "p10") for r in best_rows.values())
    fig = Figure(
        value=total_flops / t_med / 1e12,
        unit="TFLOPS",
        p10=total_flops / t_slow / 1e12,
        p90=total_flops / t_fast / 1e12,
        noisy=any(r.figure.noisy for r in best_rows.values()),
        n_blocks=min(r.figure.n_blocks for r in best_rows.values()),
        median_time_s=t_med,
    )
    per_layout: dict[str, float | None] = {}
    for layout in LAYOUTS:
        lr = [r for r in sel if r.layout == layout]
        if len(lr) == len(by_layer):
            per_layout[layout] = sum(r.flops for r in lr) / sum(t_of(r) for r in lr) / 1e12
        else:
            per_layout[layout] = None
    known = {k: v for k, v in per_layout.items() if v is not None}
    faster = max(known, key=lambda k: known[k]) if known else None
    return ConvAggregate(
        precision=precision,
        mode=mode,
        tflops=fig,
        tflops_nchw=per_layout["nchw"],
        tflops_channels_last=per_layout["channels_last"],
        faster_layout=faster,
        layout_per_layer={name: r.layout for name, r in best_rows.items()},
    )


def _measure(
    ctx: Context,
    layer: ConvLayer,
    batch: int,
    precision: str,
    mode: str,
    layout: str,
    flops: int,
    flush: Callable[[], None] | None,
) -> Figure:
    try:
        op = _make_op(ctx, layer, batch, precision, mode, layout)
        timing = ctx.measure(op, before_block=flush)
        fig = rate_figure(timing, flops, "TFLOPS", 1e12)
        return ctx.check(fig, precision, f"conv {layer.name} {precision}")
    except Exception as exc:
        if is_oom(exc):
            empty_cache(ctx.device)
        return failed("TFLOPS", exc)


def run(ctx: Context) -> ConvSuite:
    start = time.perf_counter()
    prof = ctx.profile
    batch = prof.conv_batch
    suite = ConvSuite(
        layers=[
            ConvLayerSpec(
                name=ly.name,
                n=batch,
                c=ly.c,
                h=ly.hw,
                w=ly.hw,
                k=ly.k,
                kernel=ly.kernel,
                stride=ly.stride,
                padding=ly.padding,
            )
            for ly in prof.conv_layers
        ]
    )
    precisions = []
    for p in prof.conv_precisions:
        runnable, native, _ = precision_support(ctx.device, p)
        if runnable and native and p in DTYPES:
            precisions.append(p)
    if ctx.backend in ("cuda", "rocm"):
        torch.backends.cudnn.benchmark = True  # restored by the runner
    total = max(1, len(precisions) * len(prof.conv_layers) * len(MODES) * len(LAYOUTS))
    done = 0
    with flusher_for(ctx) as flush:
        for precision in precisions:
            if precision in ("fp32", "tf32"):
                set_fp32_mode(precision)
            for layer in prof.conv_layers:
                fwd = layer_flops(layer, batch)
                for mode in MODES:
                    flops = fwd if mode == "forward" else conv2d_train_flops(fwd)
                    for layout in LAYOUTS:
                        ctx.step(f"conv {layer.name} {precision} {mode} {layout}", done / total)
                        done += 1
                        # the first layer of each precision is always measured
                        if layer is not prof.conv_layers[0] and ctx.out_of_time():
                            ctx.skip_note("some convolution layers")
                            continue
                        fig = _measure(ctx, layer, batch, precision, mode, layout, flops, flush)
                        suite.rows.append(
                            ConvRow(
                                layer=layer.name,
                                precision=precision,
                                mode=mode,
                                layout=layout,
                                flops=flops,
                                figure=fig,
                            )
                        )
            set_fp32_mode("fp32")
            empty_cache(ctx.device)
    for precision in precisions:
        for mode in MODES:
            agg = _aggregate(suite.rows, precision, mode)
            if agg is not None:
                suite.aggregates.append(agg)
    if not suite.aggregates:
        suite.status = "failed"
        suite.reason = "no convolution could be measured"
    suite.duration_s = time.perf_counter() - start
    return suite

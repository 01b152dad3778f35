"""GEMM over a grid of (M, N, K) per precision: skinny decode shapes (M ≤ 16), square
shapes and the layer shapes of the presets (see ``LLAMA3_8B_LAYERS``). FLOPs = 2·M·N·K."""

from __future__ import annotations

from functools import partial

from app.bench.device import precision_support
from app.bench.report import KernelSuite, gemm_flops
from app.bench.suites.common import Context
from app.bench.suites.kernel_points import element_size, measure_point
from app.bench.suites.matmul import _make_op
from app.bench.torch_state import set_fp32_mode


def _fp8_shape_ok(m: int, n: int, k: int) -> bool:
    # torch._scaled_mm needs every dimension divisible by 16
    return m % 16 == 0 and n % 16 == 0 and k % 16 == 0


def run(ctx: Context, suite: KernelSuite) -> None:
    cfg = ctx.profile.kernels
    shapes = cfg.gemm_shapes
    for pi, precision in enumerate(cfg.gemm_precisions):
        runnable, native, note = precision_support(ctx.device, precision)
        if not (runnable and native):
            suite.skipped[f"gemm {precision}"] = note or f"{precision} is not native here"
            continue
        if precision in ("fp32", "tf32"):
            set_fp32_mode(precision)
        try:
            for si, (m, n, k) in enumerate(shapes):
                ctx.step(
                    f"gemm {precision} {m}×{n}×{k}",
                    (pi + si / len(shapes)) / len(cfg.gemm_precisions),
                )
                if si > 0 and ctx.out_of_time():
                    ctx.skip_note("some GEMM grid shapes")
                    break
                if precision == "fp8" and not _fp8_shape_ok(m, n, k):
                    continue
                shape = {"m": m, "n": n, "k": k}
                elt = element_size(precision)
                out_elt = 2 if precision == "fp8" else elt  # fp8 GEMMs write bf16
                measure_point(
                    ctx,
                    suite,
                    "gemm",
                    "mm" if precision != "fp8" else "scaled_mm",
                    shape,
                    precision,
                    partial(_make_op, ctx, precision, m, n, k),
                    flops=gemm_flops(shape),
                    bytes_moved=elt * (m * k + k * n) + out_elt * m * n,
                    flush=True,
                )
        finally:
            set_fp32_mode("fp32")

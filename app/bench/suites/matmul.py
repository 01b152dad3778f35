"""Matmul throughput per precision: a reference shape plus a small best-shape search.

TFLOPS = 2·M·N·K / t / 1e12. fp32 is measured strict (TF32 off, float32 matmul precision
"highest"); TF32 is a separate row where the hardware has it. fp8 uses
``torch._scaled_mm`` (e4m3 operands, bf16 output) on CUDA ≥ 8.9. Emulated precisions (e.g.
fp16 on a CPU without avx512_fp16) are measured once at a small shape and tagged
``native: false``. On CPUs fp32 is also measured with ``np.matmul`` at the reference shape
(``library: "numpy"``) and the best of both libraries is the achievable figure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

import torch

from app.bench.device import DTYPES, empty_cache, is_oom, precision_support
from app.bench.report import Figure, MatmulRow, MatmulSuite, MatmulSummary
from app.bench.suites.common import Context, failed, flusher_for, rate_figure
from app.bench.timing import matmul_flops
from app.bench.torch_state import set_fp32_mode


def _make_op(ctx: Context, precision: str, m: int, n: int, k: int) -> Callable[[], object]:
    dev = ctx.torch_device
    if precision == "fp8":
        fp8 = torch.float8_e4m3fn
        a = torch.randn(m, k, device=dev).to(fp8)
        b = torch.randn(n, k, device=dev).to(fp8).t()  # column-major, as _scaled_mm needs
        one = torch.tensor(1.0, device=dev)
        out_holder: list[torch.Tensor] = []

        def op_fp8() -> object:
            r = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            if not out_holder:
                out_holder.append(r)
            return r

        return op_fp8
    dtype = DTYPES[precision]
    a = torch.randn(m, k, device=dev, dtype=dtype)
    b = torch.randn(k, n, device=dev, dtype=dtype)
    c = torch.empty(m, n, device=dev, dtype=dtype)

    def op() -> object:
        return torch.mm(a, b, out=c)

    return op


def _check_finite(op: Callable[[], object]) -> None:
    out = op()
    if isinstance(out, torch.Tensor) and not bool(torch.isfinite(out.float().sum())):
        raise FloatingPointError("matmul produced inf/NaN: broken fast path")


def _numpy_op(m: int, n: int, k: int) -> Callable[[], object]:
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.empty((m, n), dtype=np.float32)
    return lambda: np.matmul(a, b, out=c)


def _measure_numpy(ctx: Context, shape: tuple[int, int, int]) -> MatmulRow:
    """fp32 np.matmul on the CPU (numpy's own BLAS, often OpenBLAS where torch uses MKL)."""
    m, n, k = shape
    flops = matmul_flops(m, n, k)
    try:
        timing = ctx.measure(_numpy_op(m, n, k))
        fig = rate_figure(timing, flops, "TFLOPS", 1e12)
        fig = ctx.check(fig, "fp32", f"numpy matmul fp32 {m}x{n}x{k}")
    except Exception as exc:
        fig = failed("TFLOPS", exc)
    return MatmulRow(
        precision="fp32", m=m, n=n, k=k, flops=flops, role="search", library="numpy", figure=fig
    )


def _measure_shape(
    ctx: Context,
    precision: str,
    shape: tuple[int, int, int],
    role: str,
    flush: Callable[[], None] | None,
    threads: int | None = None,
) -> MatmulRow:
    m, n, k = shape
    flops = matmul_flops(m, n, k)
    old_threads = torch.get_num_threads()
    try:
        if threads is not None:
            torch.set_num_threads(threads)
        op = _make_op(ctx, precision, m, n, k)
        _check_finite(op)
        timing = ctx.measure(op, before_block=flush)
        fig = rate_figure(timing, flops, "TFLOPS", 1e12)
        fig = ctx.check(fig, precision, f"matmul {precision} {m}x{n}x{k}")
    except Exception as exc:  # record, keep going
        if is_oom(exc):
            empty_cache(ctx.device)
        fig = failed("TFLOPS", exc)
    finally:
        if threads is not None:
            torch.set_num_threads(old_threads)
    return MatmulRow(
        precision=precision, m=m, n=n, k=k, flops=flops, role=role, threads=threads, figure=fig
    )


def run(ctx: Context) -> MatmulSuite:
    start = time.perf_counter()
    prof = ctx.profile
    suite = MatmulSuite(reference_shape=prof.matmul_reference)
    precisions = list(prof.matmul_precisions)
    with flusher_for(ctx) as flush:
        for i, precision in enumerate(precisions):
            ctx.step(f"matmul {precision}", i / len(precisions))
            runnable, native, note = precision_support(ctx.device, precision)
            if not runnable:
                reason = note or f"{precision} is not supported here"
                missing = Figure.missing("TFLOPS", "not_applicable", reason)
                suite.by_precision[precision] = MatmulSummary(
                    precision=precision, native=False, note=reason, reference=missing, best=missing
                )
                continue
            if precision in ("fp32", "tf32"):
                set_fp32_mode(precision)
            rows: list[MatmulRow] = []
            if native:
                rows.append(
                    _measure_shape(ctx, precision, prof.matmul_reference, "reference", flush)
                )
                for shape in prof.matmul_search:
                    if shape == prof.matmul_reference:
                        continue
                    if ctx.out_of_time():  # the reference shape is enough for a figure
                        ctx.skip_note("some matmul search shapes")
                        break
                    rows.append(_measure_shape(ctx, precision, shape, "search", flush))
            else:
                rows.append(
                    _measure_shape(ctx, precision, prof.matmul_emulated, "reference", flush)
                )
            if precision == "fp32" and not ctx.is_accelerator:
                # methodology §3.7: measure torch and numpy, take the max as achievable
                rows.append(_measure_numpy(ctx, prof.matmul_reference))
                if prof.matmul_single_thread:
                    rows.append(
                        _measure_shape(
                            ctx, precision, prof.matmul_reference, "search", flush, threads=1
                        )
                    )
            set_fp32_mode("fp32")
            suite.rows.extend(rows)
            ref = rows[0].figure
            multi = [r for r in rows if r.figure.ok and r.threads is None]
            best_library: Literal["torch", "numpy"] = "torch"
            if multi:
                best_row = max(multi, key=lambda r: r.figure.value or 0.0)
                best = best_row.figure
                best_shape: tuple[int, int, int] | None = (best_row.m, best_row.n, best_row.k)
                best_library = best_row.library
            else:
                best = (
                    ref if not ref.ok else Figure.missing("TFLOPS", "failed", "no shape measured")
                )
                best_shape = None
            suite.by_precision[precision] = MatmulSummary(
                precision=precision,
                native=native,
                note=note,
                reference=ref,
                best=best,
                best_shape=best_shape,
                best_library=best_library,
            )
            empty_cache(ctx.device)
    ok = [s for s in suite.by_precision.values() if s.best.ok]
    if not ok:
        suite.status = "failed"
        suite.reason = "no matmul precision could be measured"
    suite.duration_s = time.perf_counter() - start
    return suite

"""Device memory bandwidth with STREAM-style torch kernels (copy, scale, add, triad, read).

Arrays are float32, each ≥ max(4 × last-level cache, profile minimum) and together ≤ a
quarter of the free memory. Bytes counted = bytes read + bytes written (copy = 2 × array),
decimal GB. The best kernel is the achievable bandwidth; triad is the STREAM-comparable
figure.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import torch

from app.bench.device import empty_cache, is_oom
from app.bench.host import host_available_bytes, llc_bytes
from app.bench.report import PEAK_BANDWIDTH_KEY, BandwidthRow, MemorySuite
from app.bench.suites.common import Context, failed, rate_figure
from app.bench.timing import stream_bytes

KERNELS = ("copy", "scale", "add", "triad", "read")


def device_llc_bytes(ctx: Context) -> int | None:
    if ctx.backend in ("cuda", "rocm"):
        with contextlib.suppress(Exception):
            props = torch.cuda.get_device_properties(ctx.torch_device)
            v = int(getattr(props, "L2_cache_size", 0) or 0)
            if ctx.backend == "rocm":
                v = max(v, 256 << 20)  # MI300-class Infinity Cache is not reported
            return v or None
        return None
    if ctx.backend == "cpu":
        return llc_bytes()
    return None  # MPS (SLC) and XPU: unknown, the profile minimum applies


def free_bytes(ctx: Context) -> int | None:
    with contextlib.suppress(Exception):
        if ctx.backend in ("cuda", "rocm"):
            free, _total = torch.cuda.mem_get_info(ctx.torch_device)
            return int(free)
        if ctx.backend == "mps":
            return int(torch.mps.recommended_max_memory()) - int(
                torch.mps.driver_allocated_memory()
            )
        if ctx.backend == "xpu":
            free, _total = torch.xpu.mem_get_info(ctx.torch_device)
            return int(free)
    if ctx.backend == "cpu":
        return host_available_bytes()
    return None


def array_bytes(ctx: Context) -> tuple[int, int | None]:
    prof = ctx.profile
    llc = device_llc_bytes(ctx)
    size = max(prof.memory_min_bytes, prof.memory_llc_multiple * (llc or 0))
    if prof.memory_max_bytes is not None and size > prof.memory_max_bytes:
        ctx.warnings.append(
            f"bandwidth arrays capped at {prof.memory_max_bytes / 2**20:.0f} MiB by the "
            f"{prof.name} profile (wanted {size / 2**20:.0f} MiB)"
        )
        size = prof.memory_max_bytes
    free = free_bytes(ctx)
    if free is not None:
        cap = int(free * prof.memory_max_fraction / 3)
        if cap < size:
            ctx.warnings.append(
                f"bandwidth arrays limited to {cap / 2**20:.0f} MiB by free memory "
                f"(wanted {size / 2**20:.0f} MiB)"
            )
            size = cap
    return max(size - size % 4096, 4096), llc


def kernel_ops(
    a: torch.Tensor, b: torch.Tensor, c: torch.Tensor
) -> dict[str, Callable[[], object]]:
    s = 3.0
    return {
        "copy": lambda: b.copy_(a),
        "scale": lambda: torch.mul(a, s, out=b),
        "add": lambda: torch.add(a, b, out=c),
        "triad": lambda: torch.add(b, c, alpha=s, out=a),
        "read": lambda: a.sum(),
    }


def run(ctx: Context) -> MemorySuite:
    start = time.perf_counter()
    nbytes, llc = array_bytes(ctx)
    numel = nbytes // 4
    suite = MemorySuite(dtype="float32", array_bytes=numel * 4, llc_bytes=llc)
    if llc and numel * 4 < 4 * llc:
        ctx.warnings.append(
            "bandwidth arrays are smaller than 4 × the last-level cache: the "
            "figure may include cache bandwidth"
        )
    try:
        dev = ctx.torch_device
        a = torch.randn(numel, device=dev)
        b = a * 0.5  # random data, every page touched, cheaper than two more randn
        c = a * 0.25
    except Exception as exc:
        empty_cache(ctx.device)
        suite.status = "failed"
        suite.reason = f"could not allocate 3 × {numel * 4 / 2**20:.0f} MiB: {exc}"[:500]
        suite.duration_s = time.perf_counter() - start
        return suite
    try:
        ops = kernel_ops(a, b, c)
        for i, kernel in enumerate(KERNELS):
            ctx.step(f"memory {kernel}", i / len(KERNELS))
            if kernel not in ("copy", "triad") and ctx.out_of_time():
                ctx.skip_note("some bandwidth kernels")
                continue
            nb = stream_bytes(kernel, numel, 4)
            try:
                timing = ctx.measure(ops[kernel])
                fig = rate_figure(timing, nb, "GB/s", 1e9)
                fig = ctx.check(fig, PEAK_BANDWIDTH_KEY, f"{kernel} bandwidth")
            except Exception as exc:
                if is_oom(exc):
                    empty_cache(ctx.device)
                fig = failed("GB/s", exc)
            suite.rows.append(BandwidthRow(kernel=kernel, bytes_per_call=nb, figure=fig))
    finally:
        del a, b, c
        empty_cache(ctx.device)
    ok = [r for r in suite.rows if r.figure.ok]
    if ok:
        best = max(ok, key=lambda r: r.figure.value or 0.0)
        suite.best = best.figure
        suite.best_kernel = best.kernel
        suite.triad = next((r.figure for r in suite.rows if r.kernel == "triad"), None)
    else:
        suite.status = "failed"
        suite.reason = "no bandwidth kernel could be measured"
    suite.duration_s = time.perf_counter() - start
    return suite

"""Host↔device transfer: H2D and D2H, pageable vs pinned, over a size sweep, with the fit
t(s) = α + s/β (latency α, asymptotic bandwidth β).

Buffers are allocated once and pre-faulted outside the timed region. Pinned copies are
issued with ``non_blocking=True``, pageable ones blocking; the device is synchronised
before every clock read, so both are timed to completion. On Apple MPS memory is unified:
the copies are labelled ``unified`` and pinned memory does not apply. On a CPU-only run the
suite is ``not_applicable``.
"""

from __future__ import annotations

import contextlib
import time

import torch

from app.bench.report import (
    PEAK_LINK_KEY,
    Figure,
    TransferFit,
    TransferRow,
    TransferSuite,
)
from app.bench.suites.common import Context, failed, rate_figure
from app.bench.timing import fit_transfer

NOT_APPLICABLE_CPU = (
    "no accelerator: host and device share the same memory, so there is no "
    "host↔device transfer to measure"
)


def _headline(rows: list[TransferRow], headline: int) -> TransferRow | None:
    ok = [r for r in rows if r.figure.ok]
    if not ok:
        return None
    under = [r for r in ok if r.size_bytes <= headline]
    return max(under or ok, key=lambda r: r.size_bytes)


def fit_rows(rows: list[TransferRow], headline: int) -> TransferFit | None:
    """The latency/bandwidth fit of one (direction, memory) sweep; ``None`` with fewer than
    two measured sizes. Latency-bound sweeps give a lower bound on the bandwidth."""
    ok = [r for r in rows if r.figure.ok and r.figure.median_time_s]
    head = _headline(ok, headline)
    if head is None or len({r.size_bytes for r in ok}) < 2:
        return None
    alpha, beta, lower = fit_transfer(
        [r.size_bytes for r in ok], [r.figure.median_time_s or 0.0 for r in ok]
    )
    return TransferFit(
        direction=ok[0].direction,
        memory=ok[0].memory,
        latency_s=alpha,
        bandwidth_gbs=beta / 1e9,
        bandwidth_is_lower_bound=lower,
        headline=head.figure,
        headline_size_bytes=head.size_bytes,
    )


def _host_buffers(ctx: Context, memories: list[str], max_size: int) -> dict[str, torch.Tensor]:
    hosts: dict[str, torch.Tensor] = {}
    for memory in memories:
        try:
            if memory == "pinned":
                h = torch.empty(max_size, dtype=torch.uint8, pin_memory=True)
            else:
                h = torch.empty(max_size, dtype=torch.uint8)
            h.random_(0, 256)  # pre-fault every page
            hosts[memory] = h
        except Exception as exc:
            ctx.warnings.append(f"{memory} host buffer unavailable: {exc}"[:300])
    return hosts


def _measure_copy(
    ctx: Context, src: torch.Tensor, dst: torch.Tensor, memory: str, direction: str
) -> Figure:
    non_blocking = memory == "pinned"
    try:
        timing = ctx.measure(lambda: dst.copy_(src, non_blocking=non_blocking))
        fig = rate_figure(timing, src.numel(), "GB/s", 1e9)
        if memory != "unified":
            fig = ctx.check(fig, PEAK_LINK_KEY, f"{direction} transfer")
        return fig
    except Exception as exc:
        return failed("GB/s", exc)


def _sweep(
    ctx: Context, suite: TransferSuite, memory: str, direction: str, host: torch.Tensor,
    dev_buf: torch.Tensor, progress: tuple[int, int],
) -> None:  # fmt: skip
    """One (memory, direction) over the profile's sizes, then its latency/bandwidth fit."""
    prof = ctx.profile
    sizes = sorted(prof.transfer_sizes)
    done, total = progress
    for i, size in enumerate(sizes):
        ctx.step(f"transfer {direction} {memory} {size >> 10} KiB", (done + i) / total)
        # two sizes (smallest and headline-or-largest) always; the rest as time allows
        if 0 < i < len(sizes) - 1 and ctx.out_of_time():
            ctx.skip_note("some transfer sizes")
            continue
        h, d = host[:size], dev_buf[:size]
        src, dst = (h, d) if direction == "h2d" else (d, h)
        fig = _measure_copy(ctx, src, dst, memory, direction)
        suite.rows.append(
            TransferRow(direction=direction, memory=memory, size_bytes=size, figure=fig)
        )
    rows = [r for r in suite.rows if r.memory == memory and r.direction == direction]
    try:
        fit = fit_rows(rows, prof.transfer_headline)
    except ValueError as exc:
        ctx.warnings.append(f"transfer fit failed: {exc}")
    else:
        if fit is not None:
            suite.fits.append(fit)


def _pinned_over_pageable(suite: TransferSuite, headline: int) -> None:
    for direction in ("h2d", "d2h"):
        heads = {}
        for memory in ("pinned", "pageable"):
            r = _headline(
                [x for x in suite.rows if x.memory == memory and x.direction == direction],
                headline,
            )
            if r is not None:
                heads[memory] = r.figure.value
        pinned, pageable = heads.get("pinned"), heads.get("pageable")
        if pinned and pageable:
            if direction == "h2d":
                suite.pinned_over_pageable_h2d = pinned / pageable
            else:
                suite.pinned_over_pageable_d2h = pinned / pageable


def run(ctx: Context) -> TransferSuite:
    start = time.perf_counter()
    if not ctx.is_accelerator:
        return TransferSuite(status="not_applicable", reason=NOT_APPLICABLE_CPU)
    prof = ctx.profile
    sizes = sorted(prof.transfer_sizes)
    unified = ctx.backend == "mps"
    suite = TransferSuite(kind="unified" if unified else "pcie")
    memories = ["unified"] if unified else ["pinned", "pageable"]
    max_size = sizes[-1]
    dev_buf = torch.empty(max_size, dtype=torch.uint8, device=ctx.torch_device)
    dev_buf.random_(0, 256)
    hosts = _host_buffers(ctx, memories, max_size)
    total = max(1, len(hosts) * 2 * len(sizes))
    done = 0
    for memory, host in hosts.items():
        for direction in ("h2d", "d2h"):
            _sweep(ctx, suite, memory, direction, host, dev_buf, (done, total))
            done += len(sizes)
    _pinned_over_pageable(suite, prof.transfer_headline)
    # pinning cost, timed separately (it is not part of a pinned transfer)
    if "pinned" in hosts:
        with contextlib.suppress(Exception):
            n = min(max_size, 64 << 20)
            src = torch.empty(n, dtype=torch.uint8)
            src.random_(0, 256)
            timing = ctx.measure(lambda: src.pin_memory())
            suite.pin_cost_s_per_gb = timing.median_s / (n / 1e9)
    del dev_buf, hosts
    if not suite.fits and not any(r.figure.ok for r in suite.rows):
        suite.status = "failed"
        suite.reason = "no transfer could be measured"
    suite.duration_s = time.perf_counter() - start
    return suite

"""All-reduce and all-gather over message sizes between the GPUs of this machine
(``torch.distributed`` with NCCL, one process per GPU), when there are two or more.

Rates are *bus bandwidth* as nccl-tests defines it, so that they compare across GPU
counts: all-reduce moves 2·(n−1)/n × the message per rank, all-gather (n−1)/n × the
gathered output. Seconds are per collective (CUDA events, after warm-up)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from app.bench.report import KernelPoint, KernelSuite

WARMUP, ITERS = 5, 20


def bus_bytes(kind: str, size: int, ranks: int) -> int:
    factor = 2 * (ranks - 1) / ranks if kind == "all_reduce" else (ranks - 1) / ranks
    return int(size * factor)


def _collective(dist: Any, kind: str, numel: int, world: int) -> Callable[[], object]:
    if kind == "all_reduce":
        buf = torch.ones(numel, device="cuda", dtype=torch.bfloat16)
        return lambda: dist.all_reduce(buf)
    part = torch.ones(numel // world, device="cuda", dtype=torch.bfloat16)
    full = torch.empty(part.numel() * world, device="cuda", dtype=torch.bfloat16)
    return lambda: dist.all_gather_into_tensor(full, part)


def _worker(rank: int, world: int, store: str, sizes: list[int], out: str) -> None:
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=rank, world_size=world)
    results: list[dict[str, float | int | str]] = []
    try:
        for size in sizes:
            numel = size // 2  # bf16
            for kind in ("all_reduce", "all_gather"):
                op = _collective(dist, kind, numel, world)
                for _ in range(WARMUP):
                    op()
                start, end = (
                    torch.cuda.Event(enable_timing=True),
                    torch.cuda.Event(enable_timing=True),
                )
                torch.cuda.synchronize()
                start.record()
                for _ in range(ITERS):
                    op()
                end.record()
                torch.cuda.synchronize()
                seconds = start.elapsed_time(end) / 1e3 / ITERS
                results.append({"kind": kind, "size": size, "seconds": seconds})
        if rank == 0:
            Path(out).write_text(json.dumps(results))
    finally:
        dist.destroy_process_group()


def run(suite: KernelSuite, backend: str, sizes: tuple[int, ...]) -> None:
    count = torch.cuda.device_count() if backend == "cuda" else 0
    reason = None
    if backend != "cuda":
        reason = f"collectives are measured with NCCL on CUDA GPUs (this is {backend})"
    elif count < 2:
        reason = f"collectives need 2 or more GPUs (found {count})"
    elif not torch.distributed.is_available() or not torch.distributed.is_nccl_available():
        reason = "this torch build has no NCCL"
    if reason is not None:
        suite.skipped["all_reduce"] = suite.skipped["all_gather"] = reason
        return
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "collectives.json")
        args = (count, os.path.join(tmp, "store"), list(sizes), out)
        mp.spawn(_worker, args=args, nprocs=count, join=True)
        rows = json.loads(Path(out).read_text())
    for row in rows:
        size, seconds = int(row["size"]), float(row["seconds"])
        moved = bus_bytes(row["kind"], size, count)
        suite.points.append(
            KernelPoint(
                kernel_class=row["kind"],
                op="nccl",
                shape={"bytes": size, "ranks": count},
                dtype="bf16",
                seconds=seconds,
                bytes_moved=moved,
                gbs=moved / seconds / 1e9,
            )
        )

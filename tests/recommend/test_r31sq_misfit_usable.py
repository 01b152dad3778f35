"""fleet.one_device_misfit hands ev.too_big the card's usable memory from the catalog
snapshot (its ``avail`` column) rather than having it worked out again: the reason is the
same, word for word, as ev.plan's (which works it out), also where the snapshot was made by
an earlier request of the same software setting at another batch (vLLM's startup reserve
follows the batch), and too_big with the value given equals too_big without."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain import evaluate as ev
from app.domain import fleet
from tests.recommend.test_fast_paths import _context_for


@pytest.fixture
def catalog(shipped_catalog: Any) -> Any:
    gpus, offers, rules = shipped_catalog
    return list(gpus), offers, rules


# one snapshot, asked by requests that differ in batch only (the first makes it)
ASKED = [
    {"preset": "llama-3-70b", "task": "inference", "runtime": "vllm", "batch_size": b}
    for b in (1, 64, 256)
] + [{"preset": "llama-3-8b", "task": "inference", "batch_size": b} for b in (1, 4, 32)]


def test_a_misfits_reason_from_the_snapshots_memory_is_plans(catalog: Any) -> None:
    kept: fleet.Catalog | None = None
    out = 0
    for workload in ASKED:
        gpus, _, ctx = _context_for(workload, catalog, "balanced")
        if kept is None or workload["batch_size"] == 1:
            kept = fleet.Catalog(tuple(gpus), ctx.rules, ctx.calibration)
        snap = fleet.snapshot(kept, ctx)
        for i, gpu in enumerate(snap.gpus):
            got = fleet.one_device_misfit(snap, ctx, i)
            if got is None:
                continue
            assert got == ev.plan(gpu, ctx), (workload, gpu.slug)
            v = snap.variants[snap.variant[i]]
            key = (ctx.work.precision, v[0], (), None, None)
            run = ev.job_variant(ctx, key)
            assert float(snap.avail[i]) == ev.usable_gb(gpu, run)
            total = ev.variant_memory(ctx, key, run, 1, v[1], v[2]).total
            assert ev.too_big(gpu, ctx, run, total, 1) == got
            out += 1
    assert out  # the 70B misses every one-device card (laptops, Macs that cannot hold it)

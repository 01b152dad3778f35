"""A catalog snapshot (fleet.snapshot, kept per catalog and software setting) holds each
card's usable memory; where the runtime reserves startup activations by the batch it deploys
(vLLM's sampler rows at --max-num-seqs b), another batch is another setting, so a request
never reads the usable memory of an earlier request's batch."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain import evaluate as ev
from app.domain import fleet
from app.domain.workload import WorkloadSpec
from app.recommend import schemas as s
from app.recommend import service


def _ctx(body: dict[str, Any], rules: Any) -> tuple[WorkloadSpec, ev.Context]:
    req = s.RecommendationRequest.model_validate(body)
    work, _ = service.resolve_workload(req.workload)
    return work, service._context(work, req, req.objective, rules, None)


def _fresh_usable(snap: fleet.Snapshot, ctx: ev.Context) -> dict[str, float]:
    out = {}
    for i, gpu in enumerate(snap.gpus):
        if snap.variant[i] < 0:
            continue
        v = snap.variants[snap.variant[i]]
        run = ev.job_variant(ctx, (ctx.work.precision, v[0], (), None, None))
        out[gpu.slug] = ev.usable_gb(gpu, run)
    return out


@pytest.mark.parametrize("first, second", [(1, 256), (256, 1)])
def test_a_later_batch_reads_its_own_usable_memory(
    shipped_catalog: Any, first: int, second: int
) -> None:
    gpus, _, rules = shipped_catalog
    catalog = fleet.Catalog(tuple(gpus), rules, None)
    body = {"workload": {"preset": "llama-3-8b", "task": "inference", "runtime": "vllm"}}
    _, a = _ctx({"workload": {**body["workload"], "batch_size": first}}, rules)
    _, b = _ctx({"workload": {**body["workload"], "batch_size": second}}, rules)
    fleet.snapshot(catalog, a)  # the earlier request's batch made the kept snapshot
    snap = fleet.snapshot(catalog, b)
    want = _fresh_usable(snap, b)
    got = {g.slug: float(snap.avail[i]) for i, g in enumerate(snap.gpus) if snap.variant[i] >= 0}
    assert got == pytest.approx(want, abs=1e-9)
    # the batch matters here: vLLM reserves more for 256 sequences than for one
    assert _fresh_usable(snap, a) != pytest.approx(want, abs=0.1)


def test_a_runtime_without_a_startup_rule_shares_one_snapshot_across_batches(
    shipped_catalog: Any,
) -> None:
    gpus, _, rules = shipped_catalog
    catalog = fleet.Catalog(tuple(gpus), rules, None)
    work = {"preset": "llama-3-8b", "task": "inference", "runtime": "llama.cpp"}
    _, a = _ctx({"workload": {**work, "batch_size": 1}}, rules)
    _, b = _ctx({"workload": {**work, "batch_size": 64}}, rules)
    assert fleet.snapshot(catalog, b) is fleet.snapshot(catalog, a)

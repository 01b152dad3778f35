"""Balanced's pick among a serving card's shapes (rank.best_per_card): a shape with idle
replicas (more than a concurrency load's users, Served.idle_replicas) is not picked over a
faster shape on no more GPUs whose replicas all carry load. At one user on exactly 2 × H100
SXM, two one-GPU copies (one with no request to run) had won on $0.06/h less over one
tensor-parallel copy 1.4× faster."""

from __future__ import annotations

import dataclasses

from app.domain import evaluate as ev
from app.domain import rank
from app.domain.workload import ServingSpec, WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import H100, LLAMA3_8B, RULES

TABLE = load_efficiency()


def _ctx(spec: ServingSpec) -> ev.Context:
    work = WorkloadSpec(
        task="serving", model=LLAMA3_8B, runtime="vllm", efficiency=TABLE, serving=spec
    )
    return ev.Context(work=work, rules=RULES, limits=ev.Limits(exact_gpus=2))


def _shapes(spec: ServingSpec) -> dict[tuple[int, int], rank.Candidate]:
    """Exactly 2 H100s serving Llama 3 8B: (replicas, GPUs per replica) → its candidate."""
    ctx = _ctx(spec)
    planned = ev.plan(H100, ctx)
    assert not isinstance(planned, ev.Exclusion)
    out = {}
    for r in (ev.evaluate(c, ctx) for c in planned):
        if r.ok and r.serving is not None and r.serving.result.config.weight_precision == "bf16":
            c = r.serving.result.config
            out[(c.replicas, c.gpus_per_replica)] = rank.Candidate.of(r)
    return out


def _priced(c: rank.Candidate, usd_per_hour: float, itl_ms: float | None = None) -> rank.Candidate:
    """``c`` at the hour the shipped cudo instances charge (and, where given, another ITL)."""
    s = c.serving
    assert s is not None
    result = s.result if itl_ms is None else dataclasses.replace(s.result, itl_ms=itl_ms)
    served = dataclasses.replace(
        s, price=dataclasses.replace(s.price, usd_per_hour=usd_per_hour), result=result
    )
    return dataclasses.replace(c, serving=served)


ONE_USER = ServingSpec(1000, 300, concurrent_requests=1)


def test_one_user_two_copies_have_an_idle_replica_the_split_copy_none() -> None:
    got = _shapes(ONE_USER)
    copies, split = got[(2, 1)], got[(1, 2)]
    assert copies.serving is not None and split.serving is not None
    assert copies.serving.idle_replicas == 1 and split.serving.idle_replicas == 0
    assert split.serving.speed > 1.2 * copies.serving.speed  # tensor parallel decodes faster
    # a rate load's arrivals reach every replica: none idle
    rate = _shapes(ServingSpec(1000, 300, requests_per_s=0.5))
    assert all(c.serving is not None and c.serving.idle_replicas == 0 for c in rate.values())


def test_balanced_takes_the_faster_split_copy_over_an_idle_replica() -> None:
    got = _shapes(ONE_USER)
    # cudo: two 1-GPU instances at $1.8214/h, or one 2-GPU instance at $3.7056/h
    copies, split = _priced(got[(2, 1)], 3.6428), _priced(got[(1, 2)], 3.7056)
    ((chosen, rest),) = rank.best_per_card([copies, split], "balanced")
    assert chosen is split and rest == [copies]  # the copies stay, as the alternative
    # cheapest ranks the hour, as asked; fastest and best value took the split copy already
    assert rank.best_per_card([copies, split], "cheapest")[0][0] is copies
    assert rank.best_per_card([copies, split], "fastest")[0][0] is split
    assert rank.best_per_card([copies, split], "best_value")[0][0] is split


def test_an_idle_replica_shape_that_is_faster_still_wins() -> None:
    got = _shapes(ONE_USER)
    copies = _priced(got[(2, 1)], 3.6428)
    assert copies.serving is not None and copies.serving.result.itl_ms is not None
    # a split slower than one GPU alone (a layer split, a host-bound small model)
    slow_split = _priced(got[(1, 2)], 3.7056, itl_ms=1.2 * copies.serving.result.itl_ms)
    assert rank.best_per_card([copies, slow_split], "balanced")[0][0] is copies

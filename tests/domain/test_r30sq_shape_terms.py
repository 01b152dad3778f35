"""A serving shape's terms (serving.ShapeTerms: the runtime on the card, the memory plan,
the replica's step function, its points at saturation) are worked out once for all its
replica counts; each count's answer is the one worked out from scratch, field for field, at
a rate far beyond the card (every count saturated), at one it carries, under a closed-loop
load, and where the weights leave no room. Terms made for another shape or load are refused.
serving_step.evaluate_card, which shares them between the counts of a card, answers what
evaluating each configuration alone answers."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import evaluate as ev
from app.domain import serving as sv
from app.domain import serving_step
from tests.domain.fixtures import A100, H100, RTX4090
from tests.domain.test_serving import LLAMA8, LLAMA70, _context, cfg, profile

LOADS = [
    sv.ServingLoad(1000, 300, requests_per_s=100000.0),  # beyond every count
    sv.ServingLoad(1000, 300, requests_per_s=2.0),
    sv.ServingLoad(2000, 200, concurrent_requests=64.0),
    sv.ServingLoad(1000, 300, concurrent_requests=3.0, cached_prompt_tokens=500),
]


def _fresh(gpu, model, c, load, rt, **kw) -> sv.ServingResult:
    return sv.evaluate(gpu, model, c, load, runtime=rt, usable_gb=gpu.memory_gb, **kw)


@pytest.mark.parametrize("load", LOADS)
@pytest.mark.parametrize(
    ("gpu", "model", "tp"), [(H100, LLAMA8, 1), (A100, LLAMA70, 4), (RTX4090, LLAMA70, 1)]
)
def test_each_replica_count_from_shared_terms_is_the_count_alone(gpu, model, tp, load) -> None:
    rt = profile("vllm", gpu)
    terms = sv.ShapeTerms(gpu, model, cfg(tp), load, rt, gpu.memory_gb)
    for r in (1, 2, 3, 8, 64):
        for kw in ({}, {"saturation": False}, {"with_curve": True}):
            shared = _fresh(gpu, model, cfg(tp, r), load, rt, terms=terms, **kw)
            assert shared == _fresh(gpu, model, cfg(tp, r), load, rt, **kw)
    # one of them does not fit: the 70B on one 24 GB card
    if model is LLAMA70 and tp == 1:
        assert not _fresh(gpu, model, cfg(tp, 2), load, rt, terms=terms).fits


def test_terms_made_for_another_shape_or_load_are_refused() -> None:
    rt = profile("vllm", H100)
    load = LOADS[1]
    terms = sv.ShapeTerms(H100, LLAMA8, cfg(1), load, rt, H100.memory_gb)
    with pytest.raises(ValueError, match="another shape or load"):
        _fresh(H100, LLAMA8, cfg(2), load, rt, terms=terms)
    with pytest.raises(ValueError, match="another shape or load"):
        _fresh(H100, LLAMA8, cfg(1, kv="fp8"), load, rt, terms=terms)
    longer = dataclasses.replace(load, output_tokens=600)
    with pytest.raises(ValueError, match="another shape or load"):
        _fresh(H100, LLAMA8, cfg(1), longer, rt, terms=terms)
    # another rate or count of clients is what the terms are shared across
    faster = dataclasses.replace(load, requests_per_s=5.0)
    assert _fresh(H100, LLAMA8, cfg(1, 4), faster, rt, terms=terms) == _fresh(
        H100, LLAMA8, cfg(1, 4), faster, rt
    )


@pytest.mark.parametrize("users", [50.0, 5000.0])
@pytest.mark.parametrize("every", [True, False])
def test_a_cards_counts_evaluated_together_are_each_evaluated_alone(users, every) -> None:
    ctx = _context(LLAMA8, 2000.0, 60.0, users=users, max_gpus=8)
    for gpu in (H100, A100, RTX4090):
        planned = ev.plan(gpu, ctx)
        assert not isinstance(planned, ev.Exclusion)
        together = serving_step.evaluate_card(planned, ctx, every=every)
        alone = {id(r.config): r for r in (serving_step.evaluate(c, ctx) for c in planned)}
        assert together
        for r in together:
            want = alone[id(r.config)]
            assert r.exclusion == want.exclusion and r.serving == want.serving
            assert r.cost == want.cost and r.perf == want.perf

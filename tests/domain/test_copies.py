"""One-job LLM inference asked as copies (workload.extra_gpus 'copies'): n GPUs as c copies of
n ÷ c GPUs side by side, each on its share of the batch, where that is faster than one replica
over all n (evaluate.copies_of)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from app.domain import evaluate as ev
from app.domain import perf, rank
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import H100, LLAMA3_8B, RESNET50, RULES, llm_inference

# A 70B-sized decoder: two H100s hold it (test_evaluate's plan test)
BIG = replace(LLAMA3_8B, params=70e9, layers=80, hidden_size=8192)


def _ctx(work: WorkloadSpec, *, copies: bool, **limits: object) -> ev.Context:
    return ev.Context(
        work=work,
        rules=RULES,
        limits=ev.Limits(objective="fastest", **limits),  # type: ignore[arg-type]
        copies=copies,
    )


def _at(planned: list[ev.Configuration] | ev.Exclusion, n: int) -> ev.Configuration:
    assert isinstance(planned, list)
    return next(c for c in planned if c.num_gpus == n)


def test_eight_gpus_as_four_copies_of_two_give_four_times_one_copy() -> None:
    work = llm_inference(model=BIG, batch_size=8)
    ctx = _ctx(work, copies=True)
    config = replace(_at(ev.plan(H100, ctx), 8), copies=4)  # two GPUs hold a copy: 4 on 8
    res = ev.evaluate(config, ctx)
    assert res.ok and res.perf is not None and res.memory is not None
    # one copy: a quarter of the batch on two GPUs, evaluated as any two-GPU replica
    share = llm_inference(model=BIG, batch_size=2)
    one = ev.evaluate(ev.Configuration(H100, 2), _ctx(share, copies=False))
    assert one.ok and one.perf is not None and one.memory is not None
    assert res.perf.throughput == pytest.approx(4 * one.perf.throughput, rel=1e-12)
    assert res.memory.total == pytest.approx(one.memory.total, rel=1e-12)  # per GPU: a copy's
    assert res.perf.latency_ms == pytest.approx(one.perf.latency_ms, rel=1e-12)
    assert res.perf.num_gpus == 8 and res.perf.copies == 4
    assert res.perf.parallelism.startswith("4 copies × 2 GPUs (tensor parallel)")
    assert "batch 2" in res.perf.parallelism
    # priced as eight GPUs, as the one-replica row on eight is
    split = ev.evaluate(_at(ev.plan(H100, _ctx(work, copies=False)), 8), _ctx(work, copies=False))
    assert split.cost is not None and res.cost is not None
    assert res.cost.hourly_usd == split.cost.hourly_usd
    assert res.cost.purchase_usd == split.cost.purchase_usd


def test_an_8b_model_on_eight_gpus_runs_faster_as_some_copies_than_as_one_replica() -> None:
    work = llm_inference(batch_size=32)
    split = ev.evaluate(_at(ev.plan(H100, _ctx(work, copies=False)), 8), _ctx(work, copies=False))
    ctx = _ctx(work, copies=True)
    copies = ev.evaluate(_at(ev.plan(H100, ctx), 8), ctx)
    assert split.perf is not None and copies.perf is not None
    # eager PyTorch at batch 32: copies of two tensor-parallel GPUs at batch 8 beat one
    # replica over eight (3,252 tokens/s) and eight copies of one at batch 4, which read the
    # whole 16 GB of weights per GPU each step (memory bound)
    assert 1 < copies.perf.copies < 8
    assert copies.perf.throughput > split.perf.throughput


@pytest.mark.parametrize("model", [LLAMA3_8B, BIG])
@pytest.mark.parametrize("batch", [1, 2, 8, 32, 128])
def test_copies_are_taken_only_where_faster_than_one_replica(model: object, batch: int) -> None:
    work = llm_inference(model=model, batch_size=batch)
    ctx = _ctx(work, copies=True)
    planned = ev.plan(H100, ctx)
    assert isinstance(planned, list)
    for config in planned:
        n = config.num_gpus
        assert 1 <= config.copies <= min(n, batch) and n % config.copies == 0
        got = ev.evaluate(config, ctx)
        assert got.ok and got.perf is not None
        # every other layout of n GPUs that holds its share is no faster
        for c in range(1, min(n, batch) + 1):
            if n % c or c == config.copies:
                continue
            other = ev.evaluate(replace(config, copies=c), ctx)
            if other.ok and other.perf is not None:
                assert other.perf.throughput <= got.perf.throughput


def test_a_small_batch_on_nvswitch_stays_one_replica() -> None:
    # copies read every weight once per copy per step: at batch 8 a 70B model's 8-GPU
    # tensor-parallel replica reads each weight once, four copies of two GPUs four times
    work = llm_inference(model=BIG, batch_size=8)
    ctx = _ctx(work, copies=True)
    config = _at(ev.plan(H100, ctx), 8)
    rates = {}
    for c in (1, 2, 4, 8):
        r = ev.evaluate(replace(config, copies=c), ctx)
        if r.ok and r.perf is not None:
            rates[c] = r.perf.throughput
    assert rates[1] > rates[4]
    assert config.copies == max(rates, key=lambda c: (rates[c], -c))


def test_a_copy_gets_at_least_one_sample_and_time_to_finish_is_the_total_rate() -> None:
    work = llm_inference(batch_size=2, dataset_samples=10_000)
    ctx = _ctx(work, copies=True)
    config = _at(ev.plan(H100, ctx), 8)
    assert config.copies in (1, 2)  # two samples: never more than two copies
    config = replace(config, copies=2)
    res = ev.evaluate(config, ctx)
    assert res.perf is not None and res.cost is not None
    assert res.perf.parallelism.startswith("2 copies × 4 GPUs")
    tokens = 10_000 * work.output_tokens
    assert res.cost.time_to_finish_h == pytest.approx(tokens / res.perf.throughput / 3600)


def test_the_fewest_gpus_that_hold_the_job_run_it_as_one_replica_either_way() -> None:
    work = llm_inference(model=BIG, batch_size=8)
    with_copies = ev.plan(H100, _ctx(work, copies=True))
    assert isinstance(with_copies, list)
    assert _at(with_copies, 2).copies == 1
    plain = ev.plan(H100, _ctx(work, copies=False))
    assert isinstance(plain, list) and all(c.copies == 1 for c in plain)


def test_copies_leave_models_other_than_decoders_as_they_were() -> None:
    # a CNN's extra GPUs already run as copies on shares of the batch (perf.split_step_s)
    work = WorkloadSpec(task="inference", model=RESNET50, batch_size=64)
    a = ev.plan(H100, _ctx(work, copies=True))
    b = ev.plan(H100, _ctx(work, copies=False))
    assert isinstance(a, list) and isinstance(b, list)
    assert [c.copies for c in a] == [1] * len(a)
    for x, y in zip(a, b, strict=True):
        ra = ev.evaluate(x, _ctx(work, copies=True))
        rb = ev.evaluate(y, _ctx(work, copies=False))
        assert ra.perf is not None and rb.perf is not None
        assert ra.perf.throughput == rb.perf.throughput


@pytest.mark.parametrize("batch", [1, 3, 8, 32])
def test_bounds_hold_copies_from_above(batch: int) -> None:
    work = llm_inference(model=BIG, batch_size=batch)
    ctx = _ctx(work, copies=True)
    planned = ev.plan(H100, ctx)
    assert isinstance(planned, list)
    loose = ev.loose_bounds(planned, ctx)
    for c, lb in zip(planned, loose, strict=True):
        est = ev.evaluate(c, ctx)
        assert est.perf is not None
        exact = ev.throughput_bound(c, ctx)
        assert exact == est.perf.throughput
        assert lb == ev.throughput_bound(c, ctx, loose=True)  # the arrays, to the last bit
        assert lb >= exact * (1 - 1e-12)
    if any(c.copies > 1 for c in planned):
        # the loose card bound reads every count: a copy's share need not grow with it
        assert ev.widest(planned) == planned


def test_the_row_names_the_layout_and_no_link_between_copies() -> None:
    work = llm_inference(model=BIG, batch_size=8)
    ctx = _ctx(work, copies=True)
    res = ev.evaluate(replace(_at(ev.plan(H100, ctx), 8), copies=4), ctx)
    c = rank.Candidate.of(res)
    lines = rank.explain(c, 1, c, "fastest")
    said = next(x for x in lines if x.startswith("Runs as 4 copies × 2 GPUs (tensor parallel)"))
    assert "nothing crosses between copies" in said
    assert not any(x.startswith("Split over") for x in lines)


def test_as_copies_scales_a_copy_by_the_batch_over_its_share() -> None:
    one = perf.estimate(H100, llm_inference(batch_size=3), num_gpus=1)
    both = perf.as_copies(one, 3, 8, one.step_time_s * 2, "tensor")
    # 8 samples on 3 copies: shares of 3, 3 and 2; done when a share of 3 is
    assert both.throughput == pytest.approx(one.throughput * 8 / 3)
    assert both.num_gpus == 3 and math.isclose(both.scaling_efficiency, 2 / 3)
    assert both.parallelism == "3 copies × 1 GPU, each on 1/3 of the samples at batch 3"


def test_a_copy_of_one_gpu_carries_no_multi_gpu_widening() -> None:
    work = llm_inference(batch_size=32)
    ctx = _ctx(work, copies=True)
    res = ev.evaluate(replace(_at(ev.plan(H100, ctx), 8), copies=8), ctx)
    split_ctx = _ctx(work, copies=False)
    split = ev.evaluate(_at(ev.plan(H100, split_ctx), 8), split_ctx)
    _, _, basis = rank.uncertainty(rank.Candidate.of(res))
    _, _, split_basis = rank.uncertainty(rank.Candidate.of(split))
    assert "multi-GPU scaling" in split_basis
    assert "multi-GPU scaling" not in basis

"""Offline inference over a dataset spreads over copies: each copy (a process, an HF pipeline's
batch_size) runs the stated batch on its own shard, so n copies give ~n× the throughput at the
same cost per sample (evaluate.shard_copies), on as many instances as they need
(cost.price_copies). Whisper at batch 16 over 6 M windows on 8 H100s had been 8 copies at
batch 2, 40 h against 47 h on one, at 7× the job cost."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain.workload import WorkloadSpec
from tests.domain.fixtures import BERT_LARGE, H100, RTX4090, RULES
from tests.domain.test_batch_copies import on

USAGE = costs.Usage()
POLICY = costs.RentalPolicy()


def _work(**kw: object) -> WorkloadSpec:
    return WorkloadSpec(task="inference", model=BERT_LARGE, precision="fp16", **kw)  # type: ignore[arg-type]


def _on(work: WorkloadSpec, n: int, offers: object = None) -> ev.ConfigResult:
    return on(work, n, H100, offers)


def test_copies_over_a_dataset_each_run_the_stated_batch_and_multiply_the_speed() -> None:
    work = _work(batch_size=16, seq_len=128, dataset_samples=6e6)
    one, eight = _on(work, 1), _on(work, 8)
    assert one.perf is not None and eight.perf is not None
    assert one.memory is not None and eight.memory is not None
    # each copy holds the model and the whole batch of 16, not 2
    assert eight.memory.total == pytest.approx(one.memory.total, rel=1e-12)
    assert eight.perf.throughput == pytest.approx(8 * one.perf.throughput, rel=1e-9)
    assert eight.perf.scaling_efficiency == pytest.approx(1.0)
    assert eight.perf.parallelism == "8 copies × 1 GPU, each at batch 16 on 1/8 of the samples"
    assert one.cost is not None and eight.cost is not None
    assert one.cost.time_to_finish_h is not None and eight.cost.time_to_finish_h is not None
    assert eight.cost.time_to_finish_h == pytest.approx(one.cost.time_to_finish_h / 8, rel=1e-9)
    # the ranking's bounds stay above it
    ctx = ev.Context(work=work, rules=RULES, limits=ev.Limits(objective="fastest", exact_gpus=8))
    config = ev.Configuration(H100, 8)
    assert ev.throughput_bound(config, ctx) >= eight.perf.throughput * (1 - 1e-12)
    assert ev.throughput_bound(config, ctx, loose=True) >= eight.perf.throughput * (1 - 1e-12)


def test_one_batch_without_a_dataset_is_still_split_over_the_copies() -> None:
    work = _work(batch_size=16, seq_len=128)  # no dataset: one batch, its latency
    eight = _on(work, 8)
    assert eight.perf is not None
    assert not ev.shard_copies(work) and ev.copy_batch(work, 8) == 2
    assert "at batch 2" in eight.perf.parallelism
    assert ev.copy_batch(_work(batch_size=16, dataset_samples=1e6), 8) == 16


def test_a_dataset_of_fewer_batches_than_copies_keeps_only_those_busy() -> None:
    work = _work(batch_size=16, seq_len=128, dataset_samples=32)
    assert ev.busy_copies(work, 8) == 2
    eight, one = _on(work, 8), _on(work, 1)
    assert eight.perf is not None and one.perf is not None
    assert eight.perf.throughput == pytest.approx(2 * one.perf.throughput, rel=1e-9)
    assert "2 of them busy" in eight.perf.parallelism


def test_a_batch_no_gpu_holds_is_not_rescued_by_copies_over_a_dataset() -> None:
    work = _work(batch_size=1 << 16, seq_len=512, dataset_samples=1e9)
    planned = ev.plan(RTX4090, ev.Context(work=work, rules=RULES, limits=ev.Limits()))
    assert isinstance(planned, ev.Exclusion) and planned.code == "does_not_fit"
    assert "a smaller batch_size shrinks each copy" in planned.reason


def _offer(gpus: int, usd: float, tier: str = "on-demand") -> costs.CloudOffer:
    return costs.CloudOffer("acme", f"{gpus}x", gpus, usd, None, tier, "2026-01", "test")


def test_copies_past_one_instance_rent_several_side_by_side_at_a_flat_job_cost() -> None:
    offers = {H100.slug: costs.GpuOffers(cloud=(_offer(8, 16.0, "marketplace"),))}
    work = _work(batch_size=16, seq_len=128, dataset_samples=6e6)
    one, sixteen = _on(work, 1, offers), _on(work, 16, offers)
    assert one.cost is not None and sixteen.cost is not None
    assert sixteen.cost.hourly_usd == pytest.approx(32.0)  # two 8-GPU instances
    assert sixteen.pricing is not None and sixteen.pricing.rent is not None
    assert sixteen.pricing.rent.instances == 2
    note = sixteen.pricing.rent.note or ""
    assert "no cluster network needed" in note and "one cluster" not in note
    # one copy pays for a whole 8-GPU instance; sixteen use every GPU they pay for
    a, b = costs.job_cost(sixteen.cost, "rent"), costs.job_cost(one.cost, "rent")
    assert a is not None and b is not None
    # the run's cost is flat; each instance pays its own start-up (costs.RENT_STARTUP_H)
    start = costs.RENT_STARTUP_H
    assert a - 32.0 * start == pytest.approx((b - 16.0 * start) / 8, rel=1e-9)


def test_price_copies_books_any_tier_and_says_the_idle_gpus() -> None:
    got = costs.price_copies(
        costs.GpuOffers(cloud=(_offer(8, 16.0, "community"),)), 12, POLICY, USAGE
    )
    assert got.rent is not None and got.rent.instances == 2 and got.rent.gpus_used == 12
    assert "4 GPUs idle" in (got.rent.note or "")
    # one model over more GPUs than an instance has: said as the instance's size, not a price
    one = costs.price_configuration(costs.GpuOffers(cloud=(_offer(8, 16.0),)), 16, POLICY, USAGE)
    assert one.rent is None and one.rent_reason is not None
    assert "one instance has at most 8" in one.rent_reason


def test_training_keeps_its_global_batch() -> None:
    train = replace(_work(batch_size=16, seq_len=128, dataset_samples=1e6), task="training")
    assert not ev.batch_copies(train) and ev.copies_fill(train, 8) == 1.0

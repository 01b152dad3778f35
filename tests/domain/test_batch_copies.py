"""Inference of a model other than a decoder LLM (diffusion, CNNs, Whisper) runs extra GPUs as
copies side by side: diffusers, timm and torchvision have no tensor parallelism, so each GPU
holds the whole model and runs its share of the batch, and nothing crosses a link during a step
(evaluate.batch_copies). SDXL at batch 8 on 2 × RTX 4090 had been priced as one model split
over both (12.4 s of interconnect a batch, 57 % scaling) where one 4090 holds batch 4; batch 1
over a million images on 8 GPUs had been given 1/8 of the weights per GPU and no speed-up."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import evaluate as ev
from app.domain.gpu import GpuSpec
from app.domain.workload import ModelSpec, WorkloadSpec
from tests.domain.fixtures import RESNET50, RTX4090, RULES

# An SDXL-sized diffusion model: a 2.6B UNet, 50 passes an image
UNET = replace(
    RESNET50, family="diffusion", params=2.6e9, gflops_per_sample=348532.0,
    passes_per_sample=50, input_size=1024,
)  # fmt: skip


def _work(model: ModelSpec = UNET, **kw: object) -> WorkloadSpec:
    return WorkloadSpec(task="inference", model=model, precision="fp16", **kw)  # type: ignore[arg-type]


def _ctx(work: WorkloadSpec, offers: object = None, **limits: object) -> ev.Context:
    return ev.Context(
        work=work,
        rules=RULES,
        limits=ev.Limits(objective="fastest", **limits),  # type: ignore[arg-type]
        offers=offers,  # type: ignore[arg-type]
    )


def on(
    work: WorkloadSpec, n: int, gpu: GpuSpec = RTX4090, offers: object = None
) -> ev.ConfigResult:
    """``work`` evaluated on exactly ``n`` of ``gpu`` (``offers``: the context's, if any)."""
    ctx = _ctx(work, offers, exact_gpus=n)
    planned = ev.plan(gpu, ctx)
    assert isinstance(planned, list), planned
    (config,) = [c for c in planned if c.num_gpus == n]
    res = ev.evaluate(config, ctx)
    assert res.ok and res.perf is not None and res.memory is not None, res.exclusion
    return res


def _fewest_batch_apart() -> int:
    """The smallest batch one RTX 4090 does not hold whole but holds half of."""
    for b in (2, 4, 8, 16, 32, 64, 128):
        mem = ev.memory_breakdown(_work(batch_size=b))
        if mem.total > ev.usable_gb(RTX4090, _work(batch_size=b)):
            return b
    raise AssertionError("no batch outgrows one card")


def test_a_batch_one_gpu_cannot_hold_runs_as_copies_on_two_not_as_one_split_model() -> None:
    b = _fewest_batch_apart()
    two = on(_work(batch_size=b), 2)
    half = on(_work(batch_size=b // 2), 1)
    assert two.perf is not None and half.perf is not None
    assert two.memory is not None and half.memory is not None
    assert two.perf.comm_s == 0.0 and two.perf.bottleneck != "interconnect"
    assert two.perf.copies == 2 and two.perf.parallelism.startswith("2 copies × 1 GPU")
    # each GPU holds a whole copy at half the batch: one card's memory at that batch
    assert two.memory.weights == pytest.approx(half.memory.weights, rel=1e-12)
    assert two.memory.total == pytest.approx(half.memory.total, rel=1e-12)
    # and gets through the batch as two such cards side by side
    assert two.perf.throughput == pytest.approx(2 * half.perf.throughput, rel=1e-9)


def test_batch_one_over_a_dataset_spreads_over_eight_copies_each_holding_the_model() -> None:
    work = _work(batch_size=1, dataset_samples=1e6)
    one, eight = on(work, 1), on(work, 8)
    assert one.perf is not None and eight.perf is not None
    assert one.memory is not None and eight.memory is not None
    # memory per GPU is one copy's (the weights were divided by 8: 0.65 GB of SDXL's 5.2)
    assert eight.memory.weights == pytest.approx(one.memory.weights, rel=1e-12)
    assert eight.memory.total == pytest.approx(one.memory.total, rel=1e-12)
    # every copy takes its own images: eight times the images a second, the same cost a job
    assert eight.perf.throughput == pytest.approx(8 * one.perf.throughput, rel=1e-9)
    assert eight.perf.scaling_efficiency == pytest.approx(1.0, rel=1e-9)
    assert eight.cost is not None and one.cost is not None
    assert one.cost.time_to_finish_h is not None
    assert eight.cost.time_to_finish_h == pytest.approx(one.cost.time_to_finish_h / 8, rel=1e-9)
    # the throughput bound the ranking prunes with stays above it, tight and loose
    config = ev.Configuration(RTX4090, 8)
    ctx = _ctx(work, exact_gpus=8)
    assert ev.throughput_bound(config, ctx) >= eight.perf.throughput * (1 - 1e-12)
    assert ev.throughput_bound(config, ctx, loose=True) >= eight.perf.throughput * (1 - 1e-12)


def test_one_batch_of_one_on_eight_gpus_gains_nothing_and_says_the_others_idle() -> None:
    work = _work(batch_size=1)  # no dataset: one batch, one image
    one, eight = on(work, 1), on(work, 8)
    assert one.perf is not None and eight.perf is not None
    assert eight.perf.throughput == pytest.approx(one.perf.throughput, rel=1e-9)
    assert "1 of them busy" in eight.perf.parallelism


def test_a_model_one_gpu_cannot_hold_at_batch_1_is_not_split_over_several() -> None:
    big = replace(UNET, params=20e9)  # 40 GB of 16-bit weights: no 24 GB card holds a copy
    planned = ev.plan(RTX4090, _ctx(_work(big, batch_size=1)))
    assert isinstance(planned, ev.Exclusion)
    assert planned.code == "does_not_fit"
    assert "extra GPUs run whole copies" in planned.reason
    # at batch 1 no copy is smaller: one figure, not one GPU's beside a copy's
    assert planned.reason.count(" GiB") == 2, planned.reason  # the need and the usable
    assert "even when sharded" not in planned.reason


def test_a_dataset_smaller_than_the_copies_keeps_only_that_many_busy() -> None:
    """Two images on eight copies at batch 1: two copies work, not eight (716 images/s where
    one card gives ~90 had been said for a 2-image job)."""
    one = on(_work(batch_size=1, dataset_samples=1000), 1)
    small = on(_work(batch_size=1, dataset_samples=2), 8)
    large = on(_work(batch_size=1, dataset_samples=1000), 8)
    assert one.perf is not None and small.perf is not None and large.perf is not None
    assert small.perf.throughput == pytest.approx(2 * one.perf.throughput, rel=0.02)
    assert large.perf.throughput == pytest.approx(8 * one.perf.throughput, rel=0.02)
    assert ev.copies_fill(_work(batch_size=1, dataset_samples=2), 8) == 2.0


def test_copies_a_small_dataset_leaves_idle_say_so() -> None:
    small = on(_work(batch_size=1, dataset_samples=2), 8)
    assert small.perf is not None
    assert (
        small.perf.parallelism == "8 copies × 1 GPU at batch 1, 2 of them busy (the dataset's size)"
    )

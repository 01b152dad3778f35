"""workload.megatron_layout as the API takes it: resolved onto WorkloadSpec.megatron and
priced by perf.estimate (a stated pipeline adds Narayanan et al.'s bubble)."""

from __future__ import annotations

from app.domain import perf
from app.domain.megatron import MegatronLayout
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from tests.domain.fixtures import H100

BASE = {"preset": "llama-3-8b", "task": "training", "precision": "bf16", "runtime": "megatron"}


def _resolved(**layout: int) -> perf.WorkloadSpec:
    w = s.WorkloadIn.model_validate(
        {**BASE, "batch_size": 8, **({"megatron_layout": layout} if layout else {})}
    )
    return resolve_workload(w)[0]


def test_the_layout_maps_onto_the_workload_spec() -> None:
    work = _resolved(tensor_parallel=4, pipeline_parallel=2, virtual_stages=2, microbatches=4)
    assert work.megatron == MegatronLayout(tp=4, pp=2, vp=2, microbatches=4)
    assert _resolved().megatron is None


def test_a_stated_pipeline_adds_the_bubble_the_default_layout_does_not() -> None:
    # a job one GPU holds: Megatron's default is pure data parallel (TP1 PP1). The stated
    # pipeline's micro-batches follow Megatron's rule: a global batch of 8 × 4 accumulation
    # steps, micro-batch 1 (8 sequences on 8 GPUs), DP 4 -> m = 32 / (1 × 4) = 8
    kw = {"num_gpus": 8, "sharded": False, "accumulation_steps": 4}
    default = perf.estimate(H100, _resolved(), **kw)  # type: ignore[arg-type]
    piped = perf.estimate(H100, _resolved(pipeline_parallel=2), **kw)  # type: ignore[arg-type]
    assert "TP1 PP1" in default.parallelism and "bubble" not in default.parallelism
    # Narayanan et al. 2021: (p - 1) / (v * m) = 1/8 of the compute
    assert "TP1 PP2" in piped.parallelism and "pipeline bubble 12%" in piped.parallelism
    # the bubble costs time: the same pipeline with (nearly) no bubble runs faster
    full = perf.estimate(H100, _resolved(pipeline_parallel=2, microbatches=1 << 20), **kw)  # type: ignore[arg-type]
    assert piped.throughput < full.throughput

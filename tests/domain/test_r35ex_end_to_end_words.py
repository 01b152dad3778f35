"""An LLM inference row's "Expected" rate says it is end to end (issue 23, 2026-12-06): the rate
is the whole request's, prompt and generation together, and "Expected 16.0 tokens/s" for
Llama 3 70B Q4_K_M on two RTX 3090s had read as the 18.3 tokens/s llama-bench's tg reports. The
verdict already said so of the pick (summary._generating); now every row's line does. Rows of
other jobs are unchanged."""

from __future__ import annotations

import pytest

from app.domain import cost, perf, rank
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec, memory_breakdown
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import RESNET50, RTX4090
from tests.domain.fixtures import llm_inference as _llm

TABLE = load_efficiency()


def _cand(gpu: GpuSpec, work: WorkloadSpec) -> rank.Candidate:
    est = perf.estimate(gpu, work, num_gpus=1)
    return rank.Candidate(
        gpu=gpu,
        work=work,
        memory=memory_breakdown(work, num_gpus=1),
        available_gb=gpu.memory_gb,
        perf=est,
        cost=cost.estimate_cost(gpu, 1, est.throughput, 10.0),
    )


def _expected(c: rank.Candidate, objective: str) -> str:
    return next(x for x in rank.explain(c, 1, c, objective) if x.startswith("Expected "))


@pytest.mark.parametrize("objective", ["fastest", rank.UNRANKED])
def test_an_llm_inference_rate_is_said_to_be_end_to_end(objective: str) -> None:
    c = _cand(RTX4090, _llm(efficiency=TABLE, seq_len=512, output_tokens=128))
    p = c.perf
    assert p.ttft_ms and p.ms_per_token
    # the whole request's rate is below the decode rate: the words must tell them apart
    assert p.throughput < 1e3 / p.ms_per_token
    line = _expected(c, objective)
    assert line.startswith(f"Expected {rank._rate(p.throughput)} tokens/s end to end at ")


def test_a_cnn_row_keeps_its_words() -> None:
    work = WorkloadSpec(task="inference", model=RESNET50, precision="fp16", batch_size=64)
    line = _expected(_cand(RTX4090, work), "fastest")
    assert "end to end" not in line and line.startswith("Expected ")

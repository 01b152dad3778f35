"""A card whose only counts that hold an LLM by memory are counts the runtime's tensor
parallelism cannot split the model's heads over is out for the heads, and says so: Phi-4 (10 KV
heads) under vLLM on 16 GB cards fits by memory on 4 of them, which vLLM refuses, and the reason
had read "does not fit in 8 GPUs of 14.4 GiB usable even when sharded" (the fortieth session's
closing review left it)."""

from __future__ import annotations

import dataclasses

from app.catalog.loader import read_gpu_specs
from app.domain import evaluate as ev
from app.domain import llm_step
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR
from tests.domain.fixtures import RULES

GPUS = {g.slug: g for g in read_gpu_specs(DATA_DIR)}


def _phi4(runtime: str) -> ev.Context:
    body = {"preset": "phi-4", "task": "inference", "batch_size": 8, "runtime": runtime}
    work = service.resolve_workload(s.WorkloadIn.model_validate(body), DATA_DIR)[0]
    return ev.Context(work=work, rules=RULES)


def test_the_reason_names_the_heads_and_the_count_memory_allows() -> None:
    ctx = _phi4("vllm")
    # what the case rests on: 10 KV heads split over 2 GPUs, not over 4 or 8
    assert ctx.work.model.num_kv_heads == 10
    assert [llm_step.head_split_error(ctx.work.model, k) is None for k in (2, 4, 8)] == [
        True, False, False,
    ]  # fmt: skip
    out = ev.plan(GPUS["arc-a770-16gb"], ctx)
    assert isinstance(out, ev.Exclusion)
    assert out.code == "does_not_fit"
    assert "even when sharded" not in out.reason
    assert "4 GPUs of 14.4 GiB usable would hold it, but vLLM cannot split" in out.reason
    assert "10 KV heads" in out.reason
    assert "over 1 or 2 GPUs, which it can, it does not fit" in out.reason


def test_a_card_too_small_at_every_count_still_says_memory() -> None:
    # 8 GPUs of 7.2 GiB hold Phi-4 by memory: 4 GB cards hold it on none, and there the heads
    # are not why
    ctx = dataclasses.replace(_phi4("vllm"), limits=ev.Limits(max_gpus=4))
    out = ev.plan(GPUS["rtx-3070"], ctx)
    assert isinstance(out, ev.Exclusion)
    assert "KV heads" not in out.reason
    assert "even when sharded" in out.reason


def test_a_layer_split_runtime_has_no_such_rule() -> None:
    out = ev.plan(GPUS["arc-a770-16gb"], _phi4("llama.cpp"))
    assert not isinstance(out, ev.Exclusion)
    assert 4 in {c.num_gpus for c in out}

"""The margin the engine keeps is for micro-batches it picks (rev6 #9); a row inside it says
so (rev7 #5); fp8 training in a PyTorch program names the library it needs (rev6 #10)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import evaluate as ev
from app.domain.workload import MemoryBreakdown, ModelSpec, WorkloadSpec, memory_breakdown
from tests.domain.fixtures import H100, RESNET50, RTX4090, RULES

# google/vit-base-patch16-224 (data/workloads.yaml vit-b-16)
VIT_B16 = ModelSpec(
    family="vit",
    params=86_567_656,
    layers=12,
    hidden_size=768,
    num_heads=12,
    num_kv_heads=12,
    intermediate_size=3072,
    max_context=197,
    gflops_per_sample=35.12,
    input_size=224,
)


def _ctx(work: WorkloadSpec) -> ev.Context:
    return replace(
        ev.Context(work=work, rules=RULES, limits=ev.Limits(objective="fastest")),
        savers_allowed=frozenset(ev.SAVER_LABELS),
    )


def _resnet(batch: int, **kw: object) -> WorkloadSpec:
    return WorkloadSpec(
        task="training",
        model=RESNET50,
        precision="fp16",
        batch_size=batch,
        optimizer="sgd",
        **kw,  # type: ignore[arg-type]
    )


def _tight_batch() -> int:
    """A batch that fits one RTX 4090 with under ROOM of its usable memory free."""
    avail = ev.usable_gb(RTX4090)
    for batch in range(256, 1024, 4):
        spare = avail - memory_breakdown(_resnet(batch)).total
        if 0 < spare < ev.ROOM * avail:
            return batch
    raise AssertionError("no batch inside the margin")


def test_a_stated_batch_the_card_holds_runs_as_stated() -> None:
    batch = _tight_batch()
    planned = ev.plan(RTX4090, _ctx(_resnet(batch)))
    assert isinstance(planned, list)
    first = planned[0]
    assert first.num_gpus == 1
    # not split into accumulation steps for the margin (2 × 256 for a batch of 512 had been)
    assert first.micro_batch is None and "micro_batch" not in first.savers


def test_a_micro_batch_the_engine_picks_keeps_the_margin() -> None:
    # a batch the card does not hold whole: the engine's micro-batch leaves ROOM free
    big = _resnet(2048)
    planned = ev.plan(RTX4090, _ctx(big))
    assert isinstance(planned, list)
    one = next(c for c in planned if c.num_gpus == 1)
    assert one.micro_batch is not None
    res = ev.evaluate(one, _ctx(big))
    assert res.ok and res.memory is not None and res.available_gb is not None
    assert res.available_gb - res.memory.total >= ev.ROOM * res.available_gb


def test_the_tight_row_says_so_and_the_roomy_one_does_not() -> None:
    batch = _tight_batch()
    tight = ev.evaluate(ev.Configuration(RTX4090, 1), _ctx(_resnet(batch)))
    assert tight.ok
    said = [w for w in tight.warnings if w.startswith("a tight fit")]
    assert len(said) == 1
    assert "expandable_segments:True" in said[0] and "max_memory_allocated" in said[0]
    # the batch it runs whole can be halved for room, the same update
    assert f"run {batch // 2} samples a GPU with twice the accumulation steps" in said[0]
    roomy = ev.evaluate(ev.Configuration(RTX4090, 1), _ctx(_resnet(64)))
    assert roomy.ok and not any(w.startswith("a tight fit") for w in roomy.warnings)


def _mem(total: float, n: int = 1) -> MemoryBreakdown:
    return MemoryBreakdown(weights=total - 1.0, framework=1.0, num_gpus=n)


def test_tight_fit_threshold_is_the_engines_room() -> None:
    run = _resnet(8)
    avail = 24.0
    assert ev.tight_fit(run, _mem(avail * (1 - ev.ROOM) - 0.01), avail, "cuda") == ""
    words = ev.tight_fit(run, _mem(avail * (1 - ev.ROOM) + 0.01), avail, "cuda")
    assert words.startswith("a tight fit") and "NCCL" not in words
    assert "samples a GPU" not in words  # one sample a GPU: nothing to halve
    # several GPUs: NCCL's buffers too; another backend: no CUDA allocator words
    assert "NCCL" in ev.tight_fit(run, _mem(23.9), avail, "cuda", gpus=8)
    assert "PYTORCH_CUDA_ALLOC_CONF" not in ev.tight_fit(run, _mem(23.9), avail, "xpu")
    # an inference row says so in its own words (tests/domain/test_r40aud_tight_inference.py)
    infer = replace(run, task="inference")
    assert "micro-batch" not in ev.tight_fit(infer, _mem(23.9), avail, "cuda")


@pytest.mark.parametrize("runtime", ["pytorch", "torch-compile"])
def test_fp8_vit_training_in_pytorch_names_the_library(runtime: str) -> None:
    work = WorkloadSpec(
        task="training", model=VIT_B16, precision="fp8", batch_size=256, runtime=runtime
    )
    res = ev.evaluate(ev.Configuration(H100, 1), _ctx(work))
    assert res.ok and res.work is not None and res.work.precision == "fp8"
    assert ev.FP8_TRAINING_CAVEAT in res.warnings


def test_no_fp8_caveat_at_bf16_or_for_inference() -> None:
    bf16 = WorkloadSpec(task="training", model=VIT_B16, precision="bf16", batch_size=256)
    res = ev.evaluate(ev.Configuration(H100, 1), _ctx(bf16))
    assert res.ok and ev.FP8_TRAINING_CAVEAT not in res.warnings
    infer = WorkloadSpec(task="inference", model=VIT_B16, precision="fp8", batch_size=256)
    res = ev.evaluate(ev.Configuration(H100, 1), _ctx(infer))
    assert ev.FP8_TRAINING_CAVEAT not in res.warnings

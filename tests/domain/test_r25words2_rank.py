"""A row's words (review 25, words2): a training row run with activation checkpointing says
it is priced with full recomputation; the fp32 cast of a QLoRA job's embedding and LM head is
counted for the verdict and offers no smaller micro-batch than one; the JPEG-decode tip is
kept for images of ImageNet's kind."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import cost, perf, rank
from app.domain.gpu import GpuSpec
from app.domain.workload import ModelSpec, WorkloadSpec, memory_breakdown
from tests.domain.fixtures import H100, LLAMA3_8B, RTX4090


def _cand(gpu: GpuSpec, work: WorkloadSpec, **kw: object) -> rank.Candidate:
    est = perf.estimate(gpu, work, num_gpus=1)
    c = rank.Candidate(
        gpu=gpu,
        work=work,
        memory=memory_breakdown(work, num_gpus=1),
        available_gb=gpu.memory_gb,
        perf=est,
        cost=cost.estimate_cost(gpu, 1, est.throughput, 10.0),
    )
    return replace(c, **kw)  # type: ignore[arg-type]


def _llm(**kw: object) -> WorkloadSpec:
    base: dict[str, object] = dict(
        task="fine-tuning", model=LLAMA3_8B, precision="bf16", batch_size=8, seq_len=2048
    )
    base.update(kw)
    return WorkloadSpec(**base)  # type: ignore[arg-type]


# ---------------------------------------------------------------- activation recomputation


@pytest.mark.parametrize(("peft", "share"), [("none", "~33 %"), ("lora", "~50 %")])
def test_checkpointed_training_row_says_full_recomputation(peft: str, share: str) -> None:
    """gradient_checkpointing on (asked or the recipe's default): the row's speed counts one
    more forward a step, which neither its savers nor its explanation had said."""
    c = _cand(H100, _llm(peft=peft, gradient_checkpointing=True))
    fits = rank.explain(c, 1, c, "fastest")[0]
    assert f"priced with full activation recomputation ({share} more compute" in fits
    assert "Korthikanti et al. 2022" in fits


def test_row_without_checkpointing_says_no_recomputation() -> None:
    c = _cand(H100, _llm(peft="lora", gradient_checkpointing=False))
    assert "recomputation" not in rank.explain(c, 1, c, "fastest")[0]


# ---------------------------------------------------------------- QLoRA's fp32 cast


def test_kbit_upcast_counts_the_embedding_and_lm_head() -> None:
    untied = rank.kbit_upcast_gb("qlora", 128_256, 4_096, False)
    assert untied is not None and untied == pytest.approx(128_256 * 4_096 * 2 * 2.0 / 1e9)
    assert rank.kbit_upcast_gb("qlora", 128_256, 4_096, True) == pytest.approx(untied / 2)
    assert rank.kbit_upcast_gb("lora", 128_256, 4_096, False) is None
    assert rank.kbit_upcast_gb("qlora", None, 4_096, False) is None


def _cast_tip(c: rank.Candidate) -> str:
    return next(t for t in rank.tips(c, c.work) if "prepare_model_for_kbit_training" in t)


def test_cast_tip_offers_no_smaller_micro_batch_than_one() -> None:
    """Micro-batches of 1 (128 accumulation steps): "or take a smaller micro-batch" offered
    what does not exist."""
    work = _llm(peft="qlora", gradient_checkpointing=True, batch_size=128)
    tight = memory_breakdown(work, num_gpus=1).total + 0.5  # under the ~2.1 GB cast
    one = _cand(RTX4090, work, available_gb=tight, micro_batch=1, accumulation_steps=128)
    assert _cast_tip(one).endswith("(as the QLoRA paper's script does).")
    four = _cand(RTX4090, work, available_gb=tight, micro_batch=4, accumulation_steps=32)
    assert _cast_tip(four).endswith("or take a smaller micro-batch.")


# ---------------------------------------------------------------- the JPEG-decode tip


def _cnn(side: float) -> WorkloadSpec:
    model = ModelSpec(family="cnn", params=11e6, gflops_per_sample=0.56, input_size=side)
    return WorkloadSpec(
        task="training",
        model=model,
        precision="bf16",
        batch_size=128,
        dataset_samples=50_000,
        epochs=30,
    )


def _jpeg_tip(c: rank.Candidate) -> str | None:
    return next((t for t in rank.tips(c, c.work) if "JPEG" in t), None)


def test_cifar_size_images_get_no_jpeg_decode_tip() -> None:
    """A CIFAR-size CNN (32×32: the dataset sits in memory as one tensor) had been told to
    decode its JPEGs with DALI; the same network on ImageNet-size images keeps the tip."""
    small = _cand(RTX4090, _cnn(32))
    assert small.perf.throughput >= rank.INPUT_BOUND_IMAGES_S  # fast enough to have fired
    assert _jpeg_tip(small) is None
    assert _jpeg_tip(_cand(RTX4090, _cnn(rank.JPEG_SIDE_PX - 1))) is None
    photo = _jpeg_tip(_cand(RTX4090, _cnn(224)))
    assert photo is not None and "DALI" in photo

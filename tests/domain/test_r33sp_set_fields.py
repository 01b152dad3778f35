"""Facts the engine reads most are fields set once from the spec's own fields (r33sp), where
they had been properties: each must still be what its rule says, on every spec built and on
every copy ``dataclasses.replace`` makes with other fields (a field set at construction and
not redone on a copy would keep the original's value)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import cost, formats
from app.domain.workload import TRAINING_TASKS, ModelSpec, WorkloadSpec
from tests.domain.fixtures import LLAMA3_8B

RESNET = ModelSpec(family="cnn", params=25.6e6, gflops_per_sample=4.1)


@pytest.mark.parametrize("task", ["inference", "training", "fine-tuning", "serving"])
@pytest.mark.parametrize("model", [LLAMA3_8B, RESNET])
def test_a_jobs_task_facts_follow_its_task_and_model(task: str, model: ModelSpec) -> None:
    w = WorkloadSpec(task=task, model=model)
    assert w.training == (task in TRAINING_TASKS)
    assert w.is_llm_inference == (task == "inference" and model.family == "decoder")


def test_a_copy_with_another_task_or_model_has_its_own_facts() -> None:
    w = WorkloadSpec(task="inference", model=LLAMA3_8B)
    assert w.is_llm_inference and not w.training
    trains = replace(w, task="training")
    assert trains.training and not trains.is_llm_inference
    cnn = replace(w, model=RESNET)
    assert not cnn.is_llm_inference and not cnn.training
    assert w.with_flags(task="fine-tuning").training


def test_own_bits_follows_the_format_bits_and_runtime_of_each_copy() -> None:
    w = WorkloadSpec(task="inference", model=LLAMA3_8B, precision="int4")
    assert w.own_bits is None  # a named format's row applies, no whole-file mean
    gguf = replace(w, quantization="q4_k_m", weight_bits=4.85)
    assert gguf.own_bits == 4.85
    mlx = replace(w, quantization="none", runtime="mlx")
    assert mlx.own_bits == formats.runtime_bits("mlx", "int4")
    assert mlx.own_bits is not None
    assert replace(mlx, precision="bf16").own_bits is None
    # the size read from it moves with it
    assert gguf.weight_bytes != w.weight_bytes


def test_usage_hours_follow_each_copy() -> None:
    u = cost.Usage()
    assert u.hours == u.hours_per_week * cost.HOURS_PER_YEAR_WEEKS * u.years
    half = replace(u, years=1.5)
    assert half.hours == pytest.approx(u.hours / 2)
    # not part of what makes two usages the same (a price table is found by its usage)
    assert half == cost.Usage(years=1.5) and hash(half) == hash(cost.Usage(years=1.5))


def test_a_pricings_purchase_and_known_price_follow_each_copy() -> None:
    card = cost.PurchaseOffer(1000.0, "new", "2026-09", "shop")
    p = cost.Pricing(rent=None, buy=card, num_gpus=2, usage=cost.Usage())
    assert p.price_known and p.purchase_usd == 2000.0
    assert replace(p, bought=8).purchase_usd == 8000.0  # a server at a time
    none = replace(p, buy=None)
    assert not none.price_known and none.purchase_usd is None

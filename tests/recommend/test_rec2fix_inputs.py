"""Inputs the engine cannot use are said: a fractional dataset is refused naming the field, a
seq_len a ViT does not read and a lora_rank a full fine-tune does not use are warned, and
training past a language model's context is refused as inference is."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from app.errors import InvalidInput, field_path
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload


def _resolve(**workload: Any) -> list[str]:
    _, warnings = resolve_workload(s.WorkloadIn.model_validate(workload))
    return warnings


@pytest.mark.parametrize("samples", [1.5, 0.5, "1.5"])
def test_a_fractional_dataset_is_refused_naming_the_field(samples: Any) -> None:
    # 1.5 had been answered as "1.5 samples × 90 epochs"
    body = {"workload": {"preset": "resnet-50", "task": "training", "dataset_samples": samples}}
    with pytest.raises(ValidationError) as e:
        s.RecommendationRequest.model_validate(body)
    (err,) = e.value.errors()
    assert field_path(err["loc"], "body") == "workload.dataset_samples"
    assert "whole number" in err["msg"]


def test_whole_datasets_still_read_as_written() -> None:
    for samples, want in ((1_281_167, 1_281_167), (1281167.0, 1_281_167), ("1.28M", 1.28e6)):
        w = s.WorkloadIn.model_validate({"preset": "resnet-50", "dataset_samples": samples})
        assert w.dataset_samples == want


def test_seq_len_on_a_vision_transformer_is_warned_not_dropped() -> None:
    warnings = _resolve(preset="vit-b-16", task="training", seq_len=4096)
    assert any(x.startswith("seq_len does not apply to a vision transformer") for x in warnings)
    assert not any("seq_len" in x for x in _resolve(preset="vit-b-16", task="training"))
    cnn = _resolve(preset="resnet-50", task="training", seq_len=4096)
    assert any(x.startswith("seq_len does not apply to a CNN") for x in cnn)


def test_lora_rank_without_adapters_is_warned() -> None:
    said = "lora_rank only applies to peft 'lora' or 'qlora'; ignored"
    full = _resolve(preset="llama-3.1-8b", task="fine-tuning", peft="none", lora_rank=64)
    assert said in full
    lora = _resolve(preset="llama-3.1-8b", task="fine-tuning", peft="lora", lora_rank=64)
    assert said not in lora


@pytest.mark.parametrize("task", ["fine-tuning", "training"])
def test_training_past_the_context_is_refused_naming_seq_len(task: str) -> None:
    # "estimated anyway", it had answered empty with nothing to try
    with pytest.raises(InvalidInput) as e:
        _resolve(preset="llama-3.1-8b", task=task, peft="lora" if task == "fine-tuning" else None,
                 seq_len=262_144)  # fmt: skip
    assert e.value.field == "workload.seq_len"
    assert "131,072" in e.value.message and "262,144" in e.value.message
    # at the context it is a job; a context extension states its own context
    _resolve(preset="llama-3.1-8b", task=task, seq_len=131_072)
    _resolve(preset="llama-3.1-8b", task=task, seq_len=262_144, model={"max_context": 262_144})

"""A fine-tuning practitioner's review (round 25, ft), the request side: yes/no fields take
true/false (not "yes" nor 1), the default fine-tuning dataset is whole samples and said at
the top, every fine-tuning sample counts as a full sequence (said), a LoRA rank as wide as a
target layer is warned of, the LoRA target modules are said, and the checkpointing field states the rows' rule."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from app.domain.workload import lora_params
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload


def _resolve(**workload: Any) -> tuple[Any, list[str]]:
    return resolve_workload(s.WorkloadIn.model_validate(workload))


# ---------------------------------------------------------------- 7. strict inputs


@pytest.mark.parametrize("value", ["yes", "y", "1", "t", "True", 1, 0])
def test_a_yes_no_field_refuses_text_and_numbers(value: Any) -> None:
    with pytest.raises(ValidationError) as err:
        s.WorkloadIn.model_validate({"preset": "llama-3.1-8b", "gradient_checkpointing": value})
    assert err.value.errors()[0]["loc"] == ("gradient_checkpointing",)


@pytest.mark.parametrize(
    ("value", "read"),
    [(True, True), (False, False), ("on", True), ("off", False), ("true", True), ("false", False)],
)
def test_a_yes_no_field_takes_json_booleans_and_the_forms_words(value: Any, read: bool) -> None:
    """The HTML form's yes/no select sends "on"/"off" (a link may say "true"/"false"): those
    stay readable."""
    w = s.WorkloadIn.model_validate({"preset": "llama-3.1-8b", "gradient_checkpointing": value})
    assert w.gradient_checkpointing is read


def test_a_number_as_text_is_read_as_the_form_writes_it() -> None:
    """The project's rule for numbers in text (schemas._written_number): read, consistently."""
    assert (
        s.WorkloadIn.model_validate({"preset": "llama-3.1-8b", "lora_rank": "64"}).lora_rank == 64
    )


def test_a_lora_rank_as_wide_as_a_target_layer_is_warned_of() -> None:
    """Llama 3.1 8B's k and v projections are 1,024 wide (8 KV heads × 128)."""
    _, warnings = _resolve(preset="llama-3.1-8b", task="fine-tuning", peft="lora", lora_rank=4096)
    said = [x for x in warnings if x.startswith("lora_rank 4,096")]
    assert said and "k and v projections' width (1,024)" in said[0]
    assert "no longer low-rank" in said[0]
    _, fine = _resolve(preset="llama-3.1-8b", task="fine-tuning", peft="lora", lora_rank=64)
    assert not [x for x in fine if x.startswith("lora_rank")]


# ---------------------------------------------------------------- 4. LoRA's target modules


@pytest.mark.parametrize("peft", ["lora", "qlora"])
def test_lora_answer_names_its_target_modules_and_adapter_count(peft: str) -> None:
    work, warnings = _resolve(preset="llama-3.1-8b", task="fine-tuning", peft=peft)
    said = [x for x in warnings if "on all linear layers" in x]
    millions = lora_params(work.model, 16) / 1e6
    name = "QLoRA" if peft == "qlora" else "LoRA"
    assert said == [
        f"{name} rank 16 on all linear layers (q, k, v, o, gate, up, down): {millions:,.0f} M "
        "adapter parameters; PEFT's default for Llama, q_proj and v_proj only, trains fewer "
        "and needs less memory"
    ]


def test_full_finetune_names_no_adapters() -> None:
    _, warnings = _resolve(preset="llama-3.1-8b", task="fine-tuning", peft="none")
    assert not [x for x in warnings if "adapter parameters" in x]


# ---------------------------------------------------------------- 6. the assumed dataset


def test_default_finetuning_dataset_is_whole_samples_and_said() -> None:
    """1 M tokens at 2,048 a sample had been 488.28125 samples."""
    work, warnings = _resolve(preset="mistral-7b", task="fine-tuning", peft="lora", seq_len=2048)
    assert work.dataset_samples == 489
    said = [x for x in warnings if x.startswith("dataset_samples not given")]
    assert len(said) == 1
    assert "1 M tokens of fine-tuning data: 489 samples × 1 epoch" in said[0]
    assert said[0].endswith("set dataset_samples for your own")


def test_default_training_dataset_is_said_too() -> None:
    work, warnings = _resolve(preset="llama-3.1-8b", task="training", seq_len=2048)
    assert work.dataset_samples == int(work.dataset_samples)
    said = [x for x in warnings if x.startswith("dataset_samples not given")]
    assert said and "Chinchilla" in said[0] and "of 2,048 tokens" in said[0]
    assert "packed" not in said[0]  # pretraining corpora are packed, as counted


def test_a_given_dataset_is_not_called_assumed() -> None:
    _, warnings = _resolve(
        preset="mistral-7b", task="fine-tuning", peft="lora", seq_len=2048, dataset_samples=1e4
    )
    assert not [x for x in warnings if "dataset_samples not given" in x]


# ---------------------------------------------------------------- 5. full-length samples


def test_finetuning_time_says_every_sample_is_a_full_sequence() -> None:
    _, warnings = _resolve(
        preset="mistral-7b", task="fine-tuning", peft="lora", seq_len=4096, dataset_samples=1e4
    )
    said = [x for x in warnings if "every sample at 4,096 tokens" in x]
    assert said and "packed, or padded to it" in said[0] and "finishes sooner" in said[0]


def test_inference_says_nothing_of_packing() -> None:
    _, warnings = _resolve(preset="llama-3.1-8b", task="inference")
    assert not [x for x in warnings if "packed" in x]


# ---------------------------------------------------------------- 2. one checkpointing rule


def test_checkpointing_field_states_the_rows_rule() -> None:
    said = s.WorkloadIn.model_fields["gradient_checkpointing"].description or ""
    assert "33 %" in said and "50 %" in said and "LoRA" in said
    assert "30 %" not in said

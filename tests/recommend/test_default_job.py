"""A stated job size when the request gives none: the request's dataset wins, then the preset's
own, then the default for the kind of job (data/workloads.yaml default_datasets), each named as
assumed; and a language model's training shown in tokens/s with its time to finish unchanged."""

from __future__ import annotations

import math
from typing import Any

import pytest

from app.domain.evaluate import time_to_finish_h
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR, default_dataset, load_default_datasets, load_presets
from app.recommend.workloads import resolve_workload, resolved_out
from app.shipped import yamlio
from tests.domain.fixtures import A100, H100, RTX4090, RULES, T4
from tests.support import summary_of

GPUS = [A100, H100, RTX4090, T4]


def _resolve(**kw: Any) -> Any:
    work, _ = resolve_workload(s.WorkloadIn.model_validate(kw))
    return work


def test_every_default_job_size_cites_a_source_or_gives_a_reason() -> None:
    doc = yamlio.safe_load((DATA_DIR / "workloads.yaml").read_text(encoding="utf-8"))
    sources = doc["sources"]
    assert doc["default_datasets"], "the table is read from workloads.yaml"
    for raw in doc["default_datasets"]:
        assert raw.get("reason") or raw.get("source") in sources, raw
        sizes = [k for k in ("tokens", "tokens_per_param", "samples") if raw.get(k) is not None]
        assert len(sizes) == 1, raw


def test_a_fine_tuning_preset_without_a_dataset_gets_the_stated_default() -> None:
    default = default_dataset("decoder", "fine-tuning")
    assert default is not None and default.tokens is not None
    work = _resolve(preset="mistral-7b")
    assert load_presets()["mistral-7b"].defaults["dataset_samples"] is None
    # samples = tokens ÷ sequence length, rounded up to whole samples: the stated tokens,
    # whatever the sequence
    assert work.dataset_samples == math.ceil(default.tokens / work.seq_len)
    assert work.epochs == default.epochs
    assert work.dataset_basis == f"assumed: {default.label}"
    out = resolved_out(work)
    assert out.dataset_basis == work.dataset_basis and out.epochs == default.epochs
    longer = _resolve(preset="mistral-7b", seq_len=4096)
    assert longer.dataset_samples == math.ceil(default.tokens / 4096)


def test_an_inference_preset_asked_to_fine_tune_gets_it_too() -> None:
    work = _resolve(preset="llama-3-8b", task="fine-tuning", peft="qlora")
    assert work.dataset_basis is not None and work.dataset_basis.startswith("assumed")
    assert _resolve(preset="llama-3-8b").dataset_samples is None  # inference: no job length


def test_pretraining_a_decoder_assumes_chinchillas_tokens_per_parameter() -> None:
    default = default_dataset("decoder", "training")
    assert default is not None and default.tokens_per_param is not None
    work = _resolve(preset="gpt-2", task="training")
    tokens = work.dataset_samples * work.seq_len
    assert tokens == pytest.approx(default.tokens_per_param * work.model.params)
    assert "Chinchilla" in (work.dataset_basis or "")


def test_speech_fine_tuning_assumes_the_stated_clips_and_epochs() -> None:
    default = default_dataset("encoder-decoder", "fine-tuning")
    assert default is not None and default.samples is not None
    work = _resolve(preset="whisper-small")
    assert (work.dataset_samples, work.epochs) == (default.samples, default.epochs)
    assert _resolve(preset="whisper-small", epochs=2).epochs == 2  # the user's epochs win


def test_the_users_dataset_wins_and_is_called_theirs() -> None:
    work = _resolve(preset="mistral-7b", dataset_samples=12_000, epochs=3)
    assert (work.dataset_samples, work.epochs, work.dataset_basis) == (12_000, 3, "yours")


def test_a_presets_own_dataset_is_named_as_the_presets() -> None:
    work = _resolve(preset="resnet-50")
    assert work.dataset_samples == load_presets()["resnet-50"].defaults["dataset_samples"]
    assert work.dataset_basis == "assumed: the ResNet-50 preset's dataset"


def test_inference_takes_no_training_recipes_dataset_or_epochs() -> None:
    # ResNet-50 inference had been timed as ImageNet × 90 epochs, the preset's training recipe
    work = _resolve(preset="resnet-50", task="inference")
    assert work.dataset_samples is None and work.dataset_basis is None
    own = _resolve(preset="resnet-50", task="inference", dataset_samples=50_000)
    assert (own.dataset_samples, own.epochs, own.dataset_basis) == (50_000, 1, "yours")
    assert _resolve(preset="resnet-50", task="training", dataset_samples=50_000).epochs == 90


def test_a_job_with_no_stated_default_keeps_no_length() -> None:
    kinds = {(f, d.task) for d in load_default_datasets() for f in d.families}
    assert ("diffusion", "fine-tuning") not in kinds
    work = _resolve(preset="stable-diffusion-1.5", task="fine-tuning")
    assert work.dataset_samples is None and work.dataset_basis is None


def _answer(**workload: Any) -> s.RecommendationResponse:
    req = s.RecommendationRequest.model_validate(
        {"workload": workload, "objective": "fastest", "limit": 10}
    )
    return service.recommend(req, GPUS, RULES)


def test_decoder_fine_tuning_is_in_tokens_per_second_and_its_time_to_finish_unchanged() -> None:
    answer = _answer(preset="qwen2.5-7b")
    w = answer.workload
    assert answer.recommendations
    for row in answer.recommendations:
        t = row.throughput
        assert t.unit == "tokens/s" and t.samples_per_s is not None
        assert t.value == pytest.approx(t.samples_per_s * (w.seq_len or 0))
        assert row.uncertainty.low <= t.value <= row.uncertainty.high
        assert "tokens/s" in " ".join(row.explanation)
        # the hours are the engine's, from samples/s: the dataset in samples, not tokens
        work = _resolve(preset="qwen2.5-7b")
        assert row.time_to_finish_h == pytest.approx(time_to_finish_h(work, t.samples_per_s))
        tokens = (w.dataset_samples or 0) * (w.epochs or 1) * (w.seq_len or 0)
        assert row.time_to_finish_h == pytest.approx(tokens / t.value / 3600)
        if row.cost.rent is not None and row.cost.rent.samples_per_usd is not None:
            per_hour = row.cost.rent.usd_per_hour
            assert row.cost.rent.samples_per_usd == pytest.approx(t.value * 3600 / per_hour)


def test_the_ranking_is_the_same_in_either_unit() -> None:
    tokens = _answer(preset="gpt-2")
    samples = [r.throughput.samples_per_s or 0.0 for r in tokens.recommendations]
    assert samples == sorted(samples, reverse=True)  # fastest first, in the engine's unit
    shown = [r.throughput.value for r in tokens.recommendations]
    assert shown == sorted(shown, reverse=True) and min(samples) > 0


def test_an_image_models_rate_is_in_images_per_second() -> None:
    # "0.12 samples/s" for SDXL had not said a sample is one 1024 x 1024 image
    row = _answer(preset="resnet-50").recommendations[0]
    assert row.throughput.unit == "images/s" and row.throughput.samples_per_s is None
    sdxl = _answer(preset="sdxl").recommendations[0]
    assert sdxl.throughput.unit == "images/s"
    assert _answer(preset="bert-base").recommendations[0].throughput.unit == "samples/s"


def test_a_deadline_on_an_assumed_job_size_says_so() -> None:
    req = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "mistral-7b"}, "constraints": {"max_hours": 100}, "limit": 3}
    )
    answer = service.recommend(req, GPUS, RULES)
    assert any("max_hours judged against an assumed job size" in w for w in answer.warnings)
    # the verdict's assumptions line names the job size as assumed
    assumptions = summary_of(answer).assumptions
    assert f"samples × 1 epoch ({answer.workload.dataset_basis})" in assumptions
    assert "assumed: 1 M tokens" in assumptions


def _resolve_warned(**kw: Any) -> tuple[Any, list[str]]:
    return resolve_workload(s.WorkloadIn.model_validate(kw))


def test_a_chat_models_inference_batch_is_not_its_training_batch() -> None:
    # Llama 3 8B's preset batch (1) is an inference batch: training it assumes GPT-3's 2M
    # tokens per step at 6.7B-13B parameters, 1,024 sequences of 2,048, and says so
    work, warned = _resolve_warned(preset="llama-3-8b", task="training")
    assert work.batch_size == 1024
    assert any("batch_size not given" in w and "2,097,152 tokens" in w for w in warned)
    # the step holds the tokens, whatever the sequence length
    assert _resolve(preset="llama-3-8b", task="training", seq_len=4096).batch_size == 512
    assert _resolve(preset="llama-3-8b", task="fine-tuning").batch_size == 128
    # the request's own batch, and a preset's batch for the task asked, always win
    mine, quiet = _resolve_warned(preset="llama-3-8b", task="training", batch_size=8)
    assert mine.batch_size == 8 and not any("batch_size" in w for w in quiet)
    assert _resolve(preset="llama-3-8b").batch_size == 1  # inference: the preset's own
    assert _resolve(preset="gpt-2").batch_size == 8  # its fine-tuning preset batch
    assert _resolve(preset="resnet-50", task="inference").batch_size == 256  # not a decoder


def test_default_batches_step_with_model_size_as_gpt3_did() -> None:
    from app.recommend.presets import default_batch

    b = default_batch("decoder", "training")
    assert b is not None
    tokens = [b.sequences_for(p, 2048)[1] for p in (125e6, 760e6, 1.3e9, 2.7e9, 13e9, 175e9)]
    assert tokens == [524288, 524288, 1048576, 1048576, 2097152, 3145728]
    assert default_batch("encoder", "training") is None


def test_sixteen_gpus_training_an_8b_model_are_compute_bound_not_starved() -> None:
    # one sequence per step split over 16 GPUs left each a sixteenth of it, "limited by
    # interconnect" at ~1,200 tokens/s per B200; the assumed global batch keeps them busy
    req = s.RecommendationRequest.model_validate(
        {
            "workload": {"preset": "llama-3-8b", "task": "training"},
            "constraints": {"num_gpus": 16, "max_gpus": 16},
            "objective": "fastest",
        }
    )
    rows = service.recommend(req, GPUS, RULES).recommendations
    assert rows
    for r in rows:
        # every GPU works on whole sequences, never a share of one
        assert r.micro_batch is None or r.micro_batch >= r.num_gpus, (r.gpu.slug, r.micro_batch)
        # cards on NVLink hide the weight gathers; 16 RTX 4090s on PCIe across two nodes,
        # with micro-batches of two sequences per GPU (exact maths, no 8-bit AdamW), may not
        if r.gpu.interconnect is not None:
            assert r.bottleneck != "interconnect", (r.gpu.slug, r.bottleneck)


def test_a_sequence_length_on_an_image_model_is_said_to_be_ignored() -> None:
    work, warnings = _resolve_warned(preset="resnet-50", seq_len=4096)
    assert any(w.startswith("seq_len does not apply") for w in warnings), warnings
    same, quiet = _resolve_warned(preset="resnet-50")
    assert not any("seq_len" in w for w in quiet)
    assert work.model == same.model and work.batch_size == same.batch_size


def test_training_under_a_runtime_it_is_not_priced_for_says_so_not_that_it_cannot_train() -> None:
    import pytest

    from app.errors import InvalidInput

    with pytest.raises(InvalidInput) as err:
        _resolve(preset="llama-3-8b", task="fine-tuning", runtime="llama.cpp")
    # the refusal is the engine's (it prices no llama.cpp training), not the runtime's; MLX's
    # LoRA / QLoRA is priced since session 42 (tests/api/test_r42mlx_finetune_api.py)
    assert err.value.field == "workload.runtime"
    assert "not modelled here" in str(err.value) and "inference runtime" not in str(err.value)
    # what mlx-lm runs beyond LoRA / QLoRA is still refused, naming the runtime
    with pytest.raises(InvalidInput) as err:
        _resolve(preset="llama-3-8b", task="fine-tuning", runtime="mlx", peft="none")
    assert err.value.field == "workload.runtime" and "not modelled" in str(err.value)


def test_a_custom_cnn_trained_without_a_batch_assumes_a_stated_one_and_says_so() -> None:
    """A custom CIFAR-size CNN with the batch left blank was trained at batch 1, 16× slower
    than at 128, without a word."""
    w = s.WorkloadIn.model_validate(
        {"task": "training", "dataset_samples": 50000, "epochs": 200,
         "model": {"family": "cnn", "params": 11e6, "gflops_per_sample": 0.56,
                   "input_size": 32}}
    )  # fmt: skip
    work, warnings = resolve_workload(w)
    assert work.batch_size == 128
    said = [x for x in warnings if x.startswith("batch_size not given")]
    assert said and "128 samples per optimizer step" in said[0] and "He et al. 2016" in said[0]
    # inference keeps its batch of one (a latency question), and a stated batch wins
    infer, _ = resolve_workload(w.model_copy(update={"task": "inference"}))
    assert infer.batch_size == 1
    own, _ = resolve_workload(w.model_copy(update={"batch_size": 32}))
    assert own.batch_size == 32

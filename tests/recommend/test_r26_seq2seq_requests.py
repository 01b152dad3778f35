"""A Whisper job as the request path resolves it (speech review, 2026-12-05): a pasted config
keeps its decoder depth and audio window, the model's limits are 422s naming the field,
llama.cpp (which runs no Whisper) is refused, beams are a field of encoder-decoder inference,
and training counts the encoder's 1,500 audio positions."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain import perf, seq2seq
from app.errors import InvalidInput
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from tests.domain.test_r26whisper_hf_config import _whisper


def _resolve(**kw: Any) -> tuple[Any, list[str]]:
    return resolve_workload(s.WorkloadIn.model_validate(kw))


def _field(**kw: Any) -> str | None:
    with pytest.raises(InvalidInput) as err:
        _resolve(**kw)
    return err.value.field


def test_a_pasted_turbo_config_keeps_its_decoder_depth_and_window() -> None:
    work, _ = _resolve(model={"hf_config": _whisper(decoder_layers=4)}, task="inference")
    assert work.model.family == "encoder-decoder"
    assert (work.model.layers, work.model.decoder_layers) == (32, 4)
    assert seq2seq.encoder_tokens(work) == 1500


def test_whisper_limits_are_422s_naming_the_field() -> None:
    assert _field(preset="whisper-large-v3", output_tokens=449) == "workload.output_tokens"
    assert (
        _field(preset="whisper-large-v3", model={"input_size": 60}) == "workload.model.input_size"
    )
    assert _field(preset="whisper-large-v3", task="fine-tuning", seq_len=449) == "workload.seq_len"
    _, warned = _resolve(preset="whisper-large-v3", seq_len=3000)
    assert any("seq_len does not apply" in x for x in warned)


def test_llama_cpp_runs_no_whisper() -> None:
    assert _field(preset="whisper-large-v3", runtime="llama.cpp") == "workload.runtime"


def test_beams_are_an_encoder_decoder_inference_field() -> None:
    work, _ = _resolve(preset="whisper-large-v3", beams=5)
    assert work.beams == 5
    assert _resolve(preset="whisper-large-v3")[0].beams == 1
    assert _field(preset="llama-3.1-8b", task="inference", beams=4) == "workload.beams"
    assert _field(preset="whisper-large-v3", task="fine-tuning", beams=4) == "workload.beams"


def test_training_flops_count_the_encoders_audio_positions() -> None:
    work, _ = _resolve(preset="whisper-large-v3", task="fine-tuning")
    flops = perf.forward_flops_per_sample(work)
    assert flops == seq2seq.forward_flops(work)
    # a 448-token pass through all 1.55 B parameters is about half of it: the encoder's
    # ~0.64 B parameters run over 1,500 positions
    assert flops > 1.8 * (2.0 * work.model.params * work.seq_len)
    assert perf.model_flops_per_sample(work) == 3.0 * flops

"""A speech answer's words (speech review, 2026-12-05): Whisper runtimes the engine does not
model are named with what to use instead; the assumptions say greedy decoding and how 30-s
windows count against an hour of audio; a hand-described encoder-decoder without input_size
says its encoder was priced as text; the decoder depth is a model field."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.recommend import schemas as s


@pytest.mark.parametrize("runtime", ["faster-whisper", "faster_whisper", "CTranslate2", "whisperx"])
def test_ctranslate2_runtimes_name_the_closest_modelled_ones(runtime: str) -> None:
    with pytest.raises(ValidationError) as err:
        s.WorkloadIn(preset="whisper-large-v3", runtime=runtime)
    said = str(err.value)
    assert "not modelled" in said and "'transformers'" in said and "'pytorch'" in said
    assert "unknown runtime" not in said


def test_whisper_cpp_is_named_apart_from_llama_cpp() -> None:
    with pytest.raises(ValidationError) as err:
        s.WorkloadIn(preset="whisper-large-v3", runtime="whisper.cpp")
    assert "separate from llama.cpp" in str(err.value)


def test_the_model_takes_a_decoder_depth_and_says_input_size_is_audio_seconds() -> None:
    m = s.ModelIn(family="encoder-decoder", params=809e6, layers=32, decoder_layers=4)
    assert m.decoder_layers == 4
    help_text = s.ModelIn.model_fields["input_size"].description or ""
    assert "audio" in help_text and "seconds" in help_text
    with pytest.raises(ValidationError):
        s.ModelIn(family="encoder-decoder", params=809e6, decoder_layers=0)


def _assumptions(client: TestClient, workload: dict[str, Any]) -> str:
    r = client.post("/api/v1/recommendations", json={"workload": workload})
    assert r.status_code == 200, r.text
    said: str = r.json()["summary"]["assumptions"]
    return said


def test_whisper_inference_says_greedy_decoding_and_back_to_back_windows(
    read_client: TestClient,
) -> None:
    said = _assumptions(read_client, {"preset": "whisper-large-v3", "task": "inference"})
    assert "greedy decoding (beam 1)" in said
    assert "back to back (120 an hour of audio" in said and "1.5×" in said
    assert "30-second audio windows" in said and "128 tokens out" in said


def test_a_hand_described_whisper_without_input_size_says_it_was_priced_as_text(
    read_client: TestClient,
) -> None:
    model = {
        "family": "encoder-decoder",
        "params": 1.55e9,
        "layers": 32,
        "hidden_size": 1280,
        "num_heads": 20,
        "intermediate_size": 5120,
        "vocab_size": 51866,
        "max_context": 448,
    }
    said = _assumptions(read_client, {"task": "inference", "model": model})
    assert "no model.input_size" in said and "audio seconds" in said
    given = _assumptions(read_client, {"task": "inference", "model": {**model, "input_size": 30}})
    assert "no model.input_size" not in given and "30-second audio windows" in given


def test_whisper_fine_tuning_says_clips_and_target_tokens(read_client: TestClient) -> None:
    said = _assumptions(read_client, {"preset": "whisper-small", "task": "fine-tuning"})
    assert "30-second audio clips" in said and "448 target tokens" in said
    assert "greedy" not in said

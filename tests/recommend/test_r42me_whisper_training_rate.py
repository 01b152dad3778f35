"""Whisper fine-tuning had been shown in tokens/s (the transcript's padded 448 decoder tokens
a clip), where its inference speaks in 30-s audio windows and seconds of audio a second: a
speech model's training rows now say windows/s and seconds of audio a second too, and the
time to finish is unchanged (it reads samples/s)."""

from __future__ import annotations

from typing import Any

import pytest

from app.recommend import schemas as s
from tests.support import recommend_with, summary_of


def _answer(catalog: Any, **workload: Any) -> s.RecommendationResponse:
    body = {"workload": workload, "constraints": {"acquisition": "rent"}, "limit": 3}
    return recommend_with(catalog, body)


def test_whisper_fine_tuning_speaks_in_audio_windows(shipped_catalog: Any) -> None:
    answer = _answer(shipped_catalog, preset="whisper-large-v3", task="fine-tuning")
    assert answer.recommendations
    for row in answer.recommendations:
        t = row.throughput
        assert t.unit == "30-s windows/s"
        assert t.audio_seconds_per_s == pytest.approx(30.0 * t.value)
        said = " ".join(row.explanation)
        assert "30-second audio window" in said and "real time" not in said


def test_a_text_encoder_decoder_still_trains_in_tokens(shipped_catalog: Any) -> None:
    t5_base = {  # google-t5/t5-base's config.json
        "family": "encoder-decoder",
        "params": 222_903_552,
        "layers": 12,
        "hidden_size": 768,
        "num_heads": 12,
        "intermediate_size": 3072,
        "vocab_size": 32128,
    }
    answer = _answer(shipped_catalog, model=t5_base, task="fine-tuning", seq_len=512)
    assert answer.recommendations
    t = answer.recommendations[0].throughput
    assert t.unit == "tokens/s" and t.audio_seconds_per_s is None


def test_the_training_verdict_says_audio_seconds_not_real_time(shipped_catalog: Any) -> None:
    """The verdict had read "about 1,250× real time: 1 h of audio in about 2.9 s" for a
    training pick, a transcription figure that means nothing to a training run."""
    answer = _answer(shipped_catalog, preset="whisper-large-v3", task="fine-tuning")
    said = summary_of(answer).sentence
    assert "s of audio a second" in said and "real time" not in said

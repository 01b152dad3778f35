"""hf_config reads Whisper configs as encoder-decoders (encoder and decoder depths apart,
audio seconds as input) and refuses speech encoders and other encoder-decoders rather than
reading them as decoder LLMs (speech review, 2026-12-05)."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain.hf_config import HfConfigError, parse_hf_config


def _whisper(**kw: Any) -> dict[str, Any]:
    """openai/whisper-large-v3's config.json keys the parser reads."""
    cfg: dict[str, Any] = {
        "model_type": "whisper",
        "is_encoder_decoder": True,
        "d_model": 1280,
        "encoder_layers": 32,
        "decoder_layers": 32,
        "encoder_attention_heads": 20,
        "decoder_attention_heads": 20,
        "encoder_ffn_dim": 5120,
        "decoder_ffn_dim": 5120,
        "vocab_size": 51866,
        "num_mel_bins": 128,
        "max_source_positions": 1500,
        "max_target_positions": 448,
        "num_hidden_layers": 32,
        "tie_word_embeddings": True,
    }
    cfg.update(kw)
    return cfg


# Hugging Face model pages' parameter counts (safetensors): whisper-tiny 37.8M, small 242M,
# large-v3 1.54B, large-v3-turbo 809M
@pytest.mark.parametrize(
    ("change", "published"),
    [
        (
            dict(d_model=384, encoder_layers=4, decoder_layers=4, encoder_attention_heads=6,
                 encoder_ffn_dim=1536, decoder_ffn_dim=1536, vocab_size=51865, num_mel_bins=80),
            37.8e6,
        ),
        (
            dict(d_model=768, encoder_layers=12, decoder_layers=12, encoder_attention_heads=12,
                 encoder_ffn_dim=3072, decoder_ffn_dim=3072, vocab_size=51865, num_mel_bins=80),
            242e6,
        ),
        ({}, 1.54e9),
        (dict(decoder_layers=4), 809e6),
    ],
)  # fmt: skip
def test_whisper_parameters_match_the_published_counts(change: dict[str, Any], published: float):
    m = parse_hf_config(_whisper(**change))
    assert m.params == pytest.approx(published, rel=3e-3)


def test_whisper_is_an_encoder_decoder_over_30_seconds_of_audio():
    m = parse_hf_config(_whisper(decoder_layers=4))
    assert m.family == "encoder-decoder"
    assert m.layers == 32 and m.decoder_layers == 4
    assert m.input_size == 30
    assert m.max_context == 448 and m.intermediate_size == 5120
    assert not m.gated_mlp and m.tied_embeddings
    # the decoder's self-attention cache: K and V of 1,280 over its 4 layers
    assert m.kv_elements_per_token == 2 * 4 * 1280


@pytest.mark.parametrize("model_type", ["wav2vec2", "hubert", "wavlm", "data2vec-audio"])
def test_speech_encoders_are_refused_not_read_as_decoders(model_type: str):
    cfg = {
        "model_type": model_type,
        "hidden_size": 1024,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "intermediate_size": 4096,
        "vocab_size": 32,
    }
    with pytest.raises(HfConfigError) as err:
        parse_hf_config(cfg)
    assert err.value.field == "model_type"
    assert "audio frames" in err.value.message and "whisper" in err.value.message


def test_an_unlisted_speech_encoder_is_known_by_its_feature_encoder():
    cfg = {
        "model_type": "some-new-audio-model",
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "vocab_size": 32,
        "feat_extract_norm": "group",
        "conv_dim": [512] * 7,
    }
    with pytest.raises(HfConfigError) as err:
        parse_hf_config(cfg)
    assert err.value.field == "model_type"


def test_an_unlisted_encoder_decoder_is_refused_by_its_flag():
    cfg = {
        "model_type": "my-seq2seq",
        "is_encoder_decoder": True,
        "d_model": 512,
        "num_hidden_layers": 6,
        "num_attention_heads": 8,
        "vocab_size": 32000,
    }
    with pytest.raises(HfConfigError) as err:
        parse_hf_config(cfg)
    assert err.value.field == "is_encoder_decoder"
    with pytest.raises(HfConfigError) as err:
        parse_hf_config({**cfg, "model_type": "bart"})
    assert err.value.field == "model_type"

"""config.json → model shape, checked against published parameter counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.domain.hf_config import HfConfigError, parse_hf_config

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def load(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


@pytest.mark.parametrize(
    ("name", "total", "active"),
    [
        ("llama-3.1-8b", 8.03e9, None),
        ("qwen2.5-7b", 7.62e9, None),
        ("mixtral-8x7b", 46.7e9, 12.9e9),
        ("deepseek-v3", 671e9, 37e9),
        ("qwen1.5-moe-a2.7b", 14.3e9, 2.7e9),
        ("qwen3-30b-a3b", 30.5e9, 3.3e9),
    ],
)
def test_parameter_counts_match_published_totals(name: str, total: float, active: float | None):
    m = parse_hf_config(load(name))
    assert m.params == pytest.approx(total, rel=0.01)
    if active is None:
        assert m.active_params is None
    else:
        assert m.active_params == pytest.approx(active, rel=0.02)


def test_dense_gqa_shape_and_kv_bytes():
    m = parse_hf_config(load("llama-3.1-8b"))
    assert (m.family, m.layers, m.hidden_size, m.num_heads, m.num_kv_heads, m.head_dim) == (
        "decoder", 32, 4096, 32, 8, 128,
    )  # fmt: skip
    assert m.attention == "gqa"
    assert m.vocab_size == 128256 and m.max_context == 131072
    # 2 (K, V) x 32 layers x 8 heads x 128 dims x 2 bytes = 128 KiB per token
    assert m.kv_bytes_per_token(2.0) == 131072
    assert m.kv_bytes(1000, 1.0) == 65536 * 1000


def test_qwen_biases_and_no_sliding_when_disabled():
    m = parse_hf_config(load("qwen2.5-7b"))
    assert m.sliding_window is None
    assert m.kv_bytes_per_token(2.0) == 2 * 28 * 4 * 128 * 2


def test_mla_caches_one_latent_per_layer():
    m = parse_hf_config(load("deepseek-v3"))
    assert m.attention == "mla"
    assert m.experts == 256 and m.active_experts == 8 and m.shared_experts == 1
    # (kv_lora_rank 512 + qk_rope_head_dim 64) x 61 layers, bf16
    assert m.kv_bytes_per_token(2.0) == 576 * 61 * 2


def test_gpt_oss_total_active_and_sliding_layers():
    m = parse_hf_config(load("gpt-oss-120b"))
    assert m.params == pytest.approx(116.83e9, rel=0.01)
    # OpenAI counts 5.13B active without the input embedding table
    assert m.active_params is not None
    assert m.active_params - m.vocab_size * m.hidden_size == pytest.approx(5.13e9, rel=0.02)
    assert m.sliding_window == 128
    per_layer = 2 * 8 * 64
    assert m.kv_elements_per_token == 18 * per_layer
    assert m.kv_bytes(10_000, 1.0) == 18 * per_layer * 10_000 + 18 * per_layer * 128


def test_multimodal_wrapper_reads_text_config_and_class_defaults():
    m = parse_hf_config(load("gemma-3-27b-it"))
    assert m.model_type == "gemma3_text"
    assert m.vocab_size == 262208 and m.head_dim == 128
    assert m.params == pytest.approx(27.0e9, rel=0.02)  # 27.4B published with the vision tower
    # 5 of every 6 layers are local (1024-token window)
    assert m.kv_window_elements_per_token == 52 * 2 * 16 * 128
    assert m.kv_elements_per_token == 10 * 2 * 16 * 128


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"hidden_size": None}, "hidden_size"),
        ({"num_key_value_heads": 64}, "num_key_value_heads"),
        ({"num_hidden_layers": "many"}, "num_hidden_layers"),
        ({"model_type": "t5"}, "model_type"),
        ({"num_experts_per_tok": 99}, "num_experts_per_tok"),
    ],
)
def test_bad_configs_name_the_key(change: dict, field: str):
    cfg = load("mixtral-8x7b")
    cfg.update(change)
    with pytest.raises(HfConfigError) as err:
        parse_hf_config(cfg)
    assert err.value.field == field


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("hidden_size", 10**12),
        ("hidden_size", 1e300),  # a float whose products overflow
        ("hidden_size", float("inf")),
        ("hidden_size", float("nan")),
        ("num_hidden_layers", 1001),
        ("num_hidden_layers", 10**9),  # would walk a billion layers
        ("vocab_size", 10**15),
        ("intermediate_size", 10**13),
        ("num_attention_heads", 10**9),
        ("max_position_embeddings", 10**12),
        ("num_local_experts", 10**6),
    ],
)
def test_absurd_sizes_are_refused_naming_the_key(field: str, value: float):
    cfg = load("mixtral-8x7b")
    cfg[field] = value
    with pytest.raises(HfConfigError) as err:
        parse_hf_config(cfg)
    assert err.value.field == field


def test_the_largest_published_context_is_read():
    cfg = load("llama-3.1-8b")
    cfg["max_position_embeddings"] = 10_485_760  # Llama 4 Scout's config.json
    assert parse_hf_config(cfg).max_context == 10_485_760


def test_diffusers_config_is_refused_with_a_hint():
    with pytest.raises(HfConfigError, match="diffusers"):
        parse_hf_config({"_class_name": "FluxTransformer2DModel", "num_layers": 19})


@pytest.mark.parametrize(
    "cfg",
    [
        # google/vit-base-patch16-224 config.json (abridged): no vocab_size
        {"model_type": "vit", "hidden_size": 768, "num_hidden_layers": 12,
         "num_attention_heads": 12, "intermediate_size": 3072, "image_size": 224,
         "patch_size": 16, "num_channels": 3},
        # facebook/convnext-tiny-224 config.json (abridged): hidden_sizes, no hidden_size
        {"model_type": "convnext", "hidden_sizes": [96, 192, 384, 768],
         "depths": [3, 3, 9, 3], "num_channels": 3, "image_size": 224},
        # an unnamed vision config: image keys, no vocabulary
        {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
         "image_size": 224},
    ],
)  # fmt: skip
def test_a_vision_config_says_hf_config_is_for_language_models_and_what_to_give(cfg: dict):
    """ViT and ConvNeXt configs were refused with "config.json has no vocab_size" / "no
    hidden_size", which says nothing of what to do: they are named as vision configs, with the
    model fields that describe one."""
    with pytest.raises(HfConfigError) as err:
        parse_hf_config(cfg)
    assert err.value.field == "model_type"
    assert "vision model" in err.value.message and "language-model" in err.value.message
    assert "family 'vit'" in err.value.message and "gflops_per_sample" in err.value.message
    assert "no vocab_size" not in err.value.message

"""One rule for a gated or plain MLP, shared by the memory and the time model (review #1).

A GELU decoder (GPT-2's shape, or its config.json) used to be saved for backward as SwiGLU:
66.9 bytes per token per layer per hidden unit where saved-tensor hooks count 40.08
(benchmarks/activation_memory.py's GPT-2 layer, ``activation_coeff`` of the gpt-2 preset).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.domain.activations import (
    AUTOCAST,
    decoder_layer_saved,
    gated_from_params,
    gated_mlp,
    head_saved,
)
from app.domain.hf_config import parse_hf_config
from app.domain.operators import is_gated
from app.domain.workload import ModelSpec, WorkloadSpec, lora_params, memory_breakdown
from tests.domain.fixtures import LLAMA3_8B

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"

# GPT-2 small (huggingface.co/openai-community/gpt2, config.json): the keys the engine reads
GPT2_CONFIG = {
    "activation_function": "gelu_new",
    "model_type": "gpt2",
    "n_ctx": 1024,
    "n_embd": 768,
    "n_head": 12,
    "n_layer": 12,
    "n_positions": 1024,
    "vocab_size": 50257,
}
# the gpt-2 preset's shape (data/workloads.yaml), without its measured coefficient
GPT2 = ModelSpec(
    family="decoder",
    params=124e6,
    layers=12,
    hidden_size=768,
    num_heads=12,
    intermediate_size=3072,
    vocab_size=50257,
    max_context=1024,
)
# bytes per token per layer per hidden unit that saved-tensor hooks count on the GPT-2 layer
# under bf16 autocast (benchmarks/activation_memory.py; the gpt-2 preset's activation_coeff)
GPT2_MEASURED = 40.08


def _gpt2_from_config() -> ModelSpec:
    hf = parse_hf_config(GPT2_CONFIG)
    return ModelSpec(
        family=hf.family,
        params=hf.params,
        layers=hf.layers,
        hidden_size=hf.hidden_size,
        num_heads=hf.num_heads,
        num_kv_heads=hf.num_kv_heads,
        intermediate_size=hf.intermediate_size,
        vocab_size=hf.vocab_size,
        max_context=hf.max_context,
        tied_embeddings=hf.tied_embeddings,
        gated_mlp=hf.gated_mlp,
    )


def test_a_gpt2_shaped_decoder_is_read_as_a_plain_mlp() -> None:
    assert not gated_mlp(GPT2)
    assert gated_mlp(LLAMA3_8B)


def test_memory_and_time_read_the_mlp_alike() -> None:
    for m in (GPT2, LLAMA3_8B, _gpt2_from_config()):
        assert gated_mlp(m) == is_gated(m) == gated_from_params(m)


def test_a_gpt2_layer_saves_what_the_hooks_count() -> None:
    per_token = sum(decoder_layer_saved(GPT2, AUTOCAST, seq=1024, flash_attention=True).values())
    assert per_token / 768 == pytest.approx(GPT2_MEASURED, rel=0.01)


def test_a_plain_decoders_final_norm_is_a_layer_norm() -> None:
    # GPT-2's ln_f saves its fp32 input (4 bytes), the head its bf16 cast (2)
    assert head_saved(GPT2, AUTOCAST) == pytest.approx(6.0 * 768)


def _activations(m: ModelSpec) -> float:
    work = WorkloadSpec(task="training", model=m, precision="bf16", batch_size=8, seq_len=1024)
    return memory_breakdown(work).activations


def test_custom_gpt2_shape_and_config_get_the_presets_activations() -> None:
    preset = _activations(replace(GPT2, activation_coeff=GPT2_MEASURED))
    assert _activations(GPT2) == pytest.approx(preset, rel=0.01)
    assert _activations(_gpt2_from_config()) == pytest.approx(preset, rel=0.01)


def test_the_config_says_gated_where_it_knows() -> None:
    assert parse_hf_config(GPT2_CONFIG).gated_mlp is False
    # Gemma's gated MLP names gelu_pytorch_tanh: the model type decides
    for name in ("llama-3.1-8b", "gemma-3-27b-it", "mixtral-8x7b"):
        raw = json.loads((CONFIGS / f"{name}.json").read_text())
        assert parse_hf_config(raw).gated_mlp is True
    # a model type the engine does not list, with a SwiGLU/GeGLU activation
    swiglu = {**GPT2_CONFIG, "model_type": "custom", "hidden_act": "swiglu"}
    assert parse_hf_config(swiglu).gated_mlp is True
    geglu = {**GPT2_CONFIG, "model_type": "custom", "activation_function": "geglu"}
    assert parse_hf_config(geglu).gated_mlp is True


def test_a_stated_mlp_wins_over_the_parameter_count() -> None:
    assert gated_mlp(replace(GPT2, gated_mlp=True))
    assert not gated_mlp(replace(LLAMA3_8B, gated_mlp=False))


def test_lora_adapts_the_mlp_the_model_has() -> None:
    h, inter, rank = 768, 3072, 16
    # q, k, v, o and a plain MLP's up and down: no gate projection
    per_layer = rank * (2 * h + 2 * (h + h) + 2 * h + 2 * (h + inter))
    assert lora_params(GPT2, rank) == pytest.approx(12 * per_layer)

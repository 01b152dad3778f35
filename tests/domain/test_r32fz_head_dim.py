"""A config.json's explicit head_dim (session 32, fz). Qwen3, Gemma 3, Mistral Small 3 and
gpt-oss run heads that are not hidden ÷ heads (Qwen3-30B-A3B: 32 × 128 = 4096 against hidden
2048; gpt-oss: 64 × 64 = 4096 against 2880). ModelSpec.head_dim had been hidden ÷ heads for
every model, so Q and O's widths, the saved q and attention output and LoRA's widths were the
hidden size's; the KV cache (kv_elements_per_token) and the LLM step's attention width were
right already and stay so."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.domain import activations
from app.domain.operators import attention_linears, transformer_ops
from app.domain.workload import ModelSpec, lora_params
from app.recommend.presets import load_presets
from app.recommend.workloads import model_fields_from_hf_config

ROOT = Path(__file__).resolve().parents[2]
PRESETS = load_presets(ROOT / "data")
CONFIGS = ROOT / "tests" / "data" / "hf_configs"


def _qwen() -> ModelSpec:
    return PRESETS["qwen3-30b-a3b"].model


@pytest.mark.parametrize(
    ("preset", "head"),
    [("qwen3-30b-a3b", 128), ("qwen3-235b-a22b", 128), ("qwen3-32b", 128),
     ("gemma-3-27b", 128), ("mistral-small-3", 128), ("gpt-oss-20b", 64),
     ("gpt-oss-120b", 64)],
)  # fmt: skip
def test_presets_carry_their_config_head_dim(preset: str, head: int) -> None:
    m = PRESETS[preset].model
    assert m.head_dim == head and m.q_width == (m.num_heads or 0) * head
    # the same head the shipped KV values per token imply (2 · layers · kv_heads · head)
    per_token = (m.kv_elements_per_token or 0) + (m.kv_window_elements_per_token or 0)
    assert per_token == 2 * (m.layers or 0) * (m.kv_heads or 0) * head


def test_a_model_without_one_keeps_hidden_over_heads() -> None:
    llama = PRESETS["llama-3.1-8b"].model
    assert llama.explicit_head_dim is None
    assert llama.head_dim == 128 and llama.q_width == llama.hidden_size
    assert attention_linears(llama) == [(4096, 4096), (4096, 1024), (4096, 1024), (4096, 4096)]


def test_q_and_o_take_heads_times_head_dim() -> None:
    assert attention_linears(_qwen()) == [(2048, 4096), (2048, 512), (2048, 512), (4096, 2048)]
    gemma = PRESETS["gemma-3-27b"].model  # narrower than its hidden size: 32 × 128 < 5376
    assert attention_linears(gemma)[0] == (5376, 4096)
    ops = {o.name: o for o in transformer_ops(_qwen(), 1, 128)}
    assert ops["q_proj"].flops == pytest.approx(2 * 128 * 4096 * 2048)  # one layer
    assert ops["q_proj"].count == 48
    assert ops["o_proj"].flops == ops["q_proj"].flops


def test_lora_counts_the_wider_q_and_o() -> None:
    m = _qwen()
    # per layer at rank 16: q and o (2048 + 4096) each, k and v (2048 + 512) each
    assert lora_params(m, 16) == 16 * 48 * (2 * 6144 + 2 * 2560)
    hidden_heads = replace(m, explicit_head_dim=None)  # what it had counted: 64-wide heads
    assert lora_params(hidden_heads, 16) < lora_params(m, 16)


def test_saved_q_and_attention_output_are_heads_times_head_dim() -> None:
    saved = activations.decoder_layer_saved(
        _qwen(), activations.AUTOCAST, seq=2048, flash_attention=True
    )
    assert saved["q, k, v"] == 2.0 * (4096 + 2 * 512)
    assert saved["attention output"] == 2.0 * 4096


def test_block_params_come_closer_to_the_stated_count() -> None:
    # gpt-oss-20b: 20.9 B total; Q and O at 2880 × 4096, not 2880 × 2880
    m = PRESETS["gpt-oss-20b"].model
    was = activations.block_params(replace(m, explicit_head_dim=None))
    assert abs(activations.block_params(m) - m.params) < abs(was - m.params)


@pytest.mark.parametrize(
    ("config", "head"),
    [("qwen3-30b-a3b.json", 128), ("gpt-oss-120b.json", 64), ("gemma-3-27b-it.json", 128),
     ("deepseek-v3.json", None)],
)  # fmt: skip
def test_a_pasted_config_sets_it(config: str, head: int | None) -> None:
    fields = model_fields_from_hf_config(json.loads((CONFIGS / config).read_text()))
    # latent attention keeps its five shapes instead (q_lora_rank … v_head_dim)
    assert fields["explicit_head_dim"] == head
    if head is not None:
        assert ModelSpec(**fields).q_width == fields["num_heads"] * head

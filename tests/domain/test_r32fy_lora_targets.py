"""r32 new-user walk: DeepSeek-R1's QLoRA warning said adapters on "q, k, v, o", names its
attention does not have (HF's DeepseekV3Attention: q_a_proj, q_b_proj, kv_a_proj_with_mqa,
kv_b_proj, o_proj), and the count sized k and v at MLA's one "KV head" of hidden ÷ heads (56
wide). An MoE model's adapters had counted one expert-sized MLP per layer, adapters no PEFT
target list gives ("all-linear" adapts every expert), while its time priced attention alone.
Adapters are now counted on the block linears the time model runs, with MLA's real shapes,
and the words name them as PEFT's target_modules takes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.domain.operators import attention_linears, block_linears
from app.domain.workload import lora_params
from app.recommend.presets import DATA_DIR, load_presets
from app.recommend.workloads import _full_rank, _lora_targets, model_fields_from_hf_config

PRESETS = load_presets(DATA_DIR)
CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def test_deepseek_attention_has_mla_five_projections() -> None:
    """DeepSeek-V3 config.json: hidden 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512,
    qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128."""
    m = PRESETS["deepseek-r1"].model
    assert attention_linears(m) == [
        (7168, 1536),  # q_a_proj
        (1536, 128 * 192),  # q_b_proj
        (7168, 512 + 64),  # kv_a_proj_with_mqa
        (512, 128 * 256),  # kv_b_proj
        (128 * 128, 7168),  # o_proj
    ]
    per_layer = 7168 + 1536 + 1536 + 24576 + 7168 + 576 + 512 + 32768 + 16384 + 7168
    assert lora_params(m, 16) == 16 * per_layer * 61  # 97.0 M; q, k, v, o at 56 and an MLP: 69 M


def test_a_pasted_deepseek_config_gives_the_same_adapters() -> None:
    raw = json.loads((CONFIGS / "deepseek-v3.json").read_text())
    fields = model_fields_from_hf_config(raw)
    m = PRESETS["deepseek-v3"].model
    for name in ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim"):
        assert fields[name] == getattr(m, name), name


@pytest.mark.parametrize("preset", ["mixtral-8x7b", "deepseek-r1"])
def test_an_moe_model_counts_the_layers_its_time_runs(preset: str) -> None:
    m = PRESETS[preset].model
    linears = block_linears(m)
    assert linears == attention_linears(m)  # the experts carry no adapter
    assert m.layers is not None
    assert lora_params(m, 8) == 8 * sum(i + o for i, o in linears) * m.layers


def test_mixtral_counts_its_attention_only() -> None:
    m = PRESETS["mixtral-8x7b"].model  # hidden 4096, 8 KV heads of 128
    per_layer = (4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096)
    assert lora_params(m, 16) == 16 * per_layer * 32  # 13.6 M; one expert's MLP had made 42 M


def test_a_dense_model_keeps_every_linear_layer() -> None:
    m = PRESETS["llama-3-8b"].model
    assert lora_params(m, 16) == 41_943_040  # PEFT's all-linear count for Llama 3 8B at r 16


def test_the_words_name_what_is_counted() -> None:
    r1 = _lora_targets(PRESETS["deepseek-r1"].model, "qlora", 16)[0]
    for name in ("q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"):
        assert name in r1
    assert "q, k, v, o" not in r1 and "97 M adapter parameters" in r1
    assert "experts carry none" in r1
    mixtral = _lora_targets(PRESETS["mixtral-8x7b"].model, "lora", 16)[0]
    assert "q_proj, k_proj, v_proj, o_proj" in mixtral and "14 M adapter parameters" in mixtral
    assert "gate, up, down" not in mixtral
    llama = _lora_targets(PRESETS["llama-3-8b"].model, "lora", 16)[0]
    assert "(q, k, v, o, gate, up, down)" in llama


def test_full_rank_reads_mla_latents() -> None:
    """MLA's narrowest adapted layer is its 512-wide key-value latent, not a 56-wide k."""
    m = PRESETS["deepseek-r1"].model
    assert _full_rank(m, 256) == []
    said = _full_rank(m, 512)
    assert said and "kv_lora_rank" in said[0] and "(512)" in said[0]

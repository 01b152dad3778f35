"""A pasted config.json with YaRN rope scaling serves original positions × factor tokens, as
vLLM derives max_model_len: Qwen3 with Qwen's YaRN block had read 40,960."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.domain.hf_config import HfConfigError, parse_hf_config

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def _qwen3(**rope: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = json.loads((CONFIGS / "qwen3-30b-a3b.json").read_text())
    if rope:
        cfg["rope_scaling"] = rope
    return cfg


def test_yarn_extends_the_context() -> None:
    assert parse_hf_config(_qwen3()).max_context == 40_960
    yarn = dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=32_768)
    assert parse_hf_config(_qwen3(**yarn)).max_context == 131_072
    # another scaling, or YaRN without its original length, keeps the positions
    assert parse_hf_config(_qwen3(rope_type="linear", factor=4.0)).max_context == 40_960
    assert parse_hf_config(_qwen3(rope_type="yarn", factor=4.0)).max_context == 40_960


@pytest.mark.parametrize("factor", ["4", True, 0.5, float("inf")])
def test_a_bad_factor_names_its_field(factor: object) -> None:
    with pytest.raises(HfConfigError) as e:
        parse_hf_config(
            _qwen3(rope_type="yarn", factor=factor, original_max_position_embeddings=32_768)
        )
    assert e.value.field == "rope_scaling.factor"


def test_a_bad_original_length_names_its_rope_scaling_field() -> None:
    with pytest.raises(HfConfigError) as e:
        parse_hf_config(
            _qwen3(rope_type="yarn", factor=4.0, original_max_position_embeddings="32k")
        )
    assert e.value.field == "rope_scaling.original_max_position_embeddings"
    # a bad factor is refused even where the original length is missing
    with pytest.raises(HfConfigError):
        parse_hf_config(_qwen3(rope_type="yarn", factor="4"))

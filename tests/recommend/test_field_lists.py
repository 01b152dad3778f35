"""Field lists are derived from the models, so they cannot drift apart."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from app.domain.workload import ModelSpec
from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import model_from_dict
from tests.domain.fixtures import A100, H100, RULES

# a preset's operator tables come from data/operators/, never from a request; an encoder's
# cross-attention K/V layers are set by the engine when it splits an encoder-decoder
# (app/domain/seq2seq.py), never by a request either
ENGINE_ONLY = {"operators", "decoder_operators", "cross_kv_layers"}
MODEL_SPEC_FIELDS = {f.name for f in fields(ModelSpec)} - ENGINE_ONLY
INPUT_ONLY = {"hf_config"}  # a pasted config.json, read into the spec's fields
DERIVED = {"kv_bytes_per_token_16bit"}  # echoed, computed from the spec


def test_model_in_out_and_spec_have_the_same_fields() -> None:
    assert set(s.ModelIn.model_fields) - INPUT_ONLY == MODEL_SPEC_FIELDS
    assert set(s.ModelOut.model_fields) - DERIVED == MODEL_SPEC_FIELDS


def test_every_model_field_given_is_echoed() -> None:
    model: dict[str, Any] = {
        "family": "cnn", "params": 25e6, "gflops_per_sample": 8.2, "input_size": 224,
        "activation_mb_per_sample": 50.0, "passes_per_sample": 1,
    }  # fmt: skip
    req = s.RecommendationRequest.model_validate({"workload": {"task": "training", "model": model}})
    echoed = service.recommend(req, [A100, H100], RULES).workload.model.model_dump()
    for key, value in model.items():
        assert echoed[key] == value, key


def test_a_preset_can_set_every_model_field() -> None:
    raw = {
        "family": "cnn",
        "params": "2.5e7",
        "gflops_per_sample": 8.2,
        "layers": "50",
        "activation_mb_per_sample": 50.0,
    }
    m = model_from_dict(raw)
    assert m.activation_mb_per_sample == 50.0
    assert m.params == 2.5e7 and m.layers == 50 and isinstance(m.layers, int)


def test_a_config_json_says_whether_the_lm_head_is_tied() -> None:
    """The head's tying sizes QLoRA's 16-bit head and autocast's weight copies."""
    import json
    from pathlib import Path

    from app.recommend.workloads import model_fields_from_hf_config

    configs = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
    cfg = json.loads((configs / "llama-3.1-8b.json").read_text())
    assert model_fields_from_hf_config(cfg)["tied_embeddings"] is False
    assert model_fields_from_hf_config({**cfg, "tie_word_embeddings": True})["tied_embeddings"]


def test_a_config_json_says_latent_attention_and_shared_experts() -> None:
    """They set the kernels an LLM decode step runs per layer (app/domain/llm_step.py)."""
    import json
    from pathlib import Path

    from app.recommend.workloads import model_fields_from_hf_config

    configs = Path(__file__).resolve().parents[1] / "data" / "hf_configs"

    def fields(name: str) -> dict[str, Any]:
        return model_fields_from_hf_config(json.loads((configs / name).read_text()))

    ds = fields("deepseek-v3.json")
    assert ds["attention"] == "mla" and ds["shared_experts"] == 1
    qwen = fields("qwen3-30b-a3b.json")
    assert qwen["attention"] is None and qwen["shared_experts"] == 0  # no shared expert
    dense = fields("llama-3.1-8b.json")
    assert dense["attention"] is None and dense["shared_experts"] is None  # not an MoE

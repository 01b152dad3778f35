"""LLM runtimes and quantised weight formats take language models only: a CNN, ViT classifier,
diffusion UNet or MLP asked to run on vLLM or in GGUF Q4 is a 422 naming the field, not a row
priced with an LLM engine's efficiencies (or an LLM study's quality cost)."""

from __future__ import annotations

import pytest

from app.errors import InvalidInput
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload
from app.vocab import LLM_RUNTIMES


def _resolve(**workload: object) -> str:
    spec, _ = resolve_workload(s.WorkloadIn.model_validate({"task": "inference", **workload}))
    return spec.runtime


@pytest.mark.parametrize("runtime", LLM_RUNTIMES)
@pytest.mark.parametrize("preset", ["resnet-50", "sdxl", "vit-b-16"])
def test_an_llm_runtime_refuses_a_model_it_does_not_run(preset: str, runtime: str) -> None:
    with pytest.raises(InvalidInput) as e:
        _resolve(preset=preset, runtime=runtime)
    assert e.value.field == "workload.runtime"


@pytest.mark.parametrize("fmt", ["awq", "q4_k_m", "nf4", "nvfp4"])
def test_a_weight_format_refuses_a_model_that_is_not_a_language_model(fmt: str) -> None:
    with pytest.raises(InvalidInput) as e:
        _resolve(preset="resnet-50", quantization=fmt)
    assert e.value.field == "workload.quantization"


def test_language_models_still_run_on_llm_runtimes_and_formats() -> None:
    assert _resolve(preset="llama-3-8b", runtime="vllm") == "vllm"
    assert _resolve(preset="llama-3-8b", quantization="q4_k_m") == "llama.cpp"
    assert _resolve(preset="whisper-large-v3", runtime="vllm") == "vllm"
    # a CNN keeps its own runtimes
    assert _resolve(preset="resnet-50", runtime="tensorrt") == "tensorrt"


def test_training_an_fp8_inference_preset_starts_from_bf16_and_says_so() -> None:
    def resolved(**workload: object) -> tuple[str, list[str]]:
        spec, warnings = resolve_workload(
            s.WorkloadIn.model_validate({"preset": "llama-3.1-405b", **workload})
        )
        return spec.precision, warnings

    assert resolved(task="inference")[0] == "fp8"  # the checkpoint it serves
    precision, warnings = resolved(task="fine-tuning", peft="lora")
    assert precision == "bf16"
    assert any("published inference checkpoint" in w for w in warnings)
    assert resolved(task="fine-tuning", peft="lora", precision="fp8")[0] == "fp8"  # asked
    assert resolved(task="training")[0] == "bf16"

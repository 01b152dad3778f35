"""A closed field's word is read in any case (expert review xr, a home-card buyer): llama.cpp,
every GGUF file name and Ollama's tags write "Q4_K_M" / "q4_K_M", PEFT's own docs "LoRA" and
"QLoRA", vendors "BF16" and "vLLM"; each had been a 422 that listed the lower-case word, while a
vendor and a preset already read in any case. A word that is not one of the field's own after
folding is still refused with the list."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.recommend.schemas import ConstraintsIn, RecommendationRequest, ServingIn, WorkloadIn


@pytest.mark.parametrize(
    ("field", "written", "read"),
    [
        ("quantization", "Q4_K_M", "q4_k_m"),
        ("quantization", "q4_K_M", "q4_k_m"),
        ("quantization", "MXFP4", "mxfp4"),
        ("peft", "LoRA", "lora"),
        ("peft", "QLoRA", "qlora"),
        ("precision", "BF16", "bf16"),
        ("task", "Inference", "inference"),
        ("optimizer", "AdamW", "adamw"),
        ("runtime", "vLLM", "vllm"),
        ("runtime", "TensorRT-LLM", "tensorrt-llm"),
        ("runtime", " SGLang ", "sglang"),
    ],
)
def test_workload_words_read_in_any_case(field: str, written: str, read: str) -> None:
    workload = WorkloadIn.model_validate({"preset": "llama-3.1-8b", field: written})
    assert getattr(workload, field) == read


def test_vulkan_runtime_folds_in_any_case() -> None:
    workload = WorkloadIn.model_validate({"preset": "llama-3.1-8b", "runtime": "llama.cpp-Vulkan"})
    assert (workload.runtime, workload.gpu_backend) == ("llama.cpp", "vulkan")
    assert workload.vulkan_runtime_named


def test_serving_and_constraint_words_read_in_any_case() -> None:
    serving = ServingIn.model_validate({"concurrent_requests": 4, "kv_cache_precision": "FP8"})
    assert serving.kv_cache_precision == "fp8"
    constraints = ConstraintsIn.model_validate({"acquisition": "Rent", "framework": "PyTorch"})
    assert (constraints.acquisition, constraints.framework) == ("rent", "pytorch")
    request = RecommendationRequest.model_validate(
        {"workload": {"preset": "llama-3.1-8b"}, "objective": "Best_Value"}
    )
    assert request.objective == "best_value"


@pytest.mark.parametrize(("field", "written"), [("quantization", "Q5_K_M"), ("peft", "DoRA")])
def test_an_unknown_word_is_still_refused_with_the_list(field: str, written: str) -> None:
    with pytest.raises(ValidationError) as caught:
        WorkloadIn.model_validate({"preset": "llama-3.1-8b", field: written})
    message = str(caught.value)
    assert written in message
    assert "'q4_k_m'" in message or "'qlora'" in message


def test_unknown_runtime_keeps_its_hint() -> None:
    with pytest.raises(ValidationError, match="use 'llama.cpp'"):
        WorkloadIn.model_validate({"preset": "llama-3.1-8b", "runtime": "Ollama"})

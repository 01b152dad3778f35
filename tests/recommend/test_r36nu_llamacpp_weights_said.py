"""New user's walk (thirty-sixth session): a Mac user asking what runs Llama 3 70B at home
with llama.cpp (what Ollama runs) read a bf16 answer — one Mac, 2.9 tokens/s — and nothing
over the table said that the 4-bit GGUF file they run is priced otherwise (a row's tip said
so, folded in its "Why"). llama.cpp asked with no weight format is now said, as an assumed
blank is, naming the field that prices the file they run."""

from __future__ import annotations

from typing import Any

import pytest

from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload


def _said(**work: Any) -> list[str]:
    body = {"preset": "llama-3-70b", "task": "inference", **work}
    _, warnings = resolve_workload(s.WorkloadIn.model_validate(body))
    return [w for w in warnings if w.startswith("weight format not given")]


@pytest.mark.parametrize("runtime", ["llama.cpp", "llama.cpp-vulkan"])
def test_llamacpp_without_a_format_says_what_it_prices(runtime: str) -> None:
    said = _said(runtime=runtime)
    assert len(said) == 1, said
    assert "bf16 weights (a BF16 GGUF)" in said[0]
    assert "quantization q4_k_m" in said[0]


def test_serving_on_llamacpp_says_it_too() -> None:
    assert _said(task="serving", runtime="llama.cpp", serving={"concurrent_requests": 2}), (
        "serving on llama.cpp with no format"
    )


@pytest.mark.parametrize(
    "work",
    [
        {"runtime": "llama.cpp", "quantization": "q4_k_m"},  # a format given
        {"runtime": "llama.cpp", "precision": "fp16"},  # the 16-bit file asked for
        {"quantization": "q8_0"},  # a GGUF format picks llama.cpp itself
        {"runtime": "vllm"},  # not llama.cpp
        {},  # Transformers' generate
    ],
)
def test_nothing_is_said_where_the_weights_are_the_users(work: dict[str, Any]) -> None:
    assert _said(**work) == []


def test_a_published_4bit_checkpoint_is_not_said_assumed() -> None:
    body = {"preset": "gpt-oss-20b", "task": "inference", "runtime": "llama.cpp"}
    _, warnings = resolve_workload(s.WorkloadIn.model_validate(body))
    assert not [w for w in warnings if w.startswith("weight format not given")]

"""The words a row gives name runtimes, frameworks and backends as the forms do ("vLLM on
ROCm is experimental", "TensorFlow has no ROCm build"), not by the request's ids ("vllm on
rocm", "tensorflow has no rocm build"); the ids stay in the rows' fields."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

from app.domain import compat, rank, serving_step
from app.domain import evaluate as ev
from app.domain.compat import FeatureRule, FrameworkRule, Rules
from tests.domain.fixtures import A100, MI300X, llm_inference

NOTE = "fewer kernels than CUDA"


def _vllm_rules(status: str) -> Rules:
    return Rules(
        frameworks=(FrameworkRule("pytorch", "rocm", "amd", gfx_targets=("gfx942",)),),
        features=(
            FeatureRule(
                "runtime:vllm", "amd", gfx_targets=("gfx942",), backends=("rocm",),
                status=status, notes=NOTE,
            ),
        ),
    )  # fmt: skip


def _gate(runtime: str, rules: Rules) -> Any:
    # _runtime_gate reads the context's rules only
    return ev._runtime_gate(MI300X, runtime, SimpleNamespace(rules=rules), "rocm")  # type: ignore[arg-type]


def test_an_experimental_rocm_vllm_is_said_in_words_for_inference() -> None:
    assert _gate("vllm", _vllm_rules("experimental")) == (
        None,
        f"vLLM on ROCm is experimental: {NOTE}",
    )


def test_an_unsupported_rocm_vllm_is_refused_in_words() -> None:
    assert _gate("vllm", _vllm_rules("unsupported")) == (
        f"vLLM does not run on MI300X (ROCm): {NOTE}",
        None,
    )


def test_an_experimental_rocm_vllm_is_said_in_words_for_serving() -> None:
    work = llm_inference(runtime="vllm", runtime_given=True)
    runtime, why = serving_step.runtime_for(MI300X, "rocm", work, _vllm_rules("experimental"))
    assert runtime == "vllm"  # the id stays the row's value
    assert why == f"vLLM on MI300X (ROCm) is experimental: {NOTE}"


def test_a_framework_with_no_build_for_the_card_is_refused_in_words() -> None:
    no_build = Rules(frameworks=(FrameworkRule("tensorflow", "rocm", "amd", status="unsupported"),))
    assert compat.framework_support(MI300X, "tensorflow", no_build).reason == (
        "TensorFlow has no ROCm build for this GPU"
    )
    none_here = Rules(frameworks=(FrameworkRule("jax", "cuda", "nvidia"),))
    assert compat.framework_support(MI300X, "jax", none_here).reason == (
        "JAX does not support ROCm"
    )


def test_a_card_outside_a_frameworks_targets_is_refused_in_words() -> None:
    rocm = Rules(frameworks=(FrameworkRule("pytorch", "rocm", "amd", gfx_targets=("gfx90a",)),))
    assert compat.framework_support(MI300X, "pytorch", rocm).reason == (
        "gfx942 is not a supported ROCm target"
    )
    old = dataclasses.replace(A100, compute_capability="5.0")
    jax = Rules(frameworks=(FrameworkRule("jax", "cuda", "nvidia", min_compute_capability="5.2"),))
    assert compat.framework_support(old, "jax", jax).reason == (
        "current JAX CUDA builds need compute capability ≥ 5.2; this GPU has 5.0"
    )


def test_the_torch_compile_line_names_it_shortly() -> None:
    # the form's label explains what is priced; the row's line only names the runtime
    assert rank._assumes_said("torch-compile", "cuda", "none") == "Assumes torch.compile on CUDA."
    assert rank._assumes_said("llama.cpp", "mps", "q4_k_m") == (
        "Assumes llama.cpp on Metal, GGUF Q4_K_M weights."
    )

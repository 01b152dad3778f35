"""Review rvB #3 and #5: Qwen3's presets serve 131,072 tokens with Qwen's YaRN recipe (the
serve command turns it on only where the context it asks exceeds the native 40,960, with
Qwen's short-text caveat), and a load whose mean + spread exceeds the model's context is a 422
naming the spread."""

from __future__ import annotations

import json
import shlex
from types import SimpleNamespace
from typing import Any, cast

import pytest

from app.domain.serving import WEIGHT_FORMAT
from app.errors import InvalidInput
from app.recommend import deploy, presets
from app.recommend import schemas as s
from app.recommend.workloads import resolve_workload, resolved_out

QWEN3 = ("qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b")


def _resolve(**workload: Any) -> s.ResolvedWorkload:
    work, _ = resolve_workload(s.WorkloadIn.model_validate(workload))
    return resolved_out(work)


def _row(runtime: str) -> s.Recommendation:
    """A one-replica serving row on 8 GPUs with no rented instance: what deploy_for reads."""
    sv = SimpleNamespace(
        runtime=runtime, weight_precision="bf16", kv_cache_precision="bf16",
        weight_format=WEIGHT_FORMAT["bf16"], max_concurrency=16, replicas=1,
        gpus_per_replica=8, tensor_parallel=8, multi_gpu="tensor",
    )  # fmt: skip
    memory = SimpleNamespace(breakdown={"weights": 470.0}, available_gb=640.0)
    gpu = SimpleNamespace(vendor="nvidia", slug="gpu", name="GPU", compute_capability=None)
    return cast(s.Recommendation, SimpleNamespace(serving=sv, offer=None, memory=memory, gpu=gpu))


def _args(
    runtime: str, context: int, preset: str = "qwen3-235b-a22b"
) -> tuple[list[str], list[str]]:
    long = deploy.long_contexts()[preset]
    out = deploy.deploy_for(_row(runtime), "Qwen/Qwen3-235B-A22B", context, None, long)
    assert out is not None
    return shlex.split(out.command.splitlines()[-1]), out.notes


@pytest.mark.parametrize("preset", QWEN3)
def test_qwen3_presets_carry_the_yarn_context_with_its_source(preset: str) -> None:
    p = presets.load_presets()[preset]
    long = deploy.long_contexts()[preset]
    assert p.model.max_context == 131_072 == long.original * long.factor
    assert (long.native, long.rope_type, long.original) == (40_960, "yarn", 32_768)
    assert (
        long.source in p.sources and "github.com/QwenLM/Qwen3" in p.source_refs[long.source]["url"]
    )


def test_a_128k_question_is_accepted_and_beyond_it_the_422_names_max_context() -> None:
    sv = {"concurrent_requests": 4, "prompt_tokens": 100_000, "output_tokens": 1000}
    w = _resolve(preset="qwen3-235b-a22b", task="serving", serving=sv)
    assert deploy.context_for(w, 40_960) == 131_072  # twice the mean, held to the context
    with pytest.raises(InvalidInput) as e:
        _resolve(preset="qwen3-235b-a22b", task="serving", serving={**sv, "prompt_tokens": 140_000})
    assert e.value.field == "workload.serving.prompt_tokens"
    assert "131,072" in e.value.message and "model.max_context" in e.value.message


def test_a_load_that_fits_the_native_context_is_served_without_yarn() -> None:
    # 8,000 + 1,000 with no spread: twice the mean (18,000) fits; 30,000 + 1,000: twice the
    # mean would be 62,000, but every stated length fits 40,960, where Qwen advises no YaRN
    for prompt, want in ((8000, 18_000), (30_000, 40_960)):
        sv = {"concurrent_requests": 4, "prompt_tokens": prompt, "output_tokens": 1000}
        w = _resolve(preset="qwen3-32b", task="serving", serving=sv)
        assert deploy.context_for(w, 40_960) == want
        args, notes = _args("vllm", want)
        assert "--hf-overrides" not in args and not any("RoPE" in n for n in notes)
    # a spread past the native context is a need: mean + spread
    sv = {"concurrent_requests": 4, "prompt_tokens": 30_000, "output_tokens": 1000,
          "prompt_tokens_spread": 20_000}  # fmt: skip
    w = _resolve(preset="qwen3-32b", task="serving", serving=sv)
    assert deploy.context_for(w, 40_960) == 51_000


def test_vllm_gets_yarn_through_hf_overrides_sized_to_the_context() -> None:
    args, notes = _args("vllm", 131_072)
    assert args[args.index("--max-model-len") + 1] == "131072"
    over = json.loads(args[args.index("--hf-overrides") + 1])
    assert over == {"rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                     "original_max_position_embeddings": 32768}}  # fmt: skip
    assert args[-2:] == ["--port", "8000"]
    (said,) = [n for n in notes if "RoPE" in n]
    assert "40,960" in said and "short prompts" in said
    # Qwen: size the factor to the context (65,536 tokens: 2.0); vLLM's longest length is
    # original × factor, which must hold the context
    args, _ = _args("vllm", 51_000)
    factor = json.loads(args[args.index("--hf-overrides") + 1])["rope_scaling"]["factor"]
    assert factor == 2.0 and 32_768 * factor >= 51_000


def test_sglang_and_llama_cpp_get_their_own_yarn_flags() -> None:
    args, _ = _args("sglang", 131_072)
    over = json.loads(args[args.index("--json-model-override-args") + 1])
    assert over["rope_scaling"]["factor"] == 4.0
    # SGLang derives the context from max_position_embeddings when rope_scaling names the
    # original length: --context-length 131072 needs it raised too
    assert over["max_position_embeddings"] >= int(args[args.index("--context-length") + 1])
    args, _ = _args("llama.cpp", 131_072)
    i = args.index("--rope-scaling")
    assert args[i : i + 6] == ["--rope-scaling", "yarn", "--rope-scale", "4", "--yarn-orig-ctx",
                               "32768"]  # fmt: skip
    # trtllm-serve takes it from config.json alone: the note says what to add
    args, notes = _args("tensorrt-llm", 131_072)
    assert not any("rope" in a for a in args)
    assert any('"rope_scaling"' in n and "config.json" in n for n in notes)


@pytest.mark.parametrize(
    ("spreads", "field"),
    [
        ({"prompt_tokens_spread": 200_000}, "workload.serving.prompt_tokens_spread"),
        ({"output_tokens_spread": 131_000}, "workload.serving.output_tokens_spread"),
        ({"prompt_tokens_spread": 100_000, "output_tokens_spread": 31_000},
         "workload.serving.prompt_tokens_spread"),
    ],
)  # fmt: skip
def test_mean_plus_spread_past_the_context_is_refused_naming_the_spread(
    spreads: dict[str, int], field: str
) -> None:
    # 1,000 + 300 tokens a request on average: KV had been reserved for 201,300 of 131,072
    with pytest.raises(InvalidInput) as e:
        _resolve(preset="llama-3.1-70b", task="serving", serving={"requests_per_s": 1, **spreads})
    assert e.value.field == field and "131,072" in e.value.message
    # up to the context it is a load
    _resolve(preset="llama-3.1-70b", task="serving",
             serving={"requests_per_s": 1, "prompt_tokens_spread": 131_072 - 1300})  # fmt: skip

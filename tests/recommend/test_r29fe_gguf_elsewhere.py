"""A GGUF weight format runs at its bits on llama.cpp alone: named on another runtime it is a
422 on workload.quantization, for inference as for serving (workloads.refuse_gguf_elsewhere,
one check). Transformers loads a GGUF file by dequantising it to fp32 unless torch_dtype says
otherwise (huggingface/transformers docs/source/en/gguf.md, v4.49.0): inference had priced
Llama 3 70B Q4_K_M under Transformers at 4 bits, 6.3 GB a GPU on 8 cards."""

from __future__ import annotations

import pytest

from app.errors import InvalidInput
from app.recommend import schemas as s
from app.recommend.workloads import refuse_gguf_elsewhere, resolve_workload


def _resolve(**workload: object) -> str:
    spec, _ = resolve_workload(s.WorkloadIn.model_validate({"preset": "llama-3-8b", **workload}))
    return spec.runtime


@pytest.mark.parametrize("fmt", ["q4_k_m", "q4_0", "q8_0"])
def test_inference_on_transformers_refuses_a_gguf_format_naming_the_dequantisation(
    fmt: str,
) -> None:
    with pytest.raises(InvalidInput) as err:
        _resolve(task="inference", runtime="transformers", quantization=fmt)
    assert err.value.field == "workload.quantization"
    said = str(err.value)
    assert "set runtime llama.cpp" in said and "dequantising it" in said


@pytest.mark.parametrize("runtime", ["vllm", "sglang", "tensorrt-llm", "mlx", "torch-compile"])
def test_inference_on_another_runtime_refuses_a_gguf_format(runtime: str) -> None:
    with pytest.raises(InvalidInput) as err:
        _resolve(task="inference", runtime=runtime, quantization="q4_k_m")
    assert err.value.field == "workload.quantization"
    assert f"{runtime} is not modelled running GGUF files" in str(err.value)


def test_llama_cpp_and_the_default_runtime_still_run_gguf() -> None:
    assert _resolve(task="inference", runtime="llama.cpp", quantization="q4_k_m") == "llama.cpp"
    assert _resolve(task="inference", quantization="q8_0") == "llama.cpp"
    # a format that is not GGUF stays where it runs
    assert _resolve(task="inference", runtime="transformers", quantization="awq") == "transformers"


def test_serving_and_inference_say_the_same_check() -> None:
    """Both tasks raise from the one function, with the task named."""
    said = {}
    for task in ("inference", "serving"):
        with pytest.raises(InvalidInput) as err:
            refuse_gguf_elsewhere("q4_k_m", "transformers", task)
        said[task] = str(err.value)
    assert said["inference"].removeprefix("inference") == said["serving"].removeprefix("serving")
    refuse_gguf_elsewhere("q4_k_m", "llama.cpp", "serving")  # nothing raised
    refuse_gguf_elsewhere("awq", "vllm", "inference")
    with pytest.raises(InvalidInput) as err:
        _resolve(task="serving", runtime="transformers", quantization="q4_k_m",
                 serving={"concurrent_requests": 4})  # fmt: skip
    assert str(err.value) == said["serving"]

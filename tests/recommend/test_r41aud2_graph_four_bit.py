"""TensorFlow int4 LLM inference was priced as AWQ/GPTQ-style W4A16 weights without a word,
though the service refuses an explicit AWQ or GPTQ format under TensorFlow because those load
only in PyTorch runtimes and llama.cpp. 4-bit weights asked of a TensorFlow or JAX runtime
(named, or the framework's own) are refused the same way, naming the field; and an explicit
format is refused under a named TensorFlow runtime as under the framework."""

from __future__ import annotations

from typing import Any

import pytest

from app.errors import InvalidInput
from app.recommend import schemas as s
from tests.support import recommend_with

GPT2 = {"preset": "gpt-2", "task": "inference", "batch_size": 1}


def _recommend(catalog: Any, workload: dict[str, Any], **cons: Any) -> s.RecommendationResponse:
    body = {"workload": workload, "constraints": {"acquisition": "rent", **cons}, "limit": 1}
    return recommend_with(catalog, body)


@pytest.mark.parametrize(
    ("workload", "cons", "field"),
    [
        ({**GPT2, "runtime": "tensorflow", "precision": "int4"}, {"framework": "tensorflow"},
         "workload.precision"),
        ({**GPT2, "runtime": "tensorflow", "precision": "int4"}, {}, "workload.precision"),
        ({**GPT2, "precision": "int4"}, {"framework": "tensorflow"}, "workload.precision"),
        ({**GPT2, "precision": "int4"}, {"framework": "jax"}, "workload.precision"),
        ({**GPT2, "runtime": "tensorflow", "quantization": "awq"}, {}, "workload.quantization"),
    ],
)  # fmt: skip
def test_four_bit_weights_under_a_graph_framework_name_the_field(
    shipped_catalog: Any, workload: dict[str, Any], cons: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        _recommend(shipped_catalog, workload, **cons)
    assert err.value.field == field
    assert "PyTorch runtimes and llama.cpp" in str(err.value)


def test_the_same_weights_under_pytorch_still_run(shipped_catalog: Any) -> None:
    out = _recommend(shipped_catalog, {**GPT2, "precision": "int4"})
    assert out.recommendations and out.recommendations[0].precision == "int4"

"""A described model whose heads do not split its width, or whose query heads do not split
among its KV heads, is refused naming the field: 33 heads over a hidden size of 4,096 had
been priced at 124.1-wide heads (and 32 heads over 5 KV heads at 6.4 query heads a group)
without a word. A model that names its own head width (config.json's head_dim) still runs."""

from __future__ import annotations

from typing import Any

import pytest

from app.errors import InvalidInput
from app.recommend import schemas as s
from tests.support import recommend_with

SHAPE = {"family": "decoder", "params": 7e9, "layers": 32, "hidden_size": 4096}


def _recommend(catalog: Any, workload: dict[str, Any]) -> s.RecommendationResponse:
    return recommend_with(catalog, {"workload": workload, "limit": 1})


@pytest.mark.parametrize(
    ("workload", "field", "words"),
    [
        ({"task": "inference", "model": {**SHAPE, "num_heads": 33}},
         "workload.model.num_heads", "not a multiple of num_heads 33 (heads 124.1 wide)"),
        ({"task": "inference", "model": {**SHAPE, "num_heads": 32, "num_kv_heads": 5}},
         "workload.model.num_kv_heads", "num_heads 32 is not a multiple of num_kv_heads 5"),
        ({"preset": "llama-3.1-8b", "model": {"num_heads": 33}},
         "workload.model.num_heads", "not a multiple of num_heads 33"),
    ],
)  # fmt: skip
def test_heads_that_do_not_split_are_refused_naming_the_field(
    shipped_catalog: Any, workload: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        _recommend(shipped_catalog, workload)
    assert err.value.field == field
    assert words in str(err.value)


def test_a_model_naming_its_head_width_still_runs(shipped_catalog: Any) -> None:
    model = {**SHAPE, "num_heads": 33, "num_kv_heads": 11, "explicit_head_dim": 128}
    out = _recommend(shipped_catalog, {"task": "inference", "model": model})
    assert out.recommendations

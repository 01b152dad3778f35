"""The columns' prompt attention (llm_step.dense_columns' ``prompt_attn``) works out each
fused row's arguments once, not once a step: every row is still
``prompt_attention_seconds`` of its own replica to the last bit, for a step's prompt tokens
as one float and as a column with rows that take none (a micro-batched step), and a fused
kernel's cache key hashes as its fields do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import llm_step
from app.domain.gpu import GpuSpec
from tests.domain.test_llm_bound_arrays import _job
from tests.domain.test_r36sp_step_scalars import _sets

DATA = Path(__file__).resolve().parents[2] / "data"
PROMPT = 2048.0


@pytest.fixture(scope="module")
def catalog() -> list[GpuSpec]:
    return read_gpu_specs(DATA)


def _want(dense: llm_step.Columns, reps: list[llm_step.Replica], f: list[float]) -> list[float]:
    return [rep.prompt_attention_s(f[i], PROMPT) for i, rep in enumerate(reps)]


@pytest.mark.parametrize("runtime", ["vllm", "transformers"])
def test_prompt_attention_columns_are_each_replicas(catalog: list[GpuSpec], runtime: str) -> None:
    dense, reps = _sets(_job("llama-3-8b", runtime=runtime), catalog)
    fused = [r for r in reps if r.fused is not None]
    assert len(fused) > 100  # the fused branch is what the columns now take apart
    one = 8192.0
    got = dense.prompt_attn(one, PROMPT).tolist()
    assert got == _want(dense, reps, [one] * len(reps))
    # a column of prompt tokens, some rows taking none (they keep the unfused expression's 0)
    column = np.where(np.arange(len(reps)) % 3 == 0, 0.0, 4096.0)
    got = dense.prompt_attn(column, PROMPT).tolist()
    assert got == _want(dense, reps, column.tolist())
    assert any(g == 0.0 for g in got) and any(g > 0.0 for g in got)


def test_a_fused_kernel_keys_its_cache_as_its_fields() -> None:
    a = llm_step.FusedAttention(1.5e14, 108, 16.0)
    assert hash(a) == hash((1.5e14, 108, 16.0))
    assert a == llm_step.FusedAttention(1.5e14, 108, 16.0)
    assert a._replace(flops=2.0).flops == 2.0 and a.sms == 108

"""Transformers' int8 rows (bitsandbytes LLM.int8(), as Transformers loads 8-bit weights with
no format named) cited Kurtic et al.'s W8A8-INT loss, a different kind of int8. They now cite
Dettmers et al.'s LLM.int8() paper for its own stated result; vLLM's int8 keeps W8A8's figure."""

from __future__ import annotations

from typing import Any

from app.recommend import quality, service
from app.recommend import schemas as s

LLM_INT8 = "https://arxiv.org/abs/2208.07339"
W8A8 = "https://arxiv.org/abs/2411.02355"


def test_transformers_int8_is_costed_as_llm_int8() -> None:
    fmt = quality.runtime_format("transformers", "int8")
    note = quality.cost_note("int8", fmt, family="decoder")
    assert note is not None and LLM_INT8 in note and W8A8 not in note
    assert note.startswith("quality: int8 (bitsandbytes LLM.int8()) weights")
    assert "175B-parameter" in note and "without performance degradation" in note
    # other runtimes' int8 (vLLM's W8A8) keep the W8A8-INT figure
    assert quality.runtime_format("vllm", "int8") is None
    assert W8A8 in (quality.cost_note("int8") or "")


def _warnings(catalog: Any, runtime: str | None) -> list[str]:
    work = {"preset": "llama-3.1-8b", "task": "inference", "precision": "int8", "batch_size": 1}
    if runtime:
        work["runtime"] = runtime
    req = s.EstimateRequest.model_validate({"gpu": "rtx-4090", "workload": work})
    gpu = next(g for g in catalog[0] if g.slug == "rtx-4090")
    out = service.estimate(req, gpu, catalog[2])
    assert out.result is not None
    return [w for w in out.result.warnings if w.startswith("quality: ")]


def test_a_transformers_int8_row_cites_the_llm_int8_paper(shipped_catalog: Any) -> None:
    (said,) = _warnings(shipped_catalog, None)
    assert LLM_INT8 in said and W8A8 not in said
    (vllm,) = _warnings(shipped_catalog, "vllm")
    assert W8A8 in vllm and LLM_INT8 not in vllm

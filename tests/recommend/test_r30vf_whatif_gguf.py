"""A Transformers LLM inference answer's what-ifs try llama.cpp with a GGUF Q4_K_M file (review
30, vf; issue 23: "Llama 3 70B at home for $3,000 can never say a 64 GB Mac or two used
3090s"). The int4 lever stays under Transformers, whose 4-bit kernels no Mac and no mixed rig
runs; the GGUF file under llama.cpp is what people run such a model on at home."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service
from app.recommend.whatif import variations
from app.recommend.workloads import resolve_workload
from tests.domain.fixtures import M2, RTX3090, RULES

LABEL = "runtime llama.cpp with GGUF Q4_K_M instead of transformers bf16"


def _variations(workload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    req = s.RecommendationRequest.model_validate({"workload": workload})
    work, _ = resolve_workload(req.workload)
    return dict(variations(work, req))


def test_the_gguf_lever_is_tried_for_transformers_llm_inference_only() -> None:
    tried = _variations({"preset": "llama-3-70b", "task": "inference"})
    assert tried[LABEL] == {
        "workload": {"runtime": "llama.cpp", "quantization": "q4_k_m", "precision": None}
    }
    # not where the question pins a runtime, nor for training or a CNN (a pinned AWQ, GPTQ or
    # NF4 under Transformers gets the same 4 bits as a GGUF file since r31:
    # tests/recommend/test_r31vf_mac_4bit.py)
    for other in (
        {"preset": "llama-3-70b", "task": "inference", "runtime": "vllm"},
        {"preset": "llama-3-70b", "task": "inference", "runtime": "llama.cpp"},
        {"preset": "llama-3-8b", "task": "fine-tuning", "peft": "lora"},
        {"preset": "resnet-50", "task": "inference"},
    ):
        assert not any("llama.cpp" in k for k in _variations(other)), other


def test_the_gguf_lever_opens_cards_the_bf16_question_cannot_use() -> None:
    """On a 24 GB card and a 24 GB Mac, Llama 3 8B's bf16 weights fit; a 70B's never do, but
    its Q4_K_M file (~40 GiB) fits two 3090s layer-split: the what-if must find a card."""
    # a question that states its bf16 gets the lever too (the file's int4 would contradict it)
    for stated in ({}, {"precision": "bf16"}):
        body = {
            "workload": {"preset": "llama-3-70b", "task": "inference", **stated},
            "constraints": {"max_gpus": 2},
            "what_if": True,
        }
        req = s.RecommendationRequest.model_validate(body)
        answer = service.recommend(req, [RTX3090, M2], RULES)
        assert not answer.recommendations  # 141 GB of bf16 weights: two 24 GB cards cannot
        assert answer.what_if is not None
        (gguf,) = [v for v in answer.what_if if v.change == LABEL]
        assert gguf.can_run >= 1 and gguf.top_slug == RTX3090.slug and gguf.num_gpus == 2

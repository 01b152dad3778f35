"""What-if lines that switch to int4 or GGUF Q4_K_M weights said nothing of their quality
cost, though the row each names carries it from data/quality.yaml with its source. The line
now carries the changed top row's quality note where the answer's own top row lacks it."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service

BODY = {
    "workload": {
        "preset": "llama-3.1-70b",
        "task": "inference",
        "batch_size": 1,
        "latency_target_ms": 5000,
    },
    "constraints": {"acquisition": "rent", "max_gpus": 2},
    "objective": "cheapest",
    "what_if": True,
    "limit": 3,
}


def test_a_what_if_to_4_bit_weights_names_their_quality_cost(shipped_catalog: Any) -> None:
    req = s.RecommendationRequest.model_validate(BODY)
    out = service.recommend(req, shipped_catalog[0], shipped_catalog[2], offers=shipped_catalog[1])
    lines = {w.change: w for w in out.what_if or []}
    int4 = lines["int4 weights instead of bf16"]
    assert int4.quality is not None and int4.quality.startswith("quality: int4 weights")
    assert "https://arxiv.org/abs/2411.02355" in int4.quality  # its source, as the row says
    gguf = next(w for c, w in lines.items() if "GGUF Q4_K_M" in c)
    assert gguf.quality is not None and "quantize.cpp" in gguf.quality
    # a change that keeps the weights as they are says nothing of quality
    assert lines["batch 2 instead of 1"].quality is None

"""One cache, two counts: a vLLM serving row said "the KV cache holds 35 requests" beside a
warning about "the 31" it holds whole. Both are the engine's own: 35 at the prompt + half the
output vLLM counts a running request at (serving._capacity), 31 at the whole prompt + output.
The row now says which is which."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import service

BODY = {
    "workload": {
        "preset": "qwen2.5-32b",
        "task": "serving",
        "runtime": "vllm",
        "serving": {"concurrent_requests": 32},
    },
    "constraints": {"acquisition": "rent", "allow_spot": True},
    "objective": "cheapest",
    "limit": 3,
}


def test_the_kv_line_names_the_count_the_warning_names(shipped_catalog: Any) -> None:
    req = s.RecommendationRequest.model_validate(BODY)
    out = service.recommend(req, shipped_catalog[0], shipped_catalog[2], offers=shipped_catalog[1])
    row = out.recommendations[0]
    assert row.serving is not None
    (line,) = [x for x in row.explanation if x.startswith("The KV cache holds")]
    held = row.serving.max_concurrency
    assert line.startswith(f"The KV cache holds {held:,} requests at once")
    (warn,) = [w for w in row.warnings if "whose whole prompt + output" in w]
    full = int(warn.split(" run above the ")[1].split()[0])
    assert full < held  # the pool holds more requests at their average age than whole
    assert "counted at its prompt + 50% of its output" in line
    assert f"; {full:,} at their whole prompt + output" in line

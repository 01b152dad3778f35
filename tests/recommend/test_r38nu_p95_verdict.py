"""A serving verdict asked at p95 quotes the p95 latencies the targets are judged at and the
table shows (new user's walk, thirty-eighth session): Qwen2.5-32B for 100 users under p95
TTFT ≤ 1,000 ms and ITL ≤ 50 ms read "a token every 24.1 ms after a first token in 91.3 ms"
(the means) over a CLI table whose p95 ITL column said 48.7 and TTFT 153."""

from __future__ import annotations

import re

from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import A100, H100, RULES
from tests.support import summary_of


def _answer(percentile: str) -> s.RecommendationResponse:
    load = {
        "concurrent_requests": 100,
        "prompt_tokens": 1000,
        "output_tokens": 300,
        "target_percentile": percentile,
    }
    body = {
        "workload": {"preset": "llama-3-8b", "task": "serving", "serving": load},
        "constraints": {"acquisition": "rent"},
        "objective": "best_value",
    }
    return service.recommend(s.RecommendationRequest.model_validate(body), [A100, H100], RULES)


def _said(sentence: str) -> list[tuple[str, float]]:
    return [
        (pct, float(itl.replace(",", "")))
        for pct, itl in re.findall(r"\((p95: )?a token every ([\d.,]+) ms", sentence)
    ]


def _close(got: float, want: float) -> bool:
    return abs(got - want) <= 0.051 * want  # three figures


def test_p95_verdict_quotes_the_p95_latencies() -> None:
    r = _answer("p95")
    rows = r.recommendations
    assert len(rows) >= 2
    sentence = summary_of(r).sentence
    said = _said(sentence)
    assert len(said) == 2, sentence
    for (pct, itl), row in zip(said, rows[:2], strict=True):
        sv = row.serving
        assert sv is not None and sv.itl_p95_ms and sv.ttft_p95_ms and sv.itl_ms
        # the premise: the percentile differs from the mean enough to tell them apart
        assert not _close(sv.itl_p95_ms, sv.itl_ms), (sv.itl_p95_ms, sv.itl_ms)
        assert pct == "p95: " and _close(itl, sv.itl_p95_ms), sentence
    top = rows[0].serving
    assert top is not None and top.ttft_p95_ms
    first = re.search(r"after a first token in ([\d.,]+) (ms|s)", sentence)
    assert first, sentence
    ttft = float(first.group(1).replace(",", "")) * (1e3 if first.group(2) == "s" else 1)
    assert _close(ttft, top.ttft_p95_ms), sentence


def test_p50_verdict_keeps_the_means() -> None:
    r = _answer("p50")
    sentence = summary_of(r).sentence
    said = _said(sentence)
    assert said and all(pct == "" for pct, _ in said), sentence
    top = r.recommendations[0].serving
    assert top is not None and top.itl_ms and _close(said[0][1], top.itl_ms)

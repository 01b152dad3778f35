"""A serving answer with no row names the cards max_gpus alone left out as a lever only where a
replica of them could reach the ITL target at all: Llama 3.1 70B at ITL <= 5 ms (no card
within 8 GPUs meets it) had "raise constraints.max_gpus from 8 to 16 to plan A16, A2, T4, V100"
as its only advice, though 16 T4s read the 70B's weights once in ~27 ms a token at their full
bandwidth."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain import serving_step
from tests.domain.fixtures import LLAMA3_70B, T4
from tests.support import recommend_with


def test_the_decode_floor_is_the_weights_read_once_at_full_bandwidth() -> None:
    floor = serving_step.decode_floor_ms(T4, LLAMA3_70B, "bf16", 16)
    embedding = LLAMA3_70B.vocab_size * LLAMA3_70B.hidden_size  # type: ignore[operator]
    want = 2 * (LLAMA3_70B.params - embedding) / (16 * T4.memory_bandwidth_gbs * 1e9) * 1e3
    assert floor == pytest.approx(want, rel=0.02)
    assert floor > 20.0


def _relax(catalog: Any, itl_ms: float) -> list[str]:
    body = {
        "workload": {
            "preset": "llama-3.1-70b",
            "task": "serving",
            "serving": {
                "requests_per_s": 50,
                "prompt_tokens": 1000,
                "output_tokens": 300,
                "ttft_ms_target": 100,
                "itl_ms_target": itl_ms,
            },
        },
        "constraints": {"acquisition": "rent"},
    }
    out = recommend_with(catalog, body)
    assert out.counts.ranked == 0
    assert out.serving is not None
    return list(out.serving.relax)


def test_cards_too_slow_for_the_itl_target_at_any_span_are_not_offered(
    shipped_catalog: Any,
) -> None:
    words = " ".join(_relax(shipped_catalog, 5.0))
    for slow in ("NVIDIA T4", "NVIDIA A2", "NVIDIA A16"):
        assert slow not in words, words
    # a loose target keeps them as the memory lever they are
    loose = " ".join(_relax(shipped_catalog, 200.0))
    assert "NVIDIA T4" in loose and "GPUs per replica" in loose

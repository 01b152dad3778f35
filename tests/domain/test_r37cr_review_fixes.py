"""Closing review's fixes: an encoder's near-capacity miss says a share just past the margin to a
tenth (not "80 % > 80 %"), and the serving block's number fields give their own examples."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.domain import serving_encoder as se
from app.recommend.schemas import ServingIn


def _result(share: float) -> se.EncoderResult:
    return se.EncoderResult(
        runtime="tei", replicas=1, batch_cap=32, batch=8.0, latency_ms=40.0,
        latency_p95_ms=60.0, requests_per_s=100.0, tokens_per_s=4e4,
        max_requests_per_s=100.0 / share, load_share=share, batch_ms=30.0,
    )  # fmt: skip


def test_a_share_just_past_the_margin_reads_past_it() -> None:
    ok, misses = se.meets(_result(0.802), latency_ms=200.0)
    assert not ok
    assert misses == ["load 80.2 % of modelled capacity > 80 % (the margin random arrivals need)"]


def test_a_share_well_past_the_margin_reads_in_whole_percent() -> None:
    ok, misses = se.meets(_result(0.93), latency_ms=200.0)
    assert not ok and misses[0].startswith("load 93 % of modelled capacity")


def test_under_the_margin_meets() -> None:
    assert se.meets(_result(0.5), latency_ms=200.0) == (True, [])


def test_the_serving_blocks_output_tokens_gives_the_forms_examples() -> None:
    with pytest.raises(ValidationError) as err:
        ServingIn.model_validate({"concurrent_requests": 4, "output_tokens": "lots"})
    said = str(err.value)
    assert "like 300" in said and "like 256 or 1k" not in said

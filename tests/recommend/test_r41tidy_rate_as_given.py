"""Session 41 (tidy): a serving rate the user gave reads as they gave it. The summary's load
line and each row's latency line had said "At 5.00 requests/s" to whoever asked for 5 (the
assumptions beside it said 5); 2.5 read "2.50"."""

from __future__ import annotations

import pytest

from app.domain.figures import given
from app.domain.workload import ServingSpec
from app.recommend import serving, serving_encoder


@pytest.mark.parametrize(
    ("rate", "said"),
    [(5, "5"), (5.0, "5"), (2.5, "2.5"), (0.004, "0.004"), (1e6, "1,000,000"), (0.1, "0.1")],
)
def test_a_given_figure_keeps_its_digits_and_adds_none(rate: float, said: str) -> None:
    assert given(rate) == said


@pytest.mark.parametrize(("rate", "said"), [(5.0, "5 requests/s"), (2.5, "2.5 requests/s")])
def test_both_load_lines_say_the_rate_as_given(rate: float, said: str) -> None:
    spec = ServingSpec(prompt_tokens=1000, output_tokens=300, requests_per_s=rate)
    assert serving._load_words(spec).startswith(f"{said}, ")
    assert serving_encoder.load_words(spec).startswith(f"{said}, ")

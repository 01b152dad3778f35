"""A caveat opening with a maker's name keeps its capital mid-sentence (regression hunt,
2026-12-05: "…; apple M3 Ultra runs this job at FP32 speed")."""

from __future__ import annotations

import pytest

from app.recommend.summary import mid_sentence


@pytest.mark.parametrize(
    "text",
    ["Apple M3 Ultra has no bf16 support", "Intel Arc B580 needs …", "NVIDIA Tesla P40 24GB …"],
)
def test_a_makers_name_keeps_its_capital(text: str) -> None:
    assert mid_sentence(text) == text


def test_an_ordinary_first_word_is_lowered() -> None:
    assert (
        mid_sentence("Passively cooled: it needs airflow") == "passively cooled: it needs airflow"
    )

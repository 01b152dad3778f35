"""New-user walk (thirty-second session): a row's "Expected … images/s" gave two decimals
below 1, so an M4 Max's SDXL 0.0293 images/s read "0.03" beside the table's 0.0293, and an
M2's 0.0057 read "0.01", the same as an M4 Pro's 0.0098."""

from __future__ import annotations

import pytest

from app.domain.rank import _rate


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (0.0293, "0.0293"),
        (0.00573, "0.00573"),
        (0.00977, "0.00977"),
        (0.314, "0.314"),
        (5.678, "5.68"),
        (64.77, "64.8"),
        (1639.4, "1,639"),
    ],
)
def test_a_rate_keeps_three_figures_below_one(value: float, said: str) -> None:
    assert _rate(value) == said


def test_two_slow_cards_are_told_apart() -> None:
    assert _rate(0.0057) != _rate(0.0098)

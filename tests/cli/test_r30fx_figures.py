"""r30 review: `gpu-advisor recommend` printed throughputs unevenly, 0.802 (three figures
below one) beside 1.8 for 1.83 (one decimal above): they are now three significant figures
throughout, as the pages write the same numbers (templating.num, numbers.sig_figs)."""

from __future__ import annotations

import pytest

from app.cli.recommend import _fmt
from app.web.templating import num


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (1.83, "1.83"),  # had read "1.8"
        (0.802, "0.802"),
        (12.34, "12.3"),
        (123.4, "123"),  # had read "123.4": four figures
        (2.0, "2"),
        (1234.6, "1,235"),
        (0.0, "0"),
    ],
)
def test_a_figure_has_three_significant_figures(value: float, said: str) -> None:
    assert _fmt(value) == said


@pytest.mark.parametrize("value", [0.000123, 0.0456, 0.802, 1.83, 9.996, 45.67, 999.4, 15_145.0])
def test_the_command_line_writes_a_figure_as_the_pages_do(value: float) -> None:
    assert _fmt(value) == num(value)
    assert _fmt(value, unit=" h") == f"{num(value)} h"


def test_money_and_milliseconds_keep_their_decimals() -> None:
    assert _fmt(3.5, 2) == "3.50" and _fmt(12.0, 0) == "12" and _fmt(None) == "—"

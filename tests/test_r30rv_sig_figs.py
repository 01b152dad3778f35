"""numbers.sig_figs, which the command line's figures and a missed deadline's share now go
through: a value with no digits to count (an infinite or undefined figure) is written as Python
writes it, as the CLI's own formatting had, rather than raising from log10; a share under a
millionth of the dataset reads in decimals, not exponent notation."""

from __future__ import annotations

import math

import pytest

from app.cli.recommend import _fmt
from app.numbers import sig_figs
from app.recommend.deadline import _share


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_non_finite_figure_is_written_not_raised(value: float) -> None:
    assert sig_figs(value) == str(value)
    assert _fmt(value) == str(value)  # the CLI's table cell (f"{inf:,.0f}" had read "inf")


@pytest.mark.parametrize(
    ("part", "said"),
    [
        (0.5, "50%"),  # whole percents from 1 %
        (0.000543, "0.054%"),  # two figures below (543 of 1,000,000)
        (2.5e-6, "0.00025%"),  # ":.2g" had written "0.00025%" as "2.5e-04%"
    ],
)
def test_a_share_reads_in_decimals(part: float, said: str) -> None:
    assert _share(part) == said
    # the figure it writes is the share itself, to two significant figures
    number = float(said.rstrip("%").replace(",", ""))
    assert number == pytest.approx(part * 100, rel=0.05)
    assert "e" not in said


@pytest.mark.parametrize("part", [1.23e-7, 1e-9, 1.5e-20])
def test_a_share_under_a_millionth_is_said_as_that(part: float) -> None:
    # two significant figures of 1.5e-20 are twenty digits long (2026-12-06, the closing
    # review): below a millionth the share is said as under it, still never in exponents
    assert _share(part) == "under 0.0001%"

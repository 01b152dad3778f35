"""Numbers as people type them: a comma separates thousands only in whole groups of three."""

from __future__ import annotations

import pytest

from app.numbers import parse_int, parse_number


@pytest.mark.parametrize(
    ("text", "value"),
    [("1,500", 1500), ("$1,500", 1500), ("12,000,000", 12e6), ("1,281,167", 1281167),
     ("1,500.5", 1500.5), ("-1,000", -1000), ("15k", 15e3), ("0.80", 0.8)],
)  # fmt: skip
def test_thousands_groups_are_read(text: str, value: float) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["0,80", "1,5", "2,50", "1,50,000", "1,5k", "12,0000"])
def test_a_decimal_comma_is_refused_not_read_as_thousands(text: str) -> None:
    # "0,80" once read as 80: a $0.80/h cap became $80/h
    with pytest.raises(ValueError, match="comma only separates thousands"):
        parse_number(text)
    with pytest.raises(ValueError):
        parse_int(text)

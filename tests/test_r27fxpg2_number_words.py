"""A number with a word after it: the message names the word, not the comma or the digits
(review: "2,500 dollars" was told "a comma only separates thousands")."""

from __future__ import annotations

import pytest

from app.numbers import parse_number


@pytest.mark.parametrize(
    ("text", "word"), [("2,500 dollars", "dollars"), ("2500 dollars", "dollars"), ("15 kW", "kW")]
)
def test_an_unknown_word_after_a_number_is_named(text: str, word: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_number(text)
    message = str(err.value)
    assert f"'{word}' is not a unit" in message
    assert "comma" not in message


@pytest.mark.parametrize(
    ("text", "value"),
    [("2,500 USD", 2500), ("15k", 15e3), ("8.03B", 8.03e9), ("1.2e9", 1.2e9), ("$1,500", 1500)],
)
def test_units_it_reads_still_read(text: str, value: float) -> None:
    assert parse_number(text) == value


def test_a_decimal_comma_with_a_word_still_blames_the_comma() -> None:
    with pytest.raises(ValueError, match="comma only separates thousands"):
        parse_number("2,50 dollars")

"""Numbers as people write them — "8.03B", "$800", "15k", "1,281,167" — read the same way by
the form and the command line."""

from __future__ import annotations

import math
import re
from decimal import Decimal

# one rule for every figure a person reads, kept in the domain so the engine's own words
# (rank.significant: explanations, the summary) write it as the pages and the CLI do
from app.domain.figures import sig_figs as sig_figs

# A comma is a thousands separator only between whole groups of three digits ("1,500",
# "12,000,000"): "0,80" or "2,50" is a decimal comma, and stripping it read $0.80 as $80.
_GROUPED_RE = re.compile(
    r"^[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?(?:e[+-]?[0-9]+)?[kmbt]?$", re.I
)
_NUMBER_RE = re.compile(r"^([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)([kmbt]?)$", re.IGNORECASE)
_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
NUMBER_HELP = "like 15k, 8.03B, 1,281,167 or $800"
# A word after the digits ("2,500 dollars", "15 kW"): the number is fine, the word is not read;
# the message says so rather than blaming the comma or the digits.
_WORD_RE = re.compile(r"^(.*[0-9.])([^\W\d_]+)$")


def parse_number(text: str) -> float:
    """'8.03B' -> 8.03e9, '$800' -> 800, '15k' -> 15000, '1,281,167' -> 1281167, '1.2e9'."""
    cleaned = re.sub(r"[\s_$]|usd", "", text.strip(), flags=re.IGNORECASE)
    word = _WORD_RE.match(cleaned)
    if word and word.group(2).lower() not in _SUFFIX and _reads(word.group(1)):
        raise ValueError(
            f"{text.strip()!r}: {word.group(2)!r} is not a unit read here (k, M, B, T, $ or "
            f"USD); write the number alone, {NUMBER_HELP}"
        )
    if "," in cleaned:
        if not _GROUPED_RE.match(cleaned):
            raise ValueError(
                f"{text.strip()!r}: a comma only separates thousands (1,500); "
                "write decimals with a point (0.80)"
            )
        cleaned = cleaned.replace(",", "")
    negative = cleaned.startswith("-")
    match = _NUMBER_RE.match(cleaned.lstrip("-+"))
    if not match:
        raise ValueError(f"must be a number, {NUMBER_HELP}")
    # decimal arithmetic, so 8.03B is exactly 8030000000
    value = float(Decimal(match.group(1)) * Decimal(_SUFFIX[match.group(2).lower()]))
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return -value if negative else value


def _reads(text: str) -> bool:
    """Whether ``text`` alone is a number parse_number reads."""
    try:
        parse_number(text)
    except ValueError:
        return False
    return True


# A duration's unit after its number, in hours: "Finish within (hours)" is where people write
# "36h", "2 days" or "1 week"; any other word is refused with the ones read here.
_HOURS_PER = {
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 1.0),
    **dict.fromkeys(("d", "day", "days"), 24.0),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 168.0),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), 1 / 60),
}
_DURATION_RE = re.compile(r"^(.*?[0-9.])\s*([^\W\d_]+)$")
HOURS_HELP = "like 24, 36h, 2 days or 1 week"


def parse_hours(text: str) -> float:
    """A time in hours as people write it: '24' -> 24, '36h' -> 36, '2 days' -> 48, '1 week'
    -> 168, '90 min' -> 1.5; a bare number reads as parse_number reads it ('1.5k')."""
    stripped = text.strip()
    m = _DURATION_RE.match(stripped)
    unit = "" if m is None else m.group(2).lower()
    if unit == "m":  # a million to parse_number, a minute to some: neither is guessed
        raise ValueError(f"{stripped!r}: write min for minutes; {HOURS_HELP}")
    if m is None or unit in _SUFFIX:
        try:
            return parse_number(stripped)
        except ValueError as exc:
            # "soon": a time's own examples, not a price's ("like 15k, 8.03B ... or $800")
            if str(exc).endswith(NUMBER_HELP):
                raise ValueError(f"{stripped!r}: must be a number of hours, {HOURS_HELP}") from None
            raise
    if unit not in _HOURS_PER:
        raise ValueError(f"{stripped!r}: {m.group(2)!r} is not a time unit read here; {HOURS_HELP}")
    return parse_number(m.group(1)) * _HOURS_PER[unit]


def parse_int(text: str) -> int:
    value = parse_number(text)
    if value != int(value):
        raise ValueError("must be a whole number")
    return int(value)


def shown_of(shown: int, total: int) -> str:
    """How many a listing holds, as a table's title counts them: "53", or "4 of 53" where the
    page shows fewer (a bare "53" above four rows read as if the rest had gone missing)."""
    return f"{total}" if shown == total else f"{shown} of {total}"

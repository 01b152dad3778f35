"""How a figure is written for a person: one rule for the pages, the command line, the rows'
explanations and the answer's summary."""

from __future__ import annotations

import math
from decimal import Decimal


def sig_figs(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures with thousands separators, trailing zeros
    dropped: 1.83, 0.802, 12.3, 1,235 (a figure of ``digits`` digits or more, whole). How the
    pages write a figure (templating.num), the command line's tables, and the engine's own
    words (rank.significant): the CLI had printed 0.802 beside 1.8 for 1.83, and a summary
    "runs 1,640 images/s" above a row of 1,639."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(value)  # "inf", "nan": no digits to count (log10 would raise)
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    if abs(value) >= 10**digits or decimals == 0:
        return f"{round(value):,}"
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def round3(value: float) -> float:
    """``round(value, 3)``, to the last bit and sign: rint(v·10³)/10³ is that value (one
    correctly rounded division of the same whole number of thousandths) wherever the product
    lies clear of a half and its rounding cannot cross one (|v·10³| < 10⁹: an ulp under 10⁻⁶);
    any other value, and a result of zero (round keeps the sign of -0.0004), is ``round``'s own.
    round with digits is a correctly rounded decimal conversion, ~3 k instructions a call: an
    answer's rows round ~70 memory figures (issue 21)."""
    y = value * 1000.0
    whole = math.floor(y)
    part = y - whole
    if not -1e9 < y < 1e9 or abs(part - 0.5) < 1e-6:
        return round(value, 3)
    if part > 0.5:
        whole += 1
    if whole == 0:
        return round(value, 3)
    return whole / 1000.0


def given(value: float) -> str:
    """A figure the user gave, as they wrote it: 5, 2.5, 0.004, 1,000,000 and 0.000000001,
    every digit kept and none added. A serving answer had said "At 5.00 requests/s" to
    whoever asked for 5, and a rate of 1e-9 had read "0.00"."""
    if not math.isfinite(value):
        return str(value)
    # repr is the shortest text that reads back as the same float: what was typed, not the
    # binary expansion's tail
    return f"{Decimal(repr(float(value))).normalize():,f}"


# A year as the calendar averages it (365.25 days): past one, a time reads in years (2,164 h
# had read "0.247 years" on a page, and "548 days" is less plain than 1.5 years)
HOURS_PER_YEAR = 8766.0


def duration(hours: float, digits: int = 3) -> str:
    """A length of time as a person says it, one rule for every answer, page and table: 8.6 s,
    45 min, 18.8 h, 46.2 days, 2.49 years: hours and longer to ``digits`` significant figures,
    seconds and minutes to one fewer. An answer had said "907.7 days" in its verdict beside
    "2.5 years" for the same time in a variation."""
    if hours * 3600 < 1:
        return f"{hours * 3600:.2g} s"  # a deadline of 1e-300 h: "3.6e-297 s", not 300 digits
    # seconds and minutes to a figure less: "52 min", "8.6 s", not "51.7 min" (a rented job
    # counts a minute's start-up its time leaves out)
    if hours * 60 < 1:
        return f"{sig_figs(hours * 3600, digits - 1)} s"
    if hours < 1:
        return f"{sig_figs(hours * 60, digits - 1)} min"
    if hours < 48:
        return f"{sig_figs(hours, digits)} h"
    if hours < HOURS_PER_YEAR:
        return f"{sig_figs(hours / 24, digits)} days"
    years = sig_figs(hours / HOURS_PER_YEAR, digits)
    return f"{years} year{'' if years == '1' else 's'}"


def limit_duration(hours: float) -> str:
    """A limit the user set (constraints.max_hours), as they would have written it: 24 h,
    36 h, 2 days, 30 min — never "24.0 h". Whole days from two days up read in days (the form
    takes "2 days" and stores 48); any other limit in its own hours, every digit kept."""
    hours = float(hours)
    if hours < 1 and (hours * 60).is_integer():
        return f"{hours * 60:,.0f} min"  # "30 min" or 0.5: either way half an hour
    if hours >= 48 and (hours / 24).is_integer():
        return f"{hours / 24:,.0f} days"
    if hours < 1e-4:  # no one types it: a deadline of 1e-300 h in two figures, not 300 digits
        return duration(hours)
    return f"{sig_figs(hours, 4)} h"  # 24 h, 36 h, 2.75 h, 1,000 h, 0.01 h

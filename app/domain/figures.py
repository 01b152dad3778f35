"""How a figure is written for a person: one rule for the pages, the command line, the rows'
explanations and the answer's summary."""

from __future__ import annotations

import math


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

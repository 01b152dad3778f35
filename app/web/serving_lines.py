"""Which lines of a serving row's explanation its own cells already say.

The API's explanation is written to be read alone (the CLI prints it, the JSON keeps it); on the
answer page each row's cells sit beside it, and two of its lines restate them word for figure:
the load line (the TTFT, ITL and output tokens/s columns, at the load the table's banner names)
and the per-million-token line (the three "$ per 1M" columns, whose heads say "whole hour ÷
output tokens" and each share). On every row of a serving page they were ~3.7 KB of its weight
budget. A line that says more stays: the means beside p95 columns (the cells then show p95), a
row cheaper owned whose line also gives its rented figure, or a wording this test does not know
(a changed line comes back rather than going missing).
"""

from __future__ import annotations

# the words app.recommend.serving._explain writes these lines with; a line without them stays
from app.recommend.serving import COST_LINE_MORE, COST_LINE_WORDS, LOAD_LINE_END, LOAD_MEANS


def said_in_cells(line: str, p95: bool = False) -> bool:
    """``line`` of a decoder serving row restates that row's cells (p95: its latency cells
    show p95 figures, not the means the line gives)."""
    if line.startswith("At ") and line.endswith(LOAD_LINE_END) and LOAD_MEANS in line:
        return not p95
    return line.startswith("$") and COST_LINE_WORDS in line and COST_LINE_MORE not in line

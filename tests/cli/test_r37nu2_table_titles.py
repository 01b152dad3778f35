"""`gpu-advisor gpus` and `offers list` at 100 columns: the table's title had carried its
notes ("(slugs for --gpu; prices from the offers); widen the terminal for name, bandwidth,
BF16, or use --json"), which Rich wraps to the table's width, folding them over three
centred lines. The title now only counts; the notes follow the table as one line at the
terminal's width."""

from __future__ import annotations

from rich.console import Console

from app.cli.gpus import WIDE, gpus_note, gpus_table
from app.offers.schemas import GpuListPage


def _render(page: GpuListPage, width: int) -> list[str]:
    console = Console(width=width, record=True, emoji=False)
    console.print(gpus_table(page, width))
    console.print(gpus_note(width), highlight=False)
    return console.export_text().splitlines()


def test_the_title_is_one_line_and_the_note_follows_at_full_width() -> None:
    page = GpuListPage(items=[], total=119, offset=0, limit=50)
    lines = [x for x in _render(page, 100) if x.strip()]
    assert lines[0].strip() == "0 of 119 GPUs" or lines[0].strip().endswith("GPUs"), lines
    note = gpus_note(100)
    assert note.startswith("Slugs are for --gpu; prices come from the offers.")
    assert f"Widen the terminal to {WIDE} columns" in note
    # no line of the table's title carries the note's words
    assert not any("widen" in x.lower() for x in lines[:2]), lines


def test_a_wide_terminal_is_not_told_to_widen() -> None:
    assert "Widen" not in gpus_note(WIDE)

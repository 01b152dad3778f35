"""r30 review of `gpu-advisor recommend` refusals: the stderr line after the flag says the
message in the CLI's words ("--extra-gpus applies to task 'inference' only", not the API's
"extra_gpus ..."), as the answer's warnings already did, and brackets in it are printed."""

from __future__ import annotations

import io

from rich.console import Console

from app.cli.recommend import refusal_line


def _printed(markup: str) -> str:
    con = Console(record=True, width=300, file=io.StringIO())
    con.print(markup)
    return con.export_text().strip()


def test_field_names_in_the_message_become_flags() -> None:
    line = _printed(
        refusal_line("workload.extra_gpus", "extra_gpus applies to task 'inference' only")
    )
    assert line == (
        "--extra-gpus (workload.extra_gpus): --extra-gpus applies to task 'inference' only"
    )


def test_a_bracket_in_the_message_is_printed_not_read_as_markup() -> None:
    line = _printed(refusal_line("constraints.max_gpus", "must be in [1, 512]"))
    assert line.endswith("must be in [1, 512]")


def test_a_refusal_without_a_field_says_error() -> None:
    assert _printed(refusal_line(None, "no answer")) == "error: no answer"

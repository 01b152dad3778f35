"""r33po: a flag reads as a flag in --help. Typer's rich help printed every option's type, a
flag's too ("--json <bool>", "--help <bool>"), as if it took a value; an option that takes a
value keeps its type."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer
from typer.testing import CliRunner

from app.cli.main import cli

WIDE = {"COLUMNS": "160", "TERMINAL_WIDTH": "160"}


def _paths(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, cmd in group.commands.items():
        yield (*path, name)
        if hasattr(cmd, "commands"):
            yield from _paths(cmd, (*path, name))


def test_no_help_shows_a_type_after_a_flag() -> None:
    root = typer.main.get_command(cli)
    paths = [(), *_paths(root)]
    assert ("upload",) in paths and ("offers", "list") in paths
    for path in paths:
        result = CliRunner().invoke(cli, [*path, "--help"], env=WIDE)
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output, (path, result.output)


def test_upload_help_shows_flags_bare_and_values_typed() -> None:
    result = CliRunner().invoke(cli, ["upload", "--help"], env=WIDE)
    text = result.output
    assert re.search(r"--server\s+<str>", text), text
    assert re.search(r"--json\s+Print the stored id", text), text
    assert re.search(r"--help\s+Show this message", text), text

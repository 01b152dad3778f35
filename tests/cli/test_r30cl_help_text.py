"""r30 review of `gpu-advisor --help`: the one-line help each command list shows is one
sentence on one line. Typer's command list keeps a docstring's line breaks, so a first
paragraph running over two lines of source broke the list mid-sentence ("(schema behind" /
"head, ...")."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import typer

from app.cli.main import cli


def _commands(group: Any, path: str = "gpu-advisor") -> Iterator[tuple[str, Any]]:
    # Typer's own click-like classes: a group is what has subcommands
    for name, cmd in group.commands.items():
        yield f"{path} {name}", cmd
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, f"{path} {name}")


def test_every_listed_help_line_is_one_line() -> None:
    root = typer.main.get_command(cli)
    listed = list(_commands(root))
    assert {"gpu-advisor serve", "gpu-advisor db upgrade"} <= {p for p, _ in listed}
    for path, cmd in listed:
        shown = cmd.short_help or inspect.cleandoc(cmd.help or "").split("\n\n")[0]
        assert shown and "\n" not in shown, f"{path}: {shown!r}"

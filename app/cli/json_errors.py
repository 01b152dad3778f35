"""A command whose --json promises the API's error object on stdout keeps that promise for
the refusals click itself makes while parsing (a value out of range, a missing option, an
unknown flag): a script that reads stdout gets one shape whatever refused it."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand

# typer 0.29 runs on a click of its own (typer._click), whose exceptions plain click's except
# clauses do not catch; earlier releases run on click itself (as app/cli/recommend.py)
try:
    from typer._click.core import Context
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover - typer < its bundled click
    from click import Context, UsageError  # type: ignore[assignment]

EXIT_INVALID = 2


class JsonUsageErrors(TyperCommand):
    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes ``args``
        try:
            return super().parse_args(ctx, args)
        except UsageError as exc:
            if "--json" not in given:
                raise
            from app.cli.recommend import error_json

            param = getattr(exc, "param", None)
            opts = getattr(param, "opts", None) or []
            flag = getattr(exc, "option_name", None) or (str(opts[0]) if opts else None)
            details: dict[str, Any] = {"field": getattr(param, "name", None) or "request"}
            if flag:
                details["flag"] = flag
            typer.echo(error_json("invalid_input", exc.format_message(), details))
            raise typer.Exit(EXIT_INVALID) from exc

"""`gpu-advisor recommend --preset llama-3-8b` at 80 columns, as the README's first CLI
example runs it (2026-12-06, a new user's walk): the verdict picked a card to buy ($558), but
the table had left out "$/h (all)" and "buy $ (all)" for width and kept "to finish", which
held "—" in every row (inference with no dataset has no time to finish), so the pick's row
showed no price at all. A column with no figure in any row goes first."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from app.cli.main import cli
from app.config import Settings

NARROW = {"COLUMNS": "80", "TERMINAL_WIDTH": "80"}


def _table(output: str) -> str:
    return output[output.index("┏") : output.index("┘")]


def test_the_default_answer_shows_the_picks_price_at_80_columns(read_settings: Settings) -> None:
    env = {**NARROW, "GPU_ADVISOR_DATABASE_URL": read_settings.database_url}
    result = CliRunner().invoke(cli, ["recommend", "--preset", "llama-3-8b"], env=env)
    assert result.exit_code == 0, result.output
    verdict = result.output[result.output.index("Verdict:") : result.output.index("┏")]
    table = _table(result.output)
    assert max(len(line) for line in result.output.splitlines()) <= 80
    # the price the verdict names for the pick is in the table's first row
    bought = re.search(r"costs \$([\d,]+) to buy", " ".join(verdict.split()))
    rented = re.search(r"rents at \$([\d.]+)/h", " ".join(verdict.split()))
    assert bought or rented, verdict
    first_row = table[table.index("│  1 │") :].split("│  2 │")[0]
    price = bought.group(1) if bought else rented.group(1)  # type: ignore[union-attr]
    assert f" {price} " in first_row, (price, first_row)
    # a column of dashes alone says nothing: it is the one left out, and named
    assert "to finish" in result.output.split("Left out at this width:")[1].split(".")[0]
    assert "buy $" in table


def test_a_column_with_figures_stays_where_it_has_room(read_settings: Settings) -> None:
    """Training has a time to finish in every row: that column still shows at 80 columns."""
    env = {**NARROW, "GPU_ADVISOR_DATABASE_URL": read_settings.database_url}
    args = ["recommend", "--preset", "resnet-50", "--task", "training", "--acquisition", "rent"]
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    table = _table(result.output)
    assert "finish" in table
    assert re.search(r"\d+(\.\d+)? (h|min|days?)\b", table), table

"""The recommend table's rows past --limit (counted, not shown: a footer says how many and the
--limit that shows them), and its mark on rows whose software support is experimental (ranked
after the supported ones whatever their score, so a cheaper, faster card below a P40 had read
as a ranking error)."""

from __future__ import annotations

import io
import json
import re
from types import SimpleNamespace
from typing import cast

import pytest
from rich.console import Console
from typer.testing import CliRunner

from app.cli.main import cli
from app.cli.recommend import _MAX_ROWS, _more_rows
from app.config import Settings
from app.recommend import schemas as rs

ARGS = ["recommend", "--preset", "llama-3.1-8b", "--task", "fine-tuning", "--peft", "qlora",
        "--framework", "pytorch", "--max-purchase-usd", "700", "--acquisition", "buy",
        "--objective", "best_value", "--purchase-basis", "auto", "--max-gpus", "1"]  # fmt: skip


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich fixes a console's width at creation (another test's 80 columns under xdist): the
    wide terminal is set on the console itself, not only in the environment."""
    from app.cli import main as cli_main

    monkeypatch.setattr(cli_main.console, "_width", 200)


def _env(settings: Settings) -> dict[str, str]:
    return {"COLUMNS": "200", "TERMINAL_WIDTH": "200",
            "GPU_ADVISOR_DATABASE_URL": settings.database_url}  # fmt: skip


def _gpu_cells(output: str) -> list[str]:
    table = output[output.index("┏") : output.index("┘")]
    return [line.strip("│").split("│")[1].strip() for line in table.splitlines()
            if line.startswith("│")]  # fmt: skip


def test_rows_past_the_limit_get_a_footer(wide: None, read_settings: Settings) -> None:
    env = _env(read_settings)
    answer = json.loads(CliRunner().invoke(cli, [*ARGS, "--json"], env=env).stdout)
    shown = len(answer["recommendations"])
    assert answer["count"] > shown
    result = CliRunner().invoke(cli, ARGS, env=env)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    hidden = answer["count"] - shown
    assert f"{hidden} more ranked rows not shown (--limit {answer['count']} to see them)." in said
    every = CliRunner().invoke(cli, [*ARGS, "--limit", str(answer["count"])], env=env)
    assert every.exit_code == 0, every.output
    assert len(_gpu_cells(every.output)) == answer["count"]
    assert "more ranked rows not shown" not in every.output


def test_experimental_rows_are_marked_with_a_footnote(wide: None, read_settings: Settings) -> None:
    env = _env(read_settings)
    # TensorFlow on Intel and Apple is experimental (data/frameworks.yaml): every ranked row
    args = ["recommend", "--preset", "llama-3.1-8b", "--task", "fine-tuning", "--peft", "lora",
            "--framework", "tensorflow", "--acquisition", "buy", "--limit", "500"]  # fmt: skip
    answer = json.loads(CliRunner().invoke(cli, [*args, "--json"], env=env).stdout)
    result = CliRunner().invoke(cli, args, env=env)
    status = [r["framework_status"] for r in answer["recommendations"]]
    assert "experimental" in status, "the question no longer has an experimental row to mark"
    cells = _gpu_cells(result.output)
    assert len(cells) == len(status)
    for cell, st in zip(cells, status, strict=True):
        assert cell.endswith("(exp.)") == (st == "experimental"), (cell, st)
    said = " ".join(result.output.split())
    assert "(exp.): experimental software support" in said
    assert "rank after the supported ones" in said
    # an answer with none: no footnote (the default 10 rows of this one are all NVIDIA)
    plain = CliRunner().invoke(cli, [*args[:-2], "--vendor", "nvidia"], env=env)
    assert plain.exit_code == 0, plain.output
    assert "(exp.)" not in plain.output


def _said(count: int, shown: int) -> str:
    out = io.StringIO()
    answer = cast(
        rs.RecommendationResponse, SimpleNamespace(count=count, recommendations=[None] * shown)
    )
    _more_rows(answer, Console(file=out, width=200))
    return re.sub(r"\s+", " ", out.getvalue()).strip()


def test_the_footer_asks_within_the_bound_on_limit() -> None:
    assert _said(10, 10) == "" and _said(0, 0) == ""
    assert _said(700, 10) == f"690 more ranked rows not shown (--limit {_MAX_ROWS} to see them)."
    assert _said(700, _MAX_ROWS) == (
        f"{700 - _MAX_ROWS} more ranked rows not shown (at most {_MAX_ROWS} are shown)."
    )

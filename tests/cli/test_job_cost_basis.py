"""Asked 'either', the CLI's job $ column says of each row whether its figure is a rented job
or a whole purchase (lab PI's review: 11.78, 755 and 3,192 in one column, unlabelled)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from app.cli.main import cli
from app.config import Settings


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.cli import main as cli_main

    monkeypatch.setattr(cli_main.console, "_width", 220)


def _job_cells(read_settings: Settings, acquisition: str) -> list[str]:
    args = ["recommend", "--preset", "llama-3.1-8b", "--task", "fine-tuning", "--peft", "lora",
            "--acquisition", acquisition, "--hours-per-week", "100", "--objective",
            "best_value", "--limit", "6"]  # fmt: skip
    env = {"COLUMNS": "220", "GPU_ADVISOR_DATABASE_URL": read_settings.database_url}
    out = CliRunner().invoke(cli, args, env=env).output
    head = next(line for line in out.splitlines() if "job $" in line)
    at = [c.strip() for c in head.strip("┃").split("┃")].index("job $")
    rows = [line for line in out.splitlines() if line.startswith("│") and line[1:4].strip()]
    return [[c.strip() for c in r.strip("│").split("│")][at] for r in rows]


def test_either_says_which_price_each_job_cost_is(wide: None, read_settings: Settings) -> None:
    cells = _job_cells(read_settings, "either")
    assert cells and all(c.endswith((" rent", " buy")) for c in cells), cells
    assert not any(c.endswith((" rent", " buy")) for c in _job_cells(read_settings, "rent"))

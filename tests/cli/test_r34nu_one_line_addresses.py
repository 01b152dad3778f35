"""r34 new user: an address the CLI prints stays on one line. Piped (as `make run` into a log)
Rich is 80 columns wide and had broken `db upgrade`'s line before its URL ("database at head:"
then "sqlite:////tmp/…/gpu-advisor.db") and `upload`'s before the report's page; and a report
path holding "[/]" was read as markup, so `upload` crashed after the server had stored it.
`bench`'s tips wrap under their bullet, as `recommend`'s do."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from app.bench import command
from app.bench.command import Stored, upload_command
from app.cli.main import cli
from app.config import Settings
from tests.bench.conftest import make_report


def test_db_upgrade_prints_the_database_url_whole(read_settings: Settings) -> None:
    env = {"COLUMNS": "40", "GPU_ADVISOR_DATABASE_URL": read_settings.database_url}
    result = CliRunner().invoke(cli, ["db", "upgrade"], env=env)
    assert result.exit_code == 0, result.output
    url = read_settings.database_url
    assert len(f"database at head: {url}") > 40  # the line is wider than the console
    assert f"database at head: {url}" in result.output.splitlines()


def test_upload_prints_the_reports_page_whole_and_any_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = "http://advisor.example.org:8000/device/reports/12345"

    def stored(*args: Any, **kw: Any) -> Stored:
        return Stored(id=12345, url=page)

    monkeypatch.setattr(command, "upload", stored)
    (tmp_path / "runs[").mkdir()
    path = tmp_path / "runs[" / "]report.json"  # its text holds "[/]", Rich's closing tag
    assert "[/]" in str(path)
    path.write_text(make_report().model_dump_json(), encoding="utf-8")
    out = io.StringIO()
    code = upload_command(path, "http://advisor.example.org:8000", None,
                          console=Console(file=out, width=40))  # fmt: skip
    assert code == 0
    lines = out.getvalue().splitlines()
    assert f"uploaded {path}: stored as report id 12345, at {page}" in lines


def test_benchs_tips_hang_under_their_bullet_and_print_as_text() -> None:
    # at 80 columns a tip's second line had started at column 0; a tip quotes code
    tip = (
        "bf16 training is 2.2× faster than fp32 on this CPU (conv forward+backward, the "
        "slowest training measurement): train with torch.autocast(device_type=[/]'cpu')"
    )
    report = make_report().model_copy(update={"tips": [tip]})
    con = Console(record=True, width=60, file=io.StringIO())
    command._print_report(con, report)
    text = con.export_text()
    lines = text[text.index("Tips") :].splitlines()[1:]
    assert lines[0].startswith("  • bf16 training")
    body = [line for line in lines[1:] if line.strip()][:2]
    assert body and all(line.startswith("    ") for line in body), lines
    assert "device_type=[/]'cpu')" in "".join(line.strip() for line in lines)

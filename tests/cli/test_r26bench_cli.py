"""r26: --gpu slugs in any case with suggestions; --json errors of `offers list` in the API's
shape; `recommend --device-report` names the database it searched; the upload command."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from app.cli.bench import resolve_slug, slug_suggestions
from app.cli.main import cli

SLUGS = ["h100-sxm", "h100-pcie", "h100-nvl", "h200-sxm", "a100-80gb-sxm"]


def test_slugs_are_case_insensitive_and_suggested() -> None:
    assert resolve_slug("H100-SXM", SLUGS) == "h100-sxm"
    assert slug_suggestions("h100", SLUGS)[:3] == ["h100-nvl", "h100-pcie", "h100-sxm"]
    with pytest.raises(typer.BadParameter, match="did you mean h100-nvl, h100-pcie, h100-sxm"):
        resolve_slug("h100", SLUGS)


def test_offers_list_json_errors_are_json(seeded_database_url: str) -> None:
    env = {"GPU_ADVISOR_DATABASE_URL": seeded_database_url}
    result = CliRunner().invoke(cli, ["offers", "list", "--kind", "x", "--json"], env=env)
    assert result.exit_code == 2
    body = json.loads(result.stdout)
    assert body["error"]["details"]["flag"] == "--kind"


def test_recommend_device_report_names_the_local_database(seeded_database_url: str) -> None:
    env = {"GPU_ADVISOR_DATABASE_URL": seeded_database_url}
    args = ["recommend", "--preset", "resnet-50", "--device-report", "999", "--json"]
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["details"]["database"] in error["message"]
    assert "reads the local database" in error["message"]


def test_bench_and_upload_help_say_the_exit_codes() -> None:
    for cmd in (["bench", "--help"], ["upload", "--help"]):
        text = " ".join(CliRunner().invoke(cli, cmd).stdout.split())
        assert "Exit status: 0" in text

"""`gpu-advisor recommend` for scripts: with --json every refusal is the API's one error object
on stdout (it was plain text on stderr, stdout empty), an error names the flag a user typed
(a bad --vendor read "constraints.vendors.0: …"), and an answer nothing can run exits 3
(it exited 0 with counts.ranked 0). --help says the exit statuses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli.main import cli
from app.config import Settings

WIDE = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}


def _run(settings: Settings, *args: str) -> Any:
    env = {**WIDE, "GPU_ADVISOR_DATABASE_URL": settings.database_url}
    return CliRunner().invoke(cli, ["recommend", *args], env=env)


def _error(stdout: str) -> dict[str, Any]:
    body = json.loads(stdout)
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    return dict(body["error"])


def test_an_unknown_preset_with_json_is_the_apis_error_object_on_stdout(
    read_settings: Settings,
) -> None:
    result = _run(read_settings, "--preset", "nope", "--json")
    assert result.exit_code == 2
    error = _error(result.stdout)
    assert error["code"] == "invalid_input"
    assert "nope" in error["message"]
    assert error["details"]["field"] == "workload.preset"
    assert error["details"]["flag"] == "--preset"


def test_a_refused_value_with_json_carries_the_apis_validation_details(
    read_settings: Settings,
) -> None:
    result = _run(read_settings, "--preset", "llama-3-8b", "--vendor", "foo", "--json")
    assert result.exit_code == 2
    error = _error(result.stdout)
    # as POST /api/v1/recommendations answers it: the field, and every error with its field
    assert error["details"]["field"] == "constraints.vendors.0"
    assert error["details"]["errors"][0]["field"] == "constraints.vendors.0"
    assert error["message"].startswith("constraints.vendors.0: ")
    assert error["details"]["flag"] == "--vendor"


@pytest.mark.parametrize(
    ("args", "flag"),
    [(("--preset", "llama-3-8b", "--nope"), "--nope"), (("--batch-size",), "--batch-size")],
)
def test_an_option_click_refuses_with_json_is_the_error_object_too(
    read_settings: Settings, args: tuple[str, ...], flag: str
) -> None:
    result = _run(read_settings, "--json", *args)
    assert result.exit_code == 2
    error = _error(result.stdout)
    assert error["details"]["flag"] == flag and flag in error["message"]


def test_a_bad_number_with_json_names_its_field_and_flag(read_settings: Settings) -> None:
    result = _run(read_settings, "--preset", "llama-3-8b", "--batch-size", "lots", "--json")
    assert result.exit_code == 2
    error = _error(result.stdout)
    assert error["details"] == {"field": "workload.batch_size", "flag": "--batch-size"}


def test_a_bad_vendor_names_the_flag_the_user_typed(read_settings: Settings) -> None:
    result = _run(read_settings, "--preset", "llama-3-8b", "--vendor", "foo")
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert said.startswith("--vendor (constraints.vendors.0): Input should be"), said
    assert result.stdout == ""  # without --json the words go to stderr, as before


def test_an_answer_with_no_ranked_row_exits_3_and_still_prints_it(
    read_settings: Settings,
) -> None:
    args = ("--preset", "llama-3-70b", "--task", "training", "--acquisition", "buy",
            "--max-purchase-usd", "500")  # fmt: skip
    as_json = _run(read_settings, *args, "--json")
    assert as_json.exit_code == 3, as_json.output
    answer = json.loads(as_json.stdout)
    assert answer["counts"]["ranked"] == 0 and answer["recommendations"] == []
    table = _run(read_settings, *args)
    assert table.exit_code == 3
    assert "No row:" in table.stdout


def test_an_answer_with_rows_exits_0(read_settings: Settings) -> None:
    result = _run(read_settings, "--preset", "llama-3-8b", "--task", "inference", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["counts"]["ranked"] > 0


def test_help_says_the_exit_statuses() -> None:
    result = CliRunner().invoke(cli, ["recommend", "--help"], env=WIDE)
    said = " ".join(result.output.split())
    assert "Exit status: 0 an answer with ranked rows; 2 " in said
    assert "3 no configuration fits the question" in said
    assert '{"error": {"code", "message", "details"}}' in said

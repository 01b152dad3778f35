"""New user's walk (thirty-seventh session): `gpu-advisor recommend --batch-size lots` was
refused "must be a number, like 15k, 8.03B, 1,281,167 or $800" (a price's and a model size's
examples for a batch), and the JSON API alike, where the form says "like 8 or 1,024". The
three now give a field's own examples from one table (app.numbers.NUMBER_EXAMPLES). And
`gpu-advisor upload --help` showed its argument as "{file}" where the README writes FILE."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli.main import cli
from app.config import Settings
from app.numbers import NUMBER_HELP, field_error, field_help


def _invoke(settings: Settings, *args: str) -> Any:
    env = {"COLUMNS": "200", "GPU_ADVISOR_DATABASE_URL": settings.database_url}
    return CliRunner().invoke(cli, list(args), env=env)


def test_a_fields_examples_come_from_one_table() -> None:
    assert field_help("batch_size") == "like 8 or 1,024"
    assert field_help("serving.output_tokens") == "like 300"
    # a serving field not listed under its own name takes the workload field's
    assert field_help("serving.prompt_tokens") == field_help("prompt_tokens")
    assert field_help("no_such_field") == NUMBER_HELP
    said = field_error(ValueError(f"must be a number, {NUMBER_HELP}"), "max_purchase_usd")
    assert str(said) == "must be a number, like $800 or 25k"
    other = ValueError("must be a whole number")
    assert field_error(other, "batch_size") is other


@pytest.mark.parametrize(
    ("flag", "text", "said"),
    [
        ("--batch-size", "lots", "--batch-size: must be a number, like 8 or 1,024"),
        ("--max-purchase-usd", "cheap", "--max-purchase-usd: must be a number, like $800 or 25k"),
        ("--dataset-samples", "many", "--dataset-samples: must be a number, like 1,281,167 or 50k"),
    ],
)
def test_the_cli_says_the_fields_own_examples(
    read_settings: Settings, flag: str, text: str, said: str
) -> None:
    result = _invoke(read_settings, "recommend", "--preset", "llama-3-8b", flag, text)
    assert result.exit_code == 2, result.output
    assert said in result.stderr and "8.03B" not in result.stderr, result.stderr


def test_the_api_says_the_same(read_client: TestClient) -> None:
    r = read_client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": "llama-3-8b", "batch_size": "lots"}},
    )
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["details"]["field"] == "workload.batch_size"
    assert error["message"] == "workload.batch_size: must be a number, like 8 or 1,024"


def test_arguments_read_as_the_readme_writes_them(read_settings: Settings) -> None:
    for args, usage in (
        (("upload", "--help"), "upload [OPTIONS] {FILE}"),
        (("db", "upgrade", "--help"), "upgrade [OPTIONS] [REVISION]"),
        (("offers", "import", "--help"), "import [OPTIONS] {FILE}..."),
        (("offers", "unmapped", "--help"), "unmapped [OPTIONS] [FILE]..."),
    ):
        result = _invoke(read_settings, *args)
        assert result.exit_code == 0 and usage in result.output, (args, result.output[:300])

"""r33au: the CLI prints what a user typed and what the catalog holds as text, never as rich
markup or emoji codes. A path, profile or device with "[/]" in it had ended in a MarkupError
traceback (exit 1) where a clear refusal (exit 2) was due; '--device cuda:abc' had read
'cuda🔤'; and a catalog GPU named with "[/]" (an admin's edit) had crashed `gpus` and
`recommend` outright."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner, Result

from app.cli import main as cli_main
from app.cli.main import cli
from app.config import Settings
from app.main import create_app
from tests.conftest import ADMIN_TOKEN
from tests.support import lab_card

WIDE = {"COLUMNS": "250", "TERMINAL_WIDTH": "250"}
MARKUP = "x:smile:[/]"


def _run(database_url: str, *args: str) -> Result:
    env = {**WIDE, "GPU_ADVISOR_DATABASE_URL": database_url}
    # the shared console fixes its width when first built (another test may have built it at
    # 80 columns, which leaves the name column out), so the width is set on it as well
    saved = cli_main.console._width
    cli_main.console._width = int(WIDE["COLUMNS"])
    try:
        return CliRunner().invoke(cli, list(args), env=env)
    finally:
        cli_main.console._width = saved


def _refused(result: Result, shown: str) -> None:
    """Exit 2 with the user's text shown as typed, no traceback."""
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    assert "Traceback" not in result.output
    assert shown in result.output.replace("\n", ""), result.output


def test_a_bench_profile_with_markup_is_refused_as_typed(read_settings: Settings) -> None:
    # checked before torch is imported: no device is opened
    result = _run(read_settings.database_url, "bench", "--profile", MARKUP)
    _refused(result, f"unknown profile '{MARKUP}'")


def test_an_upload_file_with_markup_in_its_path_is_refused_as_typed(
    read_settings: Settings, tmp_path: Path
) -> None:
    missing = tmp_path / "[/]report[bold].json"
    result = _run(read_settings.database_url, "upload", str(missing), "--server", "http://x")
    _refused(result, "[/]report[bold].json")


def test_a_hf_config_path_with_markup_is_refused_as_typed(
    read_settings: Settings, tmp_path: Path
) -> None:
    missing = tmp_path / "conf[/]ig.json"
    result = _run(
        read_settings.database_url, "recommend", "--preset", "llama-3-8b",
        "--hf-config", str(missing),
    )  # fmt: skip
    _refused(result, "conf[/]ig.json")


NAME = "Lab [/] Card [bold]x"
# r33fx: escape() takes out markup, not emoji codes: a cell with ":smile:" had printed 😄
EMOJI_NAME = "Lab :smile: Card"
SMILE = "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}"


def _with_gpu(settings: Settings, name: str) -> str:
    """A database with one more GPU, named as an admin may enter it."""
    app = create_app(settings)
    with TestClient(app) as client:
        created = client.post(
            "/api/v1/gpus",
            json=lab_card(name=name),
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        )
        assert created.status_code == 201, created.text
    app.state.engine.dispose()
    return settings.database_url


@pytest.fixture
def markup_named_gpu(settings: Settings) -> Iterator[str]:
    yield _with_gpu(settings, NAME)


@pytest.fixture
def emoji_named_gpu(settings: Settings) -> Iterator[str]:
    yield _with_gpu(settings, EMOJI_NAME)


def test_gpus_lists_a_gpu_named_with_an_emoji_code_as_typed(emoji_named_gpu: str) -> None:
    result = _run(emoji_named_gpu, "gpus", "--search", "lab")
    assert result.exit_code == 0, result.output
    assert EMOJI_NAME in result.output and SMILE not in result.output


def test_recommend_ranks_a_gpu_named_with_an_emoji_code_as_typed(emoji_named_gpu: str) -> None:
    result = _run(
        emoji_named_gpu, "recommend", "--preset", "llama-3-8b", "--task", "inference",
        "--acquisition", "either", "--limit", "200",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert EMOJI_NAME in result.output


def test_gpus_lists_a_gpu_named_with_markup(markup_named_gpu: str) -> None:
    result = _run(markup_named_gpu, "gpus", "--search", "lab")
    assert result.exit_code == 0, result.output
    assert NAME in result.output


def test_recommend_ranks_a_gpu_named_with_markup(markup_named_gpu: str) -> None:
    result = _run(
        markup_named_gpu, "recommend", "--preset", "llama-3-8b", "--task", "inference",
        "--acquisition", "either", "--limit", "200",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert NAME in result.output

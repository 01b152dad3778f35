"""The CLI as a CI job drives it (r34 integrator review): with --json every refusal is the
API's error object on stdout, whoever refuses (click's own range and missing-option checks
printed a box on stderr and nothing on stdout for gpus, offers list, bench and upload); a
refused upload names the server's field; a list longer than one page says how to get the
next; a database that is down or misnamed, an unknown revision or an unwritable -o is one
line and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.exc import ArgumentError, OperationalError
from typer.testing import CliRunner

from app.bench import command as bench_command
from app.cli.failures import failure_of
from app.cli.main import cli
from app.config import Settings
from tests.reports.factory import gpu_report

ROOT = Path(__file__).resolve().parents[2]


def _invoke(settings: Settings, *args: str) -> Any:
    env = {"COLUMNS": "200", "GPU_ADVISOR_DATABASE_URL": settings.database_url}
    return CliRunner().invoke(cli, list(args), env=env)


def _error(stdout: str) -> dict[str, Any]:
    body = json.loads(stdout)
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    return dict(body["error"])


@pytest.mark.parametrize(
    ("args", "field", "flag"),
    [
        (("gpus", "--limit", "0"), "limit", "--limit"),
        (("gpus", "--min-memory-gb", "lots"), "min_memory_gb", "--min-memory-gb"),
        (("offers", "list", "--limit", "501"), "limit", "--limit"),
        (("offers", "list", "--offset", "-1"), "offset", "--offset"),
        (("upload", "report.json"), "server", "--server"),
        (("bench", "--nope"), "request", "--nope"),
    ],
)
def test_a_refusal_click_makes_is_the_error_object_with_json(
    read_settings: Settings, args: tuple[str, ...], field: str, flag: str
) -> None:
    result = _invoke(read_settings, *args, "--json")
    assert result.exit_code == 2, result.output
    error = _error(result.stdout)
    assert error["code"] == "invalid_input"
    assert error["details"] == {"field": field, "flag": flag}
    # without --json it stays click's own message on stderr, stdout empty
    plain = _invoke(read_settings, *args)
    assert plain.exit_code == 2 and plain.stdout == ""


def test_offers_page_on_with_offset_as_the_api_does(
    read_settings: Settings, read_client: TestClient
) -> None:
    first = _invoke(read_settings, "offers", "list", "--limit", "300", "--json")
    total = read_client.get("/api/v1/offers?limit=1").json()["total"]
    assert first.exit_code == 0 and total > 300
    # stdout stays the JSON list; stderr says it is one page and where the next starts
    assert len(json.loads(first.stdout)) == 300
    assert f"300 of {total} offers from offset 0; the next page: --offset 300" in first.stderr
    last = total - 100  # the last page, within one --limit 500
    rest = _invoke(read_settings, "offers", "list", "--offset", str(last), "--json")
    assert rest.exit_code == 0 and "next page" not in rest.stderr
    api = read_client.get(f"/api/v1/offers?limit=500&offset={last}").json()["items"]
    assert json.loads(rest.stdout) == api and len(api) == 100
    gpus = _invoke(read_settings, "gpus", "--limit", "10", "--offset", "10", "--json")
    listed = read_client.get("/api/v1/gpus?limit=10&offset=10").json()["items"]
    assert json.loads(gpus.stdout) == listed and "--offset 20" in gpus.stderr


def test_launch_spec_into_a_folder_that_is_not_there_is_refused_by_name(
    read_settings: Settings, tmp_path: Path
) -> None:
    target = tmp_path / "missing" / "task.yaml"
    result = _invoke(read_settings, "launch-spec", "--gpu", "h100-sxm",
                     "--upload", "http://advisor.example:8000", "-o", str(target))  # fmt: skip
    assert result.exit_code == 2
    assert "--output: cannot write" in result.stderr and "No such file" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_db_upgrade_to_an_unknown_revision_names_it(tmp_path: Path) -> None:
    env = {"GPU_ADVISOR_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
    result = CliRunner().invoke(cli, ["db", "upgrade", "nosuchrev"], env=env)
    assert result.exit_code == 2
    assert "REVISION" in result.stderr and "nosuchrev" in result.stderr


def test_a_refused_upload_names_the_servers_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    refusal = {"error": {"code": "invalid_input", "message": "catalog_match.slug: no",
                         "details": {"field": "catalog_match.slug"}}}  # fmt: skip

    def post(url: str, **_: Any) -> httpx.Response:
        return httpx.Response(422, json=refusal, request=httpx.Request("POST", url))

    monkeypatch.setattr(bench_command.httpx, "post", post)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(gpu_report()), encoding="utf-8")
    code = bench_command.upload_command(path, "http://advisor.example:8000", None, as_json=True)
    assert code == 1
    error = _error(capsys.readouterr().out)
    assert error["code"] == "upload_failed"
    assert error["details"] == {"status": 422, "field": "catalog_match.slug"}


def test_failures_the_cli_explains_and_those_it_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_ADVISOR_DATABASE_URL", f"sqlite:///{tmp_path / 'x.db'}")
    down = OperationalError("SELECT 1", {}, Exception("connection refused"))
    assert failure_of(down)[:2] == ("database_unavailable", "GPU_ADVISOR_DATABASE_URL")  # type: ignore[index]
    assert "connection refused" in failure_of(down)[2]  # type: ignore[index]
    unreadable = ArgumentError("Could not parse SQLAlchemy URL")
    # the setting at fault is named: `worker` parses the queue's URL too
    monkeypatch.setenv("GPU_ADVISOR_QUEUE_URL", "notaurl")
    assert failure_of(unreadable)[:2] == ("invalid_input", "GPU_ADVISOR_QUEUE_URL")  # type: ignore[index]
    monkeypatch.setenv("GPU_ADVISOR_DATABASE_URL", "notaurl")
    assert failure_of(unreadable)[:2] == ("invalid_input", "GPU_ADVISOR_DATABASE_URL")  # type: ignore[index]
    # where both settings read, the URL was not a setting's: a bug, left to its traceback
    monkeypatch.setenv("GPU_ADVISOR_DATABASE_URL", f"sqlite:///{tmp_path / 'x.db'}")
    monkeypatch.delenv("GPU_ADVISOR_QUEUE_URL")
    assert failure_of(unreadable) is None
    missing = FileNotFoundError(2, "No such file or directory", "/proc/nope")
    folder = failure_of(missing, ["offers", "--out", "/proc/nope"])
    assert folder == ("io_error", "path", "No such file or directory: /proc/nope")
    assert failure_of(ValueError("a bug")) is None  # its traceback is the useful answer


def test_a_database_that_is_down_is_one_line_and_exit_1_not_a_traceback() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "GPU_ADVISOR_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "app.cli", "gpus", "--json"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "╭" not in done.stderr
    error = _error(done.stdout)
    assert error["code"] == "database_unavailable"
    assert error["details"] == {"field": "GPU_ADVISOR_DATABASE_URL"}
    assert done.stderr.startswith("error: cannot use the database postgresql://nobody@127.0.0.1:1")

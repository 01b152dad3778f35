"""The CLI explains in a line only the failures that are the user's to fix: an OSError on a path
the command line gave (not a missing shipped data file, a bug whose traceback is the answer),
and from `db upgrade` only alembic's refusal of the REVISION argument (not multiple heads or a
missing script location)."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.script.revision import MultipleHeads, ResolutionError
from alembic.util.exc import CommandError
from typer.testing import CliRunner

from app.cli.failures import failure_of
from app.cli.main import cli
from app.shipped.paths import shipped_path
from app.system import migrate


def _missing(path: Path | str) -> FileNotFoundError:
    return FileNotFoundError(2, "No such file or directory", str(path))


def test_a_missing_shipped_file_is_a_bug_not_an_io_error(tmp_path: Path) -> None:
    shipped = shipped_path("static") / "nope.css"
    assert failure_of(_missing(shipped), ["recommend", "--preset", "sdxl"]) is None
    assert failure_of(_missing(shipped), ["offers", "--out", str(tmp_path)]) is None


def test_a_path_the_command_line_gave_is_an_io_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "a" / "b"
    said = ("io_error", "path", f"No such file or directory: {out}")
    assert failure_of(_missing(out), ["x", "--out", str(out)]) == said
    assert failure_of(_missing(out), ["x", f"--out={out}"]) == said
    # a folder above it (mkdir parents) or a file written into it are the user's too
    assert failure_of(_missing(tmp_path / "a"), ["x", "-o", str(out)]) is not None
    assert failure_of(_missing(out / "r.json"), ["x", "-o", str(out)]) is not None
    # a relative path given, reported absolute
    monkeypatch.chdir(tmp_path)
    assert failure_of(_missing(tmp_path / "r.json"), ["x", "r.json"]) is not None


def _upgrade(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, exc: Exception) -> object:
    def refuse(*_: object, **__: object) -> None:
        raise exc

    monkeypatch.setattr(migrate, "prepare", refuse)
    env = {"GPU_ADVISOR_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
    return CliRunner().invoke(cli, ["db", "upgrade", "abc"], env=env)


def _from(message: str, cause: Exception | None) -> CommandError:
    exc = CommandError(message)
    exc.__cause__ = cause
    return exc


def test_db_upgrade_names_revision_only_for_a_revision_it_cannot_find(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    unknown = _from("Can't locate revision identified by 'abc'", ResolutionError("x", "abc"))
    result = _upgrade(monkeypatch, tmp_path, unknown)
    assert result.exit_code == 2 and "REVISION" in result.stderr  # type: ignore[attr-defined]
    heads = _from("Multiple head revisions are present for given argument 'heads'", None)
    heads.__cause__ = MultipleHeads(["a", "b"], "heads")
    result = _upgrade(monkeypatch, tmp_path, heads)
    assert result.exception is heads  # type: ignore[attr-defined]
    nowhere = _from("Path doesn't exist: /nowhere/migrations.  Please use the 'init' command", None)
    result = _upgrade(monkeypatch, tmp_path, nowhere)
    assert result.exception is nowhere  # type: ignore[attr-defined]

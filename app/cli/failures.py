"""The CLI's answer to a failure outside the command's own checks (the database down or
misnamed, a folder it cannot create): one line naming what to fix and exit 1, with --json the
API's error object on stdout too, never a traceback an operator has to read in a CI log."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from app.errors import error_body

EXIT_FAILED = 1


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _misnamed_url() -> str | None:
    """Which setting holds the URL SQLAlchemy could not read: the database's, else the run
    queue's (`worker` parses it too); None where neither fails (then it is not a setting)."""
    from sqlalchemy.engine import make_url

    from app.config import Settings

    settings = Settings()
    for name, url in (("GPU_ADVISOR_DATABASE_URL", settings.database_url),
                      ("GPU_ADVISOR_QUEUE_URL", settings.queue_url)):  # fmt: skip
        if url is None or url.startswith("redis"):
            continue
        try:
            make_url(url)
        except Exception:
            return name
    return None


def _database_url() -> str:
    """The configured URL with its password hidden (the message names what was tried)."""
    try:
        from sqlalchemy.engine import make_url

        from app.config import Settings

        return make_url(Settings().database_url).render_as_string(hide_password=True)
    except Exception:
        return "the configured database"


def _where(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(os.fspath(path)))


def _given(filename: str | os.PathLike[str], argv: Sequence[str]) -> bool:
    """Whether a path on the command line names ``filename``: it is the path, a folder above it
    (``mkdir(parents=True)`` fails at the first it cannot make) or a file written straight into
    it (an output folder). Any other path, a shipped data file among them, is not the user's."""
    try:
        target = _where(filename)
    except (TypeError, ValueError):
        return False
    for arg in argv:
        value = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
        if not value or value.startswith("-"):
            continue
        given = _where(value)
        if target == given or target in given.parents or target.parent == given:
            return True
    return False


def failure_of(exc: BaseException, argv: Sequence[str] = ()) -> tuple[str, str, str] | None:
    """(code, field, message) for a failure the CLI explains in a line, else None (a bug:
    its traceback is the useful answer). ``argv``: the command line, whose paths are the only
    ones an OSError is the user's to fix on."""
    from sqlalchemy.exc import ArgumentError, InterfaceError, NoSuchModuleError, OperationalError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    if isinstance(exc, ArgumentError | NoSuchModuleError):
        # a dialect with no driver here ("mysql://…") parses, so only the database's can be it
        setting = "GPU_ADVISOR_DATABASE_URL" if isinstance(exc, NoSuchModuleError) else None
        setting = setting or _misnamed_url()
        if setting is None:
            return None
        like = ("sqlite:////path/to/queue.db or redis://host:6379/0" if "QUEUE" in setting
                else "sqlite:////path/to/file.db or postgresql://user@host/db")  # fmt: skip
        why = _first_line(exc)
        return ("invalid_input", setting,
                f"{setting} is not a URL SQLAlchemy can use ({why}); e.g. {like}")  # fmt: skip
    # down, unreachable, refused, locked past the busy timeout, out of connections: what the
    # API answers 503 database_unavailable (app/main.py); any other database error is a bug
    if isinstance(exc, OperationalError | InterfaceError | PoolTimeout):
        return ("database_unavailable", "GPU_ADVISOR_DATABASE_URL",
                f"cannot use the database {_database_url()}: {_first_line(exc)}")  # fmt: skip
    from app.reports.queue import QueueUnavailable

    if isinstance(exc, QueueUnavailable):
        return ("queue_unavailable", "GPU_ADVISOR_QUEUE_URL", str(exc))
    if isinstance(exc, OSError) and exc.filename:
        if not _given(exc.filename, argv):
            return None  # not a path the user gave: a missing shipped file is a bug
        return ("io_error", "path", f"{exc.strerror or _first_line(exc)}: {exc.filename}")
    return None


def explain(exc: BaseException, argv: list[str]) -> int | None:
    """Print the line (and with --json the error object) for ``exc``; its exit status, or
    None when the CLI does not know this failure."""
    found = failure_of(exc, argv)
    if found is None:
        return None
    code, field, message = found
    if "--json" in argv:
        print(json.dumps(error_body(code, message, {"field": field})))
    print(f"error: {message}", file=sys.stderr)
    return EXIT_FAILED

"""r41 walk: `gpu-advisor serve --port 8471` with the port already taken printed "GPU Advisor
on http://127.0.0.1:8471" (another process's address) and then uvicorn's JSON log line
"[Errno 98] … address already in use", exit 3; under `--workers 2` the line did not name the
port. `serve` now checks where it is to listen first: one line naming --host and --port, exit
1, nothing migrated, no server started."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from typer.testing import CliRunner

from app.cli.main import cli
from app.system import migrate
from app.system.listen import cannot_listen


@pytest.fixture
def taken() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


def test_a_taken_port_is_named(taken: int) -> None:
    said = cannot_listen("127.0.0.1", taken)
    assert said == f"--host 127.0.0.1 --port {taken}: cannot listen there: address already in use"


def test_a_free_port_passes() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert cannot_listen("127.0.0.1", free) is None


def test_a_host_that_does_not_resolve_is_named() -> None:
    said = cannot_listen("no-such-host.invalid", 8000)
    assert said is not None and said.startswith("--host no-such-host.invalid: cannot resolve")


def test_serve_on_a_taken_port_exits_1_before_anything_starts(
    taken: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[str] = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: started.append("uvicorn"))
    monkeypatch.setattr(migrate, "prepare", lambda *a, **k: started.append("migrate"))
    env = {"GPU_ADVISOR_DATABASE_URL": f"sqlite:///{tmp_path / 'a.db'}"}
    result = CliRunner().invoke(cli, ["serve", "--port", str(taken), "--no-worker"], env=env)
    assert result.exit_code == 1, result.output
    assert started == []
    assert result.stdout == ""  # no "GPU Advisor on http://…" for another process's port
    assert result.stderr.strip().splitlines() == [
        f"error: --host 127.0.0.1 --port {taken}: cannot listen there: address already in use"
    ]

"""r41 walk: `gpu-advisor upload FILE --server http://host:8000/api/v1` (a base URL with the
API's prefix) was answered "--upload wants the server's base URL", a flag `upload` does not
have; the hint names the flag the address came from, `bench --upload` keeping its own."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console

from app.bench import command
from app.bench.command import upload_command
from tests.bench.conftest import make_report


def _nothing_there(monkeypatch: pytest.MonkeyPatch) -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(404, json={"detail": "Not Found"}))

    def post(url: str, **kw: Any) -> httpx.Response:
        with httpx.Client(transport=transport) as c:
            return c.post(url, **kw)

    monkeypatch.setattr(command.httpx, "post", post)


def test_upload_names_server_where_the_address_is_wrong(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _nothing_there(monkeypatch)
    saved = tmp_path / "r.json"
    saved.write_text(make_report().model_dump_json())
    buf = io.StringIO()
    code = upload_command(saved, "http://s:8000/api/v1", None,
                          console=Console(file=buf, width=400), as_json=True)  # fmt: skip
    assert code == 1
    message = json.loads(buf.getvalue().splitlines()[-1])["error"]["message"]
    assert "--server wants the server's base URL" in message, message
    assert "--upload" not in message


def test_bench_upload_keeps_its_own_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    _nothing_there(monkeypatch)
    with pytest.raises(command.UploadError, match="--upload wants the server's base URL"):
        command.upload(make_report(), "http://s:8000/api/v1", None)

"""r30 review: `gpu-advisor upload --json` printed the stored report's id as a string ("1")
where POST /api/v1/device-reports answers the integer 1: a script reading both saw two types.
The id is now printed as the API answered it (tested against the app itself)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from app.bench import command
from app.bench.command import upload_command
from tests.bench.conftest import make_report


def test_upload_json_prints_the_api_s_id_type(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    answers: list[Any] = []

    def post(url: str, **kw: Any) -> httpx.Response:  # the CLI's POST, to the app itself
        path = httpx.URL(url).path
        got = client.post(path, content=kw["content"], headers=kw["headers"])
        answers.append(got.json())
        # the body as decoded, so without the compression headers it came with
        return httpx.Response(
            got.status_code,
            json=got.json(),
            headers={k: v for k, v in got.headers.items() if k.lower().startswith("idempotent")},
        )

    monkeypatch.setattr(command.httpx, "post", post)
    saved = tmp_path / "r.json"
    saved.write_text(make_report().model_dump_json(indent=2))
    buf = io.StringIO()
    code = upload_command(saved, "http://s", None, console=Console(file=buf), as_json=True)
    assert code == 0, buf.getvalue()
    printed = json.loads(buf.getvalue().splitlines()[-1])
    (api,) = answers
    assert isinstance(api["id"], int)  # the API's own type
    assert printed["id"] == api["id"] and type(printed["id"]) is type(api["id"])
    assert printed["url"].endswith(f"/device/reports/{api['id']}")


def test_a_server_answer_without_a_usable_id_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for body in ({"id": None}, {"id": [1]}, {"id": True}):
        transport = httpx.MockTransport(lambda r, b=body: httpx.Response(201, json=b))

        def post(url: str, _t: httpx.MockTransport = transport, **kw: Any) -> httpx.Response:
            with httpx.Client(transport=_t) as c:
                return c.post(url, **kw)

        monkeypatch.setattr(command.httpx, "post", post)
        with pytest.raises(command.UploadError, match="without an 'id' field"):
            command.upload(make_report(), "http://s", None)

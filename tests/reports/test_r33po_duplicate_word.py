"""r33po: one word for one fact. A report the server already held is answered with
`duplicate: true`, a retry under the same Idempotency-Key (what `gpu-advisor upload` and
`bench --upload` send, a key from the report's content) included: that answer had said
`duplicate: false` beside `Idempotent-Replayed: true`, and `upload --json` said
`already_stored` where the API says `duplicate`."""

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
from tests.reports.factory import gpu_report


def test_a_retry_under_its_key_says_duplicate(client: TestClient) -> None:
    key = {"Idempotency-Key": "r33po-1"}
    first = client.post("/api/v1/device-reports", json=gpu_report(), headers=key)
    assert first.status_code == 201 and first.json()["duplicate"] is False
    again = client.post("/api/v1/device-reports", json=gpu_report(), headers=key)
    assert again.status_code == 201, again.text  # a retry keeps the first answer's status
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json()["id"] == first.json()["id"] and again.json()["duplicate"] is True
    assert client.get("/api/v1/device-reports").json()["total"] == 1


@pytest.mark.parametrize(
    ("answer", "headers"),
    [
        ({"id": 4, "duplicate": True}, {}),
        ({"id": 4, "duplicate": False}, {"Idempotent-Replayed": "true"}),
    ],
)
def test_upload_json_uses_the_api_word(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, answer: dict[str, Any],
    headers: dict[str, str],
) -> None:  # fmt: skip
    transport = httpx.MockTransport(lambda r: httpx.Response(200, json=answer, headers=headers))

    def post(url: str, **kw: Any) -> httpx.Response:
        with httpx.Client(transport=transport) as c:
            return c.post(url, **kw)

    monkeypatch.setattr(command.httpx, "post", post)
    saved = tmp_path / "r.json"
    saved.write_text(make_report().model_dump_json())
    buf = io.StringIO()
    assert upload_command(saved, "http://s:2", None, console=Console(file=buf, width=300),
                          as_json=True) == 0  # fmt: skip
    out = json.loads(buf.getvalue().splitlines()[-1])
    assert out == {"id": 4, "url": "http://s:2/device/reports/4", "duplicate": True}

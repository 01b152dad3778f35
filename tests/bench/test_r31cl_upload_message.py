"""`gpu-advisor upload FILE` on a file that is not a bench report names every field at
fault: the message had been the first lines of pydantic's text, "2 validation errors for
BenchReport profile Field required", which named one missing field of two."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from app.bench.command import upload_command


def _refusal(tmp_path: Path, text: str) -> dict[str, str]:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    buf = io.StringIO()
    code = upload_command(bad, "http://s:2", None, console=Console(file=buf, width=300),
                          as_json=True)  # fmt: skip
    assert code == 2
    body: dict[str, str] = json.loads(buf.getvalue().splitlines()[-1])["error"]
    return body


def test_each_missing_field_is_named(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "{}")["message"]
    assert "profile: Field required" in message and "environment: Field required" in message
    assert "validation errors for" not in message


def test_a_nested_field_is_named_by_its_path(tmp_path: Path) -> None:
    message = _refusal(tmp_path, '{"profile": "quick", "environment": {"backend": "cuda"}}')[
        "message"
    ]
    assert "environment.device_name: Field required" in message


def test_a_file_that_is_not_json_says_so(tmp_path: Path) -> None:
    assert "Invalid JSON" in _refusal(tmp_path, "not json")["message"]

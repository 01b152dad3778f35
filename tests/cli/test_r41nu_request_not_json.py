"""`recommend --request` on a file that is not a JSON object says so in words: a plain text
file had answered only "Expecting value: line 1 column 1 (char 0)", Python's JSON words (the
CLI pass of the forty-first session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.recommend import read_request_file


def test_text_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "hostname"
    path.write_text("box-1\n")
    with pytest.raises(ValueError, match=r"hostname is not JSON \(Expecting value at line 1"):
        read_request_file(str(path))


def test_json_that_is_not_an_object_is_named(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="holds JSON but not an object"):
        read_request_file(str(path))


def test_a_binary_file_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "blob"
    path.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(ValueError, match="is not text"):
        read_request_file(str(path))


def test_an_object_is_read(tmp_path: Path) -> None:
    path = tmp_path / "body.json"
    path.write_text('{"workload": {"preset": "gpt-2"}}')
    assert read_request_file(str(path)) == {"workload": {"preset": "gpt-2"}}

"""The CLI's serving table for an encoder (issue 21): BERT-large's shape (BGE-large's) on TEI.
Its columns say latency, embeddings/s and $ per million embeddings, within 80 columns, and
neither TTFT, ITL nor output tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import main as cli_main
from app.cli.main import cli
from app.config import Settings

NARROW = {"COLUMNS": "80", "TERMINAL_WIDTH": "80"}
WIDE = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}
SERVING = {
    "workload": {
        "preset": "bert-large",
        "task": "serving",
        "serving": {"concurrent_requests": 64, "prompt_tokens": 256, "ttft_ms_target": 200},
    },
    "constraints": {"acquisition": "rent"},
    "limit": 3,
}


def _run(
    read_settings: Settings, tmp_path: Path, width: dict[str, str], mp: pytest.MonkeyPatch
) -> str:
    # the shared console's width as the environment says: another module's run may have sized
    # it first (the suite runs modules side by side)
    mp.setattr(cli_main.console, "_width", int(width["COLUMNS"]))
    body = tmp_path / "serving.json"
    body.write_text(json.dumps(SERVING))
    env = {**width, "GPU_ADVISOR_DATABASE_URL": read_settings.database_url}
    result = CliRunner().invoke(cli, ["recommend", "--request", str(body)], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def test_an_encoders_serving_table_says_its_own_units(
    read_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _run(read_settings, tmp_path, WIDE, monkeypatch)
    table = out[out.index("┏") : out.index("┘")]
    for said in ("latency ms", "emb/s", "max emb/s", "$/1M emb", "fp16 · TEI"):
        assert said in table, said
    for unsaid in ("TTFT", "ITL", "tok/s", "$/1M out", "KV"):
        assert unsaid not in out, unsaid
    assert "latency: a request in to its embedding out" in out
    assert "within latency ≤ 200 ms" in out
    assert "fp16 weights on TEI" in out  # the verdict: no KV cache to name


def test_it_fits_80_columns(
    read_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _run(read_settings, tmp_path, NARROW, monkeypatch)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "$/1M emb" in out

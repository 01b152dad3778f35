"""An empty answer that memory keeps off the cards says how far, in the verdict and in
``empty.message`` (the page shows the verdict only); the CLI prints both and had printed that
paragraph twice. It says it once, in the verdict; "No row" keeps the counts and the nearest."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from app.cli.recommend import EXIT_NO_FIT, run
from app.config import Settings

QLORA_UNDER_8_CENTS = {
    "preset": "llama-3.1-8b", "task": "fine-tuning", "peft": "qlora", "seq_len": 2048,
    "acquisition": "rent", "max_hourly_usd": 0.08, "max_gpus": 1,
}  # fmt: skip


def test_the_memory_paragraph_is_printed_once(
    read_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_ADVISOR_DATABASE_URL", read_settings.database_url)
    out, err = Console(record=True, width=2000), Console(record=True, width=2000)
    assert run(QLORA_UNDER_8_CENTS, False, out, err) == EXIT_NO_FIT
    text = re.sub(r"\s+", " ", out.export_text())
    assert text.count("Memory: as asked it needs") == 1
    verdict, no_row = text.split("Verdict:")[1].split("No row:")
    assert "Memory: as asked it needs" in verdict
    assert "do not fit" in no_row.split("What changes the answer")[0]

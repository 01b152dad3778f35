"""A new user's first CLI runs (session 14): an error names the flag they typed, a mistyped
preset lists the known ones, and the table gives the time to finish as the verdict says it."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from app.cli.recommend import render, run
from app.config import Settings
from app.domain.evaluate import hours_text
from app.recommend import schemas as s
from app.recommend import service
from tests.domain.fixtures import A100, H100, RULES
from tests.support import summary_of


@pytest.fixture(autouse=True)
def _database(read_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    # run() reads Settings() from the environment: a seeded copy, never the user's own
    monkeypatch.setenv("GPU_ADVISOR_DATABASE_URL", read_settings.database_url)


def _errors(options: dict[str, object]) -> str:
    out, err = Console(record=True, width=2000), Console(record=True, width=2000)
    assert run(options, False, out, err) == 2
    return err.export_text()


def test_a_bad_value_names_the_flag_and_the_field() -> None:
    text = _errors({"preset": "llama-3-8b", "batch_size": -1})
    assert "--batch-size (workload.batch_size):" in text


def test_an_unknown_preset_lists_the_known_ones() -> None:
    text = _errors({"preset": "llama-3-8bb"})
    assert "--preset (workload.preset): unknown workload preset 'llama-3-8bb'" in text
    known = re.search(r"known presets: (.*)", text, re.S)
    assert known and "llama-3-8b," in known.group(1) and "resnet-50" in known.group(1)


def test_the_table_gives_time_to_finish_as_the_verdict_and_the_unit_once() -> None:
    # "0.3 h" in the table beside "finishes the job in 16 min" in the verdict above it; and
    # "1,019 tokens/s" in every cell squeezed an 80-column table to "throu…"
    request = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "mistral-7b", "task": "fine-tuning", "peft": "qlora"}}
    )
    response = service.recommend(request, [A100, H100], RULES)
    response.summary = summary_of(response)
    console = Console(record=True, width=2000)
    render(response, console)
    text = console.export_text()
    top = response.recommendations[0]
    assert top.time_to_finish_h is not None
    assert f"finishes the job in {hours_text(top.time_to_finish_h)}" in text  # the verdict
    row = next(line for line in text.splitlines() if line.startswith("│ 1 "))
    assert hours_text(top.time_to_finish_h) in row
    assert "throughput (tokens/s)" in text and "tokens/s" not in row

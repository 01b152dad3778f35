"""The recommend table's words: an LLM inference answer's throughput named for what it is (output
tokens over whole requests, the prompt's prefill included) with each row's decode rate beside it
(batch × 1000 ÷ ms per output token; at batch 1 llama.cpp's and Ollama's "eval rate", which
people compare cards by), and the memory footnote in plain words (it read "Memory in the GB
cards are labelled in")."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from app.cli.main import cli
from app.cli.recommend import _fmt, decode_rate
from app.config import Settings

WIDE = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich fixes a console's width at creation (another test's 80 columns under xdist): the
    wide terminal is set on the console itself, not only in the environment."""
    from app.cli import main as cli_main

    monkeypatch.setattr(cli_main.console, "_width", 200)


def _env(settings: Settings) -> dict[str, str]:
    return {**WIDE, "GPU_ADVISOR_DATABASE_URL": settings.database_url}


def _table_rows(output: str) -> list[list[str]]:
    table = output[output.index("┏") : output.index("┘")]
    return [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in table.splitlines()
        if line.startswith("│")
    ]


def test_decode_rate_is_tokens_per_second_while_generating() -> None:
    assert decode_rate(25.0) == 40.0  # batch 1: llama.cpp's and Ollama's eval rate
    assert decode_rate(25.0, 8) == 320.0  # the whole batch's, as the verdict says it
    assert decode_rate(None) is None and decode_rate(0.0) is None


def test_llm_inference_rows_show_their_decode_rate_beside_the_end_to_end_rate(
    wide: None,
    read_settings: Settings,
) -> None:
    args = ["recommend", "--preset", "llama-3-8b", "--task", "inference", "--batch-size", "4"]
    env = _env(read_settings)
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    rows = json.loads(CliRunner().invoke(cli, [*args, "--json"], env=env).stdout)["recommendations"]
    head = result.output[result.output.index("┏") : result.output.index("┡")]
    assert "end-to-end" in head and "decode" in head and "throughput" not in head
    shown = _table_rows(result.output)
    assert len(shown) == len(rows)
    for r, cells in zip(rows, shown, strict=True):
        decode = _fmt(4 * 1000.0 / r["ms_per_output_token"])
        end_to_end = _fmt(r["throughput"]["value"])
        # the decode cell right after the end-to-end one; the ranking's order unchanged
        assert cells[cells.index(end_to_end) + 1] == decode, (cells, decode)
        assert cells[0] == str(r["rank"])
    said = " ".join(result.output.split())
    assert "tok/s end-to-end: output tokens ÷ the whole request (the 2,048-token prompt's" in said
    assert "eval rate" in said


def test_other_answers_keep_one_throughput_column(read_settings: Settings) -> None:
    result = CliRunner().invoke(
        cli, ["recommend", "--preset", "resnet-50", "--task", "inference"], env=_env(read_settings)
    )
    assert result.exit_code == 0, result.output
    head = result.output[result.output.index("┏") : result.output.index("┡")]
    assert "throughput" in head and "decode" not in head and "end-to-end" not in head


def test_the_memory_footnote_says_which_gb_in_plain_words(read_settings: Settings) -> None:
    result = CliRunner().invoke(
        cli, ["recommend", "--preset", "resnet-50", "--task", "inference"], env=_env(read_settings)
    )
    said = " ".join(result.output.split())
    assert 'memory GiB: 2^30 bytes each, the unit the cards\' "GB" are' in said
    assert "--json's *_gb fields are 10^9 bytes" in said
    assert not re.search(r"GB cards are labelled in", said)


def test_the_decode_column_leaves_an_80_column_table_whole() -> None:
    """With the decode column beside "bottleneck", rich's own sharing of the room narrowed
    the text columns and then widened them back to their longest words, past 80 columns: the
    last column was cut off. The text columns now get their widths from the table."""
    from rich.console import Console

    from app.cli.recommend import render
    from app.recommend import schemas as s
    from app.recommend import service
    from tests.domain.fixtures import A100, H100, RTX4090, RULES

    request = s.RecommendationRequest.model_validate(
        {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 8},
         "constraints": {"acquisition": "buy"}}
    )  # fmt: skip
    response = service.recommend(request, [A100, H100, RTX4090], RULES)
    console = Console(record=True, width=80)
    render(response, console)
    text = console.export_text()
    table = text[text.index("┏") : text.index("┘") + 1]
    assert max(len(line) for line in table.splitlines()) <= 80
    assert table.splitlines()[-1].endswith("┘")
    words = {w for line in table.splitlines() for cell in line.split("│") for w in cell.split()}
    for r in response.recommendations:
        assert set(r.gpu.name.split()) <= words, r.gpu.name
    assert "decode" in table
    # "to finish" is "—" in every row (inference, no dataset): left out before a column with
    # figures, and named (r33nu)
    assert "finish" in table or "to finish" in text.split("Left out at this width:")[1]

"""`gpu-advisor recommend --hf-config FILE` as a user runs it (a real process, a real SQLite file)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

CONFIG = ROOT / "tests" / "data" / "hf_configs" / "mixtral-8x7b.json"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_ADVISOR_")}
    env["GPU_ADVISOR_DATABASE_URL"] = f"sqlite:///{tmp_path / 'cli.db'}"
    env["COLUMNS"] = "250"
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "recommend", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_hf_config_file_sets_the_model(tmp_path: Path) -> None:
    done = _run(
        tmp_path, "--hf-config", str(CONFIG), "--task", "inference", "--limit", "2", "--json"
    )
    assert done.returncode == 0, done.stderr
    model = json.loads(done.stdout)["workload"]["model"]
    assert model["params"] == pytest.approx(46.7e9, rel=0.01)
    assert model["active_params"] == pytest.approx(12.9e9, rel=0.02)


def test_unreadable_hf_config_names_the_option(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    done = _run(tmp_path, "--hf-config", str(bad), "--task", "inference")
    assert done.returncode == 2
    assert "--hf-config" in done.stderr + done.stdout


def test_serving_plan_as_a_table(tmp_path: Path) -> None:
    done = _run(
        tmp_path, "--preset", "llama-3-70b", "--task", "serving", "--concurrent-requests", "50",
        "--prompt-tokens", "1000", "--serving-output-tokens", "300", "--ttft-ms-target", "1000",
        "--itl-ms-target", "50", "--acquisition", "rent", "--objective", "best_value",
        "--limit", "3",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "replicas × GPUs" in done.stdout and "$/1M out" in done.stdout
    assert "GPU types carry" in done.stdout and "ITL ≤ 50 ms" in done.stdout
    # $/1M out is the whole hour ÷ the output tokens it produces (what API price lists are
    # compared with), not the decode share of the hour, which the split column shows
    row = next(line for line in done.stdout.splitlines() if re.match(r"│ 1 │", line))
    cells = [c.strip() for c in row.strip("│").split("│")]
    out_tps, blended, split, per_hour = (cells[6], cells[8], cells[9], cells[10])
    tokens_per_hour = float(out_tps.replace(",", "")) * 3600
    assert float(blended) == pytest.approx(float(per_hour) / tokens_per_hour * 1e6, rel=0.02)
    assert float(split.split("/")[0]) < float(blended)


def test_llm_inference_table_prices_a_million_output_tokens(tmp_path: Path) -> None:
    done = _run(
        tmp_path, "--preset", "llama-3-8b", "--task", "inference", "--batch-size", "4",
        "--acquisition", "rent", "--limit", "3",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    head = next(line for line in lines if "end-to-end" in line)
    names = [c.strip() for c in head.strip("┃").split("┃")]
    row = next(line for line in lines if re.match(r"│ 1 │", line))
    cells = dict(zip(names, [c.strip() for c in row.strip("│").split("│")], strict=True))
    # the whole hour ÷ the output tokens it produces: $/h over tokens/s × 3600, per million
    tokens_per_s = float(cells["tok/s end-to-end"].replace(",", ""))
    expected = float(cells["$/h (all)"]) / (tokens_per_s * 3600) * 1e6
    assert float(cells["$/1M out"]) == pytest.approx(expected, rel=0.02)


def test_serving_under_either_names_each_rows_price_basis(tmp_path: Path) -> None:
    """Issue #23: under acquisition 'either' each serving row is priced and ranked on its
    cheaper basis; the table names it (own or rent), beside $/1M out and $/h."""
    done = _run(
        tmp_path, "--preset", "llama-3-8b", "--task", "serving", "--concurrent-requests", "10",
        "--prompt-tokens", "500", "--serving-output-tokens", "200", "--limit", "10",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    head = next(line for line in lines if "replicas × GPUs" in line)
    names = [c.strip() for c in head.strip("┃").split("┃")]
    assert "basis" in names
    rows = [line for line in lines if re.match(r"│\s*\d+ │", line)]
    at = names.index("basis")
    bases = {[c.strip() for c in r.strip("│").split("│")][at] for r in rows}
    assert bases == {"own", "rent"}
    assert "basis: what $/1M out and $/h rest on" in done.stdout


def test_serving_table_names_a_release_format_as_the_page_does(tmp_path: Path) -> None:
    # llama.cpp serves gpt-oss's MXFP4 release on its int4 kernels: the weights/KV column
    # said "int4/fp16"; it names the format, as the verdict and the answer page do
    done = _run(
        tmp_path, "--preset", "gpt-oss-20b", "--task", "serving", "--runtime", "llama.cpp",
        "--concurrent-requests", "2", "--limit", "3",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if re.match(r"│ \d │", line)]
    cells = [[c.strip() for c in row.strip("│").split("│")][3] for row in rows]
    assert cells and all(c.startswith("MXFP4/") for c in cells), cells

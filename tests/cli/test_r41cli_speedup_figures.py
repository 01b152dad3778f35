"""r41 walk: `gpu-advisor recommend --device-report N` wrote its "vs yours" column to one
decimal ("5222.0×", "1.8×") where every other figure, and the page's "Speedup vs yours", is
three significant figures, whole from 1,000 (README "The CLI"): "5,222×", "1.83×"."""

from __future__ import annotations

import json
import re

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli.main import cli
from app.config import Settings
from app.domain.figures import sig_figs
from tests.reports.factory import gpu_report

WIDE = {"COLUMNS": "250", "TERMINAL_WIDTH": "250"}


def test_vs_yours_is_written_as_the_page_writes_it(client: TestClient, settings: Settings) -> None:
    # a slow H100 of one's own: every catalog row is some multiple of it
    posted = client.post("/api/v1/device-reports", json=gpu_report(bf16=7.9, fp32=0.51))
    assert posted.status_code == 201, posted.text
    argv = ["recommend", "--preset", "resnet-50", "--task", "inference", "--limit", "4",
            "--device-report", str(posted.json()["id"])]  # fmt: skip
    env = {**WIDE, "GPU_ADVISOR_DATABASE_URL": settings.database_url}
    answer = CliRunner().invoke(cli, [*argv, "--json"], env=env)
    assert answer.exit_code == 0, answer.output
    speedups = [r["speedup_vs_baseline"] for r in json.loads(answer.stdout)["recommendations"]]
    assert speedups and all(s is not None for s in speedups)
    table = CliRunner().invoke(cli, argv, env=env)
    assert table.exit_code == 0, table.output
    cells = re.findall(r"^│\s*(\S+×)\s*│", table.stdout, flags=re.MULTILINE)
    assert cells == [f"{sig_figs(s)}×" for s in speedups], (cells, speedups)

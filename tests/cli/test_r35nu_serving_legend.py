"""New user's walk (thirty-fifth session): the CLI's serving table headed its latency columns
"TTFT ms" and "ITL ms" and explained only "$/1M out" under it; the pages say what each is
under its name. The legend under the table says both, within 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from app.cli.main import cli
from app.config import Settings

NARROW = {"COLUMNS": "80", "TERMINAL_WIDTH": "80"}
SERVING = {
    "workload": {
        "preset": "llama-3.1-8b",
        "task": "serving",
        "serving": {"concurrent_requests": 20},
    },
    "constraints": {"acquisition": "rent"},
    "limit": 3,
}


def test_the_serving_legend_says_what_ttft_and_itl_are(
    read_settings: Settings, tmp_path: Path
) -> None:
    body = tmp_path / "serving.json"
    body.write_text(json.dumps(SERVING))
    env = {**NARROW, "GPU_ADVISOR_DATABASE_URL": read_settings.database_url}
    result = CliRunner().invoke(cli, ["recommend", "--request", str(body)], env=env)
    assert result.exit_code == 0, result.output
    after = result.output[result.output.index("┘") :]
    assert "TTFT: time to the first token; ITL: time between output tokens" in after
    assert max(len(line) for line in result.output.splitlines()) <= 80

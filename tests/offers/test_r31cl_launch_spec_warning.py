"""`gpu-advisor launch-spec ... -o task.yaml` with a loopback --upload URL says on stderr that
a rented machine cannot reach it: the warning had been only a comment inside the file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.support import ROOT


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def test_a_loopback_upload_is_said_on_stderr_and_in_the_file(
    seeded_database_url: str, tmp_path: Path
) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GPU_ADVISOR_")}
    env = base | {"GPU_ADVISOR_DATABASE_URL": seeded_database_url, "COLUMNS": "250"}
    spec = tmp_path / "task.yaml"
    made = _cli("launch-spec", "--gpu", "h100-sxm", "--upload", "http://127.0.0.1:8000",
                "-o", str(spec), env=env)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "loopback" in made.stderr and "cannot reach" in made.stderr
    text = spec.read_text()
    assert text.startswith("# WARNING: the upload URL http://127.0.0.1:8000")
    assert all(line.startswith("#") for line in text.splitlines()[:3])
    assert yaml.safe_load(text)["run"]  # the comment keeps the YAML valid

    public = _cli("launch-spec", "--gpu", "h100-sxm", "--upload", "https://advisor.example.org",
                  "-o", str(spec), env=env)  # fmt: skip
    assert public.returncode == 0, public.stderr
    assert "loopback" not in public.stderr and "WARNING" not in spec.read_text()

"""`gpu-advisor offers ...` and `launch-spec` as a user runs them: real processes, real
files, on SQLite and (when configured) PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.support import ROOT

SEEWEB = Path(__file__).parent / "data" / "seeweb-vms.csv"


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def _env(database_url: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GPU_ADVISOR_")}
    return base | {"GPU_ADVISOR_DATABASE_URL": database_url, "COLUMNS": "250"}


def _count(env: dict[str, str]) -> str:
    out = run_cli("offers", "list", "--provider", "seeweb", "--kind", "cloud", env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()[0].strip()


def test_import_list_unmapped_and_launch_spec(database_url: str, tmp_path: Path) -> None:
    env = _env(database_url)
    assert run_cli("db", "upgrade", env=env).returncode == 0
    seeded = run_cli("db", "seed", env=env)
    assert seeded.returncode == 0, seeded.stderr

    first = run_cli("offers", "import", str(SEEWEB), "--provider", "seeweb", env=env)
    assert first.returncode == 0, first.stderr
    assert "8 added, 0 updated, 0 unchanged, 4 skipped" in first.stdout
    assert "CPU-only" in first.stdout and "RTX PRO 6000 96GB" in first.stdout
    again = run_cli("offers", "import", str(SEEWEB), "--provider", "seeweb", env=env)
    assert "0 added, 0 updated, 8 unchanged" in again.stdout
    assert _count(env).startswith("8 offers")

    broken = tmp_path / "vms.csv"
    broken.write_text(SEEWEB.read_text().replace(",0.38,it-fr2", ",free,it-fr2") + "ECS9,L4,1\n")
    rejected = run_cli("offers", "import", str(broken), "--provider", "seeweb", env=env)
    assert rejected.returncode == 2
    assert "nothing written" in rejected.stderr and "truncated" in rejected.stderr
    assert _count(env).startswith("8 offers")

    listed = run_cli("offers", "list", "--gpu", "l40s", env=env)
    assert listed.returncode == 0 and "ECS4GPU7" in listed.stdout and "seeweb" in listed.stdout

    unmapped = run_cli("offers", "unmapped", env=env)
    assert unmapped.returncode == 0 and "K80" in unmapped.stdout and "H100" in unmapped.stdout

    spec = tmp_path / "task.yaml"
    made = run_cli(
        "launch-spec", "--gpu", "h100-sxm", "--gpus", "2", "--provider", "lambda",
        "--upload", "https://advisor.example.org", "-o", str(spec), env=env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    task = yaml.safe_load(spec.read_text())
    res = task["resources"]
    assert (res["cloud"], res["instance_type"], res["accelerators"]) == (
        "lambda", "gpu_2x_h100_sxm5", "H100:2"
    )  # fmt: skip
    assert "gpu-advisor bench --profile standard" in task["run"]
    assert "--upload https://advisor.example.org" in task["run"]
    assert "pip install ." in task["setup"]
    none = run_cli("launch-spec", "--gpu", "apple-m4", "--upload", "http://x", env=env)
    assert none.returncode == 2 and "no launchable offer" in none.stderr

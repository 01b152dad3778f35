"""The `gpu-advisor` command as a user runs it: real processes, a real server, a real
SQLite file. The benchmark runs for real (quick profile, CPU) and uploads over HTTP."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import ROOT, live_server


def run_cli(
    *args: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("cli")
    base = {k: v for k, v in os.environ.items() if not k.startswith("GPU_ADVISOR_")}
    return base | {"GPU_ADVISOR_DATABASE_URL": f"sqlite:///{tmp / 'cli.db'}", "COLUMNS": "200"}


@pytest.fixture(scope="module")
def server(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server(env, tmp_path_factory.mktemp("cli-server") / "server.log") as base:
        yield base


def test_db_upgrade_and_seed_are_repeatable(env: dict[str, str]) -> None:
    assert run_cli("db", "upgrade", env=env).returncode == 0
    first = run_cli("db", "seed", env=env)
    assert first.returncode == 0, first.stderr
    again = run_cli("db", "seed", env=env)
    assert "0 inserted" in again.stdout and "0 updated" in again.stdout


def test_seed_reports_bad_data_by_file_gpu_and_field(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    broken = (
        (data / "gpus" / "nvidia-geforce.yaml")
        .read_text()
        .replace("memory_bandwidth_gbs: 1008", "memory_bandwidth_gbs: fast", 1)
    )
    (data / "gpus" / "nvidia-geforce.yaml").write_text(broken)
    result = run_cli("db", "seed", env=env | {"GPU_ADVISOR_DATA_DIR": str(data)})
    assert result.returncode == 2
    message = " ".join((result.stdout + result.stderr).split())
    assert "nvidia-geforce.yaml" in message and "rtx-4090" in message
    assert "memory_bandwidth_gbs" in message


def test_bench_uploads_and_recommend_uses_it(
    env: dict[str, str], server: str, tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    # a generous timeout: the quick profile's budget holds on an idle machine, not on a shared one
    bench = run_cli(
        "bench",
        "--profile",
        "quick",
        "--output",
        str(out),
        "--upload",
        server,
        env=env,
        timeout=600,
    )
    assert bench.returncode == 0, bench.stderr[-2000:]
    report = json.loads(out.read_text())
    assert (
        report["schema_version"] == 2
        and report["matmul"]["by_precision"]["fp32"]["best"]["value"] > 0
    )
    assert "matmul fp32" in bench.stdout and "Tips" in bench.stdout

    listed = httpx.get(f"{server}/api/v1/device-reports").json()
    assert listed["total"] >= 1
    report_id = listed["items"][0]["id"]
    assert f"stored as report id {report_id}" in " ".join(bench.stdout.split())

    rec = run_cli(
        "recommend",
        "--preset",
        "resnet-50",
        "--device-report",
        str(report_id),
        "--limit",
        "3",
        "--json",
        env=env,
    )
    assert rec.returncode == 0, rec.stderr
    body = json.loads(rec.stdout)
    assert body["baseline"]["source"] == f"device report {report_id}"
    assert all(r["speedup_vs_baseline"] > 1 for r in body["recommendations"])
    table = run_cli(
        "recommend", "--preset", "resnet-50", "--device-report", str(report_id), env=env
    )
    assert table.returncode == 0 and "Measured on your machine" in table.stdout
    assert "vs yours" in table.stdout


def test_recommend_table_and_bad_input(env: dict[str, str]) -> None:
    table = run_cli(
        "recommend", "--preset", "llama-3-8b", "--objective", "fastest", "--limit", "3", env=env
    )
    assert table.returncode == 0, table.stderr
    assert "tokens/s" in table.stdout and "Why" in table.stdout
    bad = run_cli("recommend", "--preset", "llama-3-8b", "--batch-size", "0", env=env)
    assert bad.returncode == 2 and "workload.batch_size" in bad.stderr + bad.stdout
    unknown = run_cli("recommend", "--preset", "no-such-model", env=env)
    assert unknown.returncode == 2 and "workload.preset" in unknown.stderr + unknown.stdout


def test_recommend_reads_a_request_file_and_options_change_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    request = {
        "workload": {"preset": "llama-3-8b", "batch_size": 2},
        "constraints": {"vendors": ["amd"]},
        "limit": 2,
    }
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    out = run_cli(
        "recommend", "--request", str(path), "--batch-size", "4", "--what-if", "--json", env=env
    )
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert body["workload"]["batch_size"] == 4 and len(body["recommendations"]) == 2
    assert {r["gpu"]["vendor"] for r in body["recommendations"]} == {"amd"}
    assert body["what_if"]
    table = run_cli("recommend", "--request", str(path), "--batch-size", "4", "--what-if", env=env)
    assert table.returncode == 0 and "What changes the answer" in table.stdout
    # each change's top pick says what it costs the way the question acquires (either: both)
    priced = [w for w in body["what_if"] if w["purchase_usd"] is not None]
    words = " ".join(table.stdout.split())  # as read, whatever the terminal's wrapping
    assert priced and f"${priced[0]['purchase_usd']:,.0f} to buy" in words
    missing = run_cli("recommend", "--request", str(tmp_path / "nope.json"), env=env)
    assert missing.returncode == 2 and "--request" in missing.stderr + missing.stdout


def test_bench_refuses_unknown_gpu_slug(env: dict[str, str]) -> None:
    result = run_cli("bench", "--gpu", "no-such-gpu", env=env)
    assert result.returncode == 2
    assert "no-such-gpu" in result.stderr + result.stdout

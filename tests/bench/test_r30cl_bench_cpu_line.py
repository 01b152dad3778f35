"""r30 review of `gpu-advisor bench --profile quick` on a machine without a GPU: its first
line says that torch sees no GPU and that the CPU is what is measured (it had said only
"no catalog match for 'AMD EPYC'", and the missing GPU came last of the tips)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from app.bench import runner
from app.bench.command import bench_command, device_line
from app.bench.device import DeviceInfo
from app.bench.report import BenchReport
from tests.bench.conftest import make_report

CPU = DeviceInfo(device="cpu", backend="cpu", name="AMD EPYC", memory_bytes=None)
GPU = DeviceInfo(device="cuda:0", backend="cuda", name="Mystery GPU", memory_bytes=8 << 30)


def test_auto_on_a_cpu_says_there_is_no_gpu_and_what_it_measures() -> None:
    line = device_line(CPU, "auto", None, None)
    assert line.startswith("measuring the CPU (AMD EPYC)")
    assert "no GPU" in line and "no catalog match" not in line


def test_an_asked_cpu_run_is_not_told_it_lacks_a_gpu() -> None:
    line = device_line(CPU, "cpu", None, None)
    assert "as --device cpu asks" in line and "no GPU" not in line


def test_a_gpu_keeps_its_match_or_its_missing_match() -> None:
    assert device_line(GPU, "auto", ("h100-sxm", "NVIDIA H100 SXM", {}), "name") == (
        "catalog match: NVIDIA H100 SXM (h100-sxm, by name)"
    )
    assert "no catalog match for 'Mystery GPU'" in device_line(GPU, "auto", None, None)


def test_the_command_prints_it_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(profile: str = "quick", device: str = "auto", **kw: Any) -> BenchReport:
        return make_report()

    monkeypatch.setattr(runner, "run_benchmarks", fake)
    con = Console(record=True, width=200, file=io.StringIO())
    code = bench_command("quick", "cpu", tmp_path / "r.json", None, None, None, None, None,
                         console=con)  # fmt: skip
    assert code == 0
    first = con.export_text().splitlines()[0]
    assert first.startswith("measuring the CPU (") and "as --device cpu asks" in first

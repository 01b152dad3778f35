"""A CPU-only `gpu-advisor worker` names its device by the CPU's model, as its reports do:
it had read platform.processor(), which is the architecture on Linux ("x86_64"), so
GET /api/v1/workers said `device_name: "x86_64"` beside reports of "Intel(R) Xeon(R)"."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from app.bench import cpu
from app.reports import executor

CPUINFO = (
    "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\n"
)


class _NoDevice:
    def __init__(self, *_: Any) -> None:
        pass

    def exists(self) -> bool:
        return False


def test_a_cpu_worker_is_named_by_its_cpu_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor, "Path", _NoDevice)
    monkeypatch.setattr(executor.shutil, "which", lambda _: None)
    monkeypatch.setattr(executor.sys, "platform", "linux")
    monkeypatch.setattr(cpu, "read_sys_file", lambda _: CPUINFO)
    assert executor.probe_backend() == ("cpu", "AMD EPYC 7763 64-Core Processor")


def test_the_cpu_name_is_read_without_torch() -> None:
    # the worker never imports torch: the module it reads the name from must not either
    tree = ast.parse(Path(cpu.__file__).read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(n.split(".")[0] in {"torch", "psutil", "numpy"} for n in names), names

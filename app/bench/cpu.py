"""The CPU's model name without torch: the benchmark reads it into a report's environment,
and `gpu-advisor worker` (which never imports torch) names a CPU-only worker by it."""

from __future__ import annotations

import platform
import sys


def read_sys_file(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def cpu_model() -> str | None:
    text = read_sys_file("/proc/cpuinfo")
    if text:
        for line in text.splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    if sys.platform == "darwin":
        name = _sysctl("machdep.cpu.brand_string")
        if name:
            return name
    return platform.processor() or None


def _sysctl(key: str) -> str | None:
    import subprocess

    try:
        out = subprocess.run(["sysctl", "-n", key], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None

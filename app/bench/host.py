"""The host: CPU model, ISA flags, cores and threads, caches, memory, BLAS backend."""

from __future__ import annotations

import contextlib
import os
import re
import sys

import torch

# the CPU's name is read without torch (app.bench.cpu); kept importable from here
from app.bench.cpu import _sysctl as _sysctl
from app.bench.cpu import cpu_model as cpu_model
from app.bench.cpu import read_sys_file as read_sys_file

#: CPU ISA flags that gate precision rows and peak estimates.
RELEVANT_CPU_FLAGS = (
    "avx",
    "avx2",
    "fma",
    "avx512f",
    "avx512_bf16",
    "avx512_fp16",
    "avx512_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_fp16",
    "amx_int8",
    "asimd",
    "asimdhp",
    "fphp",
    "bf16",
    "sve",
    "sve2",
    "i8mm",
)


# ---------------------------------------------------------------------------------------
# CPU description
# ---------------------------------------------------------------------------------------


def apple_chip_name() -> str | None:
    if sys.platform != "darwin":
        return None
    return _sysctl("machdep.cpu.brand_string")


def cpu_flags() -> set[str]:
    text = read_sys_file("/proc/cpuinfo")
    if not text:
        return set()
    for line in text.splitlines():
        key = line.split(":", 1)[0].strip().lower()
        if key in ("flags", "features"):
            return set(line.split(":", 1)[1].split())
    return set()


def physical_cores() -> int | None:
    try:
        import psutil

        n = psutil.cpu_count(logical=False)
        return int(n) if n else None
    except Exception:
        return None


def usable_cores() -> int:
    """Cores this process may use: affinity mask and cgroup quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = read_sys_file("/sys/fs/cgroup/cpu.max")
    if quota:
        parts = quota.split()
        if len(parts) == 2 and parts[0] != "max":
            with contextlib.suppress(ValueError, ZeroDivisionError):
                n = max(1, min(n, int(int(parts[0]) / int(parts[1]))))
    return n


def llc_bytes() -> int | None:
    """Largest cache size reported by sysfs for cpu0 (usually L3)."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    best = None
    try:
        entries = os.listdir(base)
    except OSError:
        entries = []
    for entry in entries:
        if not entry.startswith("index"):
            continue
        size = read_sys_file(os.path.join(base, entry, "size"))
        if not size:
            continue
        m = re.fullmatch(r"(\d+)([KMG]?)", size.strip())
        if not m:
            continue
        mult = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[m.group(2)]
        v = int(m.group(1)) * mult
        best = v if best is None else max(best, v)
    if best is None and sys.platform == "darwin":
        val = _sysctl("hw.l3cachesize") or _sysctl("hw.l2cachesize")
        if val and val.isdigit():
            best = int(val)
    return best


def host_memory_bytes() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except Exception:
        return None


def host_available_bytes() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:
        return None


def blas_backend() -> str | None:
    cfg = torch_config()
    m = re.search(r"BLAS_INFO=([\w-]+)", cfg or "")
    if m:
        return m.group(1)
    if cfg and "Math Kernel Library" in cfg:
        return "mkl"
    if cfg and "OpenBLAS" in cfg:
        return "openblas"
    return None


def torch_config() -> str | None:
    try:
        return str(torch.__config__.show())
    except Exception:
        return None

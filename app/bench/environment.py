"""The environment record of a report: versions, flags, host, clocks."""

from __future__ import annotations

import contextlib
import os
import platform
import re
from pathlib import Path
from typing import Any

import torch

from app.bench.device import probe, rocm_arch
from app.bench.host import (
    RELEVANT_CPU_FLAGS,
    blas_backend,
    cpu_flags,
    cpu_model,
    host_memory_bytes,
    llc_bytes,
    physical_cores,
    read_sys_file,
    torch_config,
    usable_cores,
)
from app.bench.report import Environment
from app.bench.torch_state import precision_flags

#: Environment variables that change what the benchmarks measure; recorded verbatim.
RELEVANT_ENV_VARS = (
    "NVIDIA_TF32_OVERRIDE",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "HIPBLASLT_ALLOW_TF32",
    "PYTORCH_TUNABLEOP_ENABLED",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_HIP_ALLOC_CONF",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "CUDA_MODULE_LOADING",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "OPENBLAS_CORETYPE",
    "OMP_PROC_BIND",
    "OMP_PLACES",
    "KMP_AFFINITY",
    "GOMP_CPU_AFFINITY",
    "ONEDNN_MAX_CPU_ISA",
    "DNNL_MAX_CPU_ISA",
    "MKL_ENABLE_INSTRUCTIONS",
    "PYTORCH_ENABLE_MPS_FALLBACK",
    "PYTORCH_MPS_HIGH_WATERMARK_RATIO",
)


# ---------------------------------------------------------------------------------------
# environment record
# ---------------------------------------------------------------------------------------


def _nvml_clocks(index: int) -> dict[str, Any] | None:
    try:
        import pynvml
    except Exception:
        return None
    try:
        pynvml.nvmlInit()
        try:
            h = pynvml.nvmlDeviceGetHandleByIndex(index)
            out: dict[str, Any] = {"source": "nvml"}
            for key, fn in (
                ("sm_clock_mhz", lambda: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)),
                (
                    "sm_clock_max_mhz",
                    lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
                ),
                (
                    "mem_clock_max_mhz",
                    lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM),
                ),
                ("power_w", lambda: pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0),
                ("power_limit_w", lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
                ("temperature_c", lambda: pynvml.nvmlDeviceGetTemperature(h, 0)),
                ("utilization_gpu_pct", lambda: pynvml.nvmlDeviceGetUtilizationRates(h).gpu),
                ("pcie_gen", lambda: pynvml.nvmlDeviceGetCurrPcieLinkGeneration(h)),
                ("pcie_width", lambda: pynvml.nvmlDeviceGetCurrPcieLinkWidth(h)),
                ("driver_version", lambda: pynvml.nvmlSystemGetDriverVersion()),
            ):
                with contextlib.suppress(Exception):
                    v = fn()
                    out[key] = v.decode() if isinstance(v, bytes) else v
            return out
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        return None


_SMI_FIELDS = (
    ("driver_version", "driver_version", str),
    ("sm_clock_mhz", "clocks.sm", float),
    ("sm_clock_max_mhz", "clocks.max.sm", float),
    ("mem_clock_max_mhz", "clocks.max.mem", float),
    ("power_w", "power.draw", float),
    ("power_limit_w", "power.limit", float),
    ("temperature_c", "temperature.gpu", float),
)


def parse_smi_line(line: str) -> dict[str, Any]:
    """One CSV line of ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits``; a
    field nvidia-smi cannot read ("[N/A]", "[Not Supported]") stays out."""
    out: dict[str, Any] = {"source": "nvidia-smi"}
    for (key, _, cast), raw in zip(_SMI_FIELDS, line.split(","), strict=False):
        value = raw.strip()
        if not value or value.startswith("["):
            continue
        with contextlib.suppress(ValueError):
            out[key] = cast(value)
    return out


def _smi_clocks(index: int) -> dict[str, Any] | None:
    """The same record from nvidia-smi where pynvml is not installed."""
    import shutil
    import subprocess

    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    query = ",".join(f for _, f, _ in _SMI_FIELDS)
    try:
        done = subprocess.run(
            [exe, f"--id={index}", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.strip().splitlines()
    return parse_smi_line(lines[0]) if lines else None


def _cpu_clocks() -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for key, path in (
        ("max_mhz", "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"),
        ("base_mhz", "/sys/devices/system/cpu/cpu0/cpufreq/base_frequency"),
        ("current_mhz", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"),
    ):
        v = read_sys_file(path)
        if v and v.strip().isdigit():
            out[key] = int(v.strip()) / 1000.0
    if not out:
        text = read_sys_file("/proc/cpuinfo") or ""
        m = re.search(r"cpu MHz\s*:\s*([\d.]+)", text)
        if m:
            out["current_mhz"] = float(m.group(1))
            out["note"] = "instantaneous /proc/cpuinfo value"
    return out or None


def describe_environment(device: str) -> Environment:
    """Record the machine, the software stack and every precision flag."""
    info = probe(device)
    backend = info.backend
    notes: list[str] = []
    env = {k: os.environ[k] for k in RELEVANT_ENV_VARS if k in os.environ}
    if env.get("CUDA_LAUNCH_BLOCKING") not in (None, "", "0"):
        notes.append("CUDA_LAUNCH_BLOCKING is set: it serialises launches and distorts timings")
    if env.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE") == "1":
        notes.append("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1: 'fp32' matmuls may run as TF32")
    try:
        import numpy

        numpy_version: str | None = numpy.__version__
    except Exception:  # pragma: no cover - numpy is a dependency
        numpy_version = None
    flags = cpu_flags()
    data: dict[str, Any] = {
        "backend": backend,
        "device": info.device,
        "device_name": info.name,
        "device_memory_bytes": info.memory_bytes,
        "os": f"{platform.system()} {platform.release()}",
        "python_version": platform.python_version(),
        "torch_version": torch.__version__,
        "numpy_version": numpy_version,
        "blas_backend": blas_backend(),
        "torch_config": torch_config(),
        "cpu_model": cpu_model(),
        "cpu_physical_cores": physical_cores(),
        "cpu_logical_cores": os.cpu_count(),
        "cpu_usable_cores": usable_cores(),
        "torch_threads": torch.get_num_threads(),
        "cpu_flags": sorted(f for f in flags if f in RELEVANT_CPU_FLAGS),
        "llc_bytes": llc_bytes(),
        "host_memory_bytes": host_memory_bytes(),
        "precision_flags": precision_flags(),
        "env_vars": env,
        "notes": notes,
    }
    if backend in ("cuda", "rocm"):
        dev = torch.device(info.device)
        props = torch.cuda.get_device_properties(dev)
        data["device_count"] = torch.cuda.device_count()
        data["multiprocessors"] = int(getattr(props, "multi_processor_count", 0)) or None
        if backend == "cuda":
            cc = torch.cuda.get_device_capability(dev)
            data["compute_capability"] = f"{cc[0]}.{cc[1]}"
            data["arch"] = f"sm_{cc[0]}{cc[1]}"
            data["cuda_version"] = torch.version.cuda
            clocks = _nvml_clocks(dev.index or 0) or _smi_clocks(dev.index or 0)
            if clocks:
                data["driver_version"] = clocks.pop("driver_version", None)
                data["clocks"] = clocks
        else:
            data["arch"] = rocm_arch(info.device)
            data["rocm_version"] = torch.version.hip
        with contextlib.suppress(Exception):
            cd = getattr(torch.backends.cudnn, "version", lambda: None)()
            if cd:
                data["precision_flags"]["cudnn.version"] = cd
    elif backend == "mps":
        data["macos_version"] = platform.mac_ver()[0] or None
        with contextlib.suppress(Exception):
            data["precision_flags"]["mps.recommended_max_memory"] = int(
                torch.mps.recommended_max_memory()
            )
    elif backend == "xpu":
        data["device_count"] = torch.xpu.device_count()
        with contextlib.suppress(Exception):
            xprops = torch.xpu.get_device_properties(torch.device(info.device))
            data["driver_version"] = str(getattr(xprops, "driver_version", "")) or None
    else:
        data["clocks"] = _cpu_clocks()
    if backend != "cpu" and data.get("clocks") is None:
        host = _cpu_clocks()
        data["clocks"] = {"host_cpu": host} if host else None
    data["host_id"] = host_identity(info.name, info.device)
    return Environment.model_validate(data)


def host_identity(device_name: str, device: str) -> str | None:
    """An opaque identity of this machine and device: a salted SHA-256 of the OS machine id
    (systemd's /etc/machine-id, else the host name) with the device, cut to 16 hex digits.
    The server counts reports of one machine once when it pools them; the id itself never
    leaves the machine. None where there is nothing to identify it by."""
    import hashlib

    ident = ""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        with contextlib.suppress(OSError):
            ident = Path(path).read_text(encoding="ascii").strip()
        if ident:
            break
    ident = ident or platform.node()
    if not ident:
        return None
    raw = f"gpu-advisor host id\0{ident}\0{device_name}\0{device}".encode()
    return hashlib.sha256(raw).hexdigest()[:16]

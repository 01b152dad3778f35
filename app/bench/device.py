"""Detect the backend (CUDA / ROCm / MPS / XPU / CPU), describe the machine, and save and
restore every global torch setting the benchmarks touch."""

from __future__ import annotations

import contextlib
import os
import platform
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from app.bench.report import Environment

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

#: CPU ISA flags that gate precision rows and peak estimates.
RELEVANT_CPU_FLAGS = (
    "avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni",
    "amx_tile", "amx_bf16", "amx_fp16", "amx_int8", "asimd", "asimdhp", "fphp", "bf16",
    "sve", "sve2", "i8mm",
)


@dataclass(frozen=True)
class DeviceInfo:
    """What the CLI needs before running (catalog matching) and what suites need to run."""

    device: str  # e.g. "cuda:0", "mps", "xpu:0", "cpu"
    backend: str  # "cuda" | "rocm" | "mps" | "xpu" | "cpu"
    name: str
    memory_bytes: int | None

    @property
    def memory_gb(self) -> float | None:
        return None if self.memory_bytes is None else self.memory_bytes / 1e9

    @property
    def is_accelerator(self) -> bool:
        return self.backend != "cpu"

    @property
    def torch_device(self) -> torch.device:
        return torch.device(self.device)


# ---------------------------------------------------------------------------------------
# detection
# ---------------------------------------------------------------------------------------


def _xpu_available() -> bool:
    xpu = getattr(torch, "xpu", None)
    try:
        return bool(xpu is not None and xpu.is_available())
    except Exception:
        return False


def _mps_available() -> bool:
    try:
        return bool(torch.backends.mps.is_available())
    except Exception:
        return False


def _cuda_available() -> bool:
    try:
        return bool(torch.cuda.is_available())
    except Exception:
        return False


def resolve_device(spec: str = "auto") -> str:
    """Turn ``auto|cpu|cuda|cuda:N|mps|xpu|xpu:N`` into a concrete device string.

    Raises ``ValueError`` with a clear message when the requested backend is absent.
    """
    s = (spec or "auto").strip().lower()
    if s == "auto":
        if _cuda_available():
            return "cuda:0"
        if _xpu_available():
            return "xpu:0"
        if _mps_available():
            return "mps"
        return "cpu"
    if s == "cpu":
        return "cpu"
    m = re.fullmatch(r"(cuda|rocm|hip|xpu)(?::(\d+))?", s)
    if m:
        kind, idx = m.group(1), int(m.group(2) or 0)
        if kind in ("cuda", "rocm", "hip"):
            if not _cuda_available():
                raise ValueError(f"device {spec!r} requested but torch sees no CUDA/ROCm device "
                                 f"(torch {torch.__version__})")
            if idx >= torch.cuda.device_count():
                raise ValueError(f"device {spec!r}: only {torch.cuda.device_count()} "
                                 "CUDA/ROCm device(s) visible")
            return f"cuda:{idx}"
        if not _xpu_available():
            raise ValueError(f"device {spec!r} requested but torch has no usable XPU")
        return f"xpu:{idx}"
    if s in ("mps", "mps:0"):
        if not _mps_available():
            raise ValueError("device 'mps' requested but the MPS backend is not available")
        return "mps"
    raise ValueError(f"unknown device {spec!r}: use auto, cpu, cuda:N, mps or xpu")


def backend_of(device: str) -> str:
    if device.startswith("cuda"):
        return "rocm" if getattr(torch.version, "hip", None) else "cuda"
    if device.startswith("mps"):
        return "mps"
    if device.startswith("xpu"):
        return "xpu"
    return "cpu"


def probe(spec: str = "auto") -> DeviceInfo:
    """Resolve the device and read its name and memory (cheap; no benchmark runs)."""
    device = resolve_device(spec)
    backend = backend_of(device)
    if backend in ("cuda", "rocm"):
        props = torch.cuda.get_device_properties(torch.device(device))
        return DeviceInfo(device, backend, str(props.name), int(props.total_memory))
    if backend == "xpu":
        xprops = torch.xpu.get_device_properties(torch.device(device))
        return DeviceInfo(device, backend, str(xprops.name), int(xprops.total_memory))
    if backend == "mps":
        return DeviceInfo(device, backend, _apple_chip_name() or "Apple GPU (MPS)",
                          _host_memory_bytes())
    return DeviceInfo(device, backend, cpu_model() or platform.processor() or "CPU",
                      _host_memory_bytes())


def synchronizer(device: str) -> Callable[[], None]:
    """The function that waits for all queued work on ``device``."""
    backend = backend_of(device)
    if backend in ("cuda", "rocm"):
        dev = torch.device(device)
        return lambda: torch.cuda.synchronize(dev)
    if backend == "mps":
        return torch.mps.synchronize
    if backend == "xpu":
        dev = torch.device(device)
        return lambda: torch.xpu.synchronize(dev)
    return lambda: None


def empty_cache(device: str) -> None:
    backend = backend_of(device)
    with contextlib.suppress(Exception):
        if backend in ("cuda", "rocm"):
            torch.cuda.empty_cache()
        elif backend == "mps":
            torch.mps.empty_cache()
        elif backend == "xpu":
            torch.xpu.empty_cache()


def is_oom(exc: BaseException) -> bool:
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and ("out of memory" in text or "mps backend out" in text)


# ---------------------------------------------------------------------------------------
# CPU description
# ---------------------------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def cpu_model() -> str | None:
    text = _read("/proc/cpuinfo")
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


def _apple_chip_name() -> str | None:
    if sys.platform != "darwin":
        return None
    return _sysctl("machdep.cpu.brand_string")


def cpu_flags() -> set[str]:
    text = _read("/proc/cpuinfo")
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
    quota = _read("/sys/fs/cgroup/cpu.max")
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
        size = _read(os.path.join(base, entry, "size"))
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


def _host_memory_bytes() -> int | None:
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


# ---------------------------------------------------------------------------------------
# precision support
# ---------------------------------------------------------------------------------------


def cuda_capability(device: str) -> tuple[int, int] | None:
    if backend_of(device) != "cuda":
        return None
    return tuple(torch.cuda.get_device_capability(torch.device(device)))  # type: ignore[return-value]


def rocm_arch(device: str) -> str | None:
    if backend_of(device) != "rocm":
        return None
    props = torch.cuda.get_device_properties(torch.device(device))
    return str(getattr(props, "gcnArchName", "") or "") or None


def precision_support(device: str, precision: str) -> tuple[bool, bool, str | None]:
    """``(runnable, native, note)`` for a matmul precision on ``device``.

    ``native`` is False for emulated types (e.g. bf16 on a CPU without avx512_bf16): such
    rows are measured at a small size, tagged, and excluded from calibration.
    """
    backend = backend_of(device)
    if precision == "fp32":
        return True, True, None
    if backend == "cuda":
        cc = cuda_capability(device) or (0, 0)
        if precision == "tf32":
            return (cc >= (8, 0), cc >= (8, 0),
                    None if cc >= (8, 0) else "TF32 needs compute capability ≥ 8.0")
        if precision == "fp16":
            return True, cc >= (7, 0), None if cc >= (7, 0) else "no fp16 tensor cores"
        if precision == "bf16":
            return True, cc >= (8, 0), None if cc >= (8, 0) else "bf16 emulated before sm_80"
        if precision == "fp8":
            ok = cc >= (8, 9) and hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")
            return ok, ok, None if ok else "fp8 matmul needs compute capability ≥ 8.9"
    if backend == "rocm":
        arch = rocm_arch(device) or ""
        mi300 = arch.startswith(("gfx94", "gfx95"))
        if precision == "tf32":
            return mi300, mi300, None if mi300 else f"no TF32 on {arch or 'this GPU'}"
        if precision in ("fp16", "bf16"):
            return True, True, None
        if precision == "fp8":
            ok = mi300 and hasattr(torch, "_scaled_mm")
            return False, False, ("fp8 on ROCm is not measured by this tool" if ok else
                                  "fp8 matmul not supported here")
    if backend == "mps":
        if precision == "fp16":
            return True, True, None
        if precision == "bf16":
            return True, True, "bf16 runs at about half the fp16 rate on M1-class chips"
        return False, False, f"{precision} is not available on MPS"
    if backend == "xpu":
        if precision in ("fp16", "bf16"):
            return True, True, None
        if precision == "tf32":
            return False, False, "TF32 rows are not measured on XPU"
        return False, False, f"{precision} is not measured on XPU"
    # CPU
    flags = cpu_flags()
    if precision == "bf16":
        native = bool(flags & {"avx512_bf16", "amx_bf16", "bf16"})
        return True, native, None if native else (
            "bf16 is not native on this CPU (no avx512_bf16/amx_bf16): emulated, slow")
    if precision == "fp16":
        native = bool(flags & {"avx512_fp16", "amx_fp16", "asimdhp", "fphp"})
        return True, native, None if native else (
            "fp16 is not native on this CPU (no avx512_fp16/amx_fp16): emulated, slow")
    return False, False, f"{precision} does not apply to CPUs"


DTYPES: dict[str, torch.dtype] = {
    "fp32": torch.float32,
    "tf32": torch.float32,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
}


# ---------------------------------------------------------------------------------------
# global state: read, pin and restore
# ---------------------------------------------------------------------------------------


def _quiet_get(obj: Any, attr: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return getattr(obj, attr)
        except Exception:
            return None


def _quiet_set(obj: Any, attr: str, value: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(Exception):
            setattr(obj, attr, value)


#: (backend, op) pairs of torch's fp32-precision API (torch ≥ 2.9). Legacy flags such as
#: ``allow_tf32`` and ``set_float32_matmul_precision`` write into these; mixing the two
#: APIs and restoring only one of them leaves torch in a state where
#: ``get_float32_matmul_precision()`` raises, so state is saved and restored here.
_FP32_PAIRS: tuple[tuple[str, str], ...] = (
    ("generic", "all"), ("cuda", "all"), ("cuda", "matmul"), ("cuda", "conv"), ("cuda", "rnn"),
    ("mkldnn", "all"), ("mkldnn", "matmul"), ("mkldnn", "conv"), ("mkldnn", "rnn"),
)


def _new_precision_api() -> bool:
    return hasattr(torch._C, "_get_fp32_precision_getter") and hasattr(
        torch._C, "_set_fp32_precision_setter")


def _fp32_precisions() -> dict[tuple[str, str], str] | None:
    if not _new_precision_api():
        return None
    out: dict[tuple[str, str], str] = {}
    for pair in _FP32_PAIRS:
        with contextlib.suppress(Exception):
            out[pair] = str(torch._C._get_fp32_precision_getter(*pair))
    return out


def _set_fp32_precision(backend: str, op: str, value: str) -> None:
    with contextlib.suppress(Exception):
        torch._C._set_fp32_precision_setter(backend, op, value)


def _float32_matmul_precision() -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return str(torch.get_float32_matmul_precision())
        except Exception as exc:  # torch raises when legacy and new APIs were mixed
            return f"unreadable ({str(exc)[:80]})"


def precision_flags() -> dict[str, Any]:
    """The precision-related torch settings, as plain values."""
    flags: dict[str, Any] = {
        "cuda.matmul.allow_tf32": _quiet_get(torch.backends.cuda.matmul, "allow_tf32"),
        "cudnn.allow_tf32": _quiet_get(torch.backends.cudnn, "allow_tf32"),
        "float32_matmul_precision": _float32_matmul_precision(),
        "cudnn.benchmark": _quiet_get(torch.backends.cudnn, "benchmark"),
        "cudnn.deterministic": _quiet_get(torch.backends.cudnn, "deterministic"),
        "cuda.matmul.allow_fp16_reduced_precision_reduction": _quiet_get(
            torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction"),
        "cuda.matmul.allow_bf16_reduced_precision_reduction": _quiet_get(
            torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction"),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
    }
    for (backend, op), value in (_fp32_precisions() or {}).items():
        flags[f"fp32_precision.{backend}.{op}"] = value
    return {k: v for k, v in flags.items() if v is not None}


@dataclass
class TorchState:
    num_threads: int
    fp32_precisions: dict[tuple[str, str], str] | None
    float32_matmul_precision: str
    matmul_allow_tf32: Any
    cudnn_allow_tf32: Any
    cudnn_benchmark: Any
    grad_enabled: bool
    default_dtype: torch.dtype


def save_state() -> TorchState:
    return TorchState(
        num_threads=torch.get_num_threads(),
        fp32_precisions=_fp32_precisions(),
        float32_matmul_precision=_float32_matmul_precision(),
        matmul_allow_tf32=_quiet_get(torch.backends.cuda.matmul, "allow_tf32"),
        cudnn_allow_tf32=_quiet_get(torch.backends.cudnn, "allow_tf32"),
        cudnn_benchmark=_quiet_get(torch.backends.cudnn, "benchmark"),
        grad_enabled=torch.is_grad_enabled(),
        default_dtype=torch.get_default_dtype(),
    )


def restore_state(state: TorchState) -> None:
    if torch.get_num_threads() != state.num_threads:
        torch.set_num_threads(state.num_threads)
    # Legacy flags first (torch keeps some bookkeeping of its own for them), then the exact
    # snapshot of the fp32_precision API, which the legacy setters write into.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if state.float32_matmul_precision in ("highest", "high", "medium"):
            with contextlib.suppress(Exception):
                torch.set_float32_matmul_precision(state.float32_matmul_precision)
    if state.matmul_allow_tf32 is not None and state.fp32_precisions is None:
        _quiet_set(torch.backends.cuda.matmul, "allow_tf32", state.matmul_allow_tf32)
    if state.cudnn_allow_tf32 is not None:
        _quiet_set(torch.backends.cudnn, "allow_tf32", state.cudnn_allow_tf32)
    if state.fp32_precisions is not None:
        for (backend, op), value in state.fp32_precisions.items():
            _set_fp32_precision(backend, op, value)
    if state.cudnn_benchmark is not None:
        _quiet_set(torch.backends.cudnn, "benchmark", state.cudnn_benchmark)
    torch.set_grad_enabled(state.grad_enabled)
    torch.set_default_dtype(state.default_dtype)


@contextlib.contextmanager
def preserved_state() -> Iterator[TorchState]:
    """Save every global torch setting the benchmarks touch; restore it on exit, also on
    errors and KeyboardInterrupt."""
    state = save_state()
    try:
        yield state
    finally:
        restore_state(state)


def set_fp32_mode(precision: str) -> None:
    """Pin the fp32 matmul/conv mode: ``"tf32"`` allows TF32 on CUDA/ROCm, anything else is
    strict IEEE fp32 (also for oneDNN on CPUs). Uses the fp32_precision API where torch has
    it, the legacy flags otherwise."""
    tf32 = precision == "tf32"
    if _new_precision_api():
        mode = "tf32" if tf32 else "ieee"
        _set_fp32_precision("cuda", "matmul", mode)
        _set_fp32_precision("cuda", "conv", mode)
        _set_fp32_precision("mkldnn", "matmul", "ieee")
        _set_fp32_precision("mkldnn", "conv", "ieee")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
    _quiet_set(torch.backends.cuda.matmul, "allow_tf32", tf32)
    _quiet_set(torch.backends.cudnn, "allow_tf32", tf32)


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
                ("sm_clock_max_mhz",
                 lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)),
                ("mem_clock_max_mhz",
                 lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)),
                ("power_w", lambda: pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0),
                ("power_limit_w", lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
                ("temperature_c", lambda: pynvml.nvmlDeviceGetTemperature(h, 0)),
                ("utilization_gpu_pct",
                 lambda: pynvml.nvmlDeviceGetUtilizationRates(h).gpu),
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


def _cpu_clocks() -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for key, path in (("max_mhz", "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"),
                      ("base_mhz", "/sys/devices/system/cpu/cpu0/cpufreq/base_frequency"),
                      ("current_mhz", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")):
        v = _read(path)
        if v and v.strip().isdigit():
            out[key] = int(v.strip()) / 1000.0
    if not out:
        text = _read("/proc/cpuinfo") or ""
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
        "host_memory_bytes": _host_memory_bytes(),
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
            clocks = _nvml_clocks(dev.index or 0)
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
                torch.mps.recommended_max_memory())
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
    return Environment.model_validate(data)

"""Detect the backend (CUDA / ROCm / MPS / XPU / CPU), describe the machine, and save and
restore every global torch setting the benchmarks touch."""

from __future__ import annotations

import contextlib
import platform
import re
from collections.abc import Callable
from dataclasses import dataclass

import torch

from app.bench.host import apple_chip_name, cpu_flags, cpu_model, host_memory_bytes


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
                raise ValueError(
                    f"device {spec!r} requested but torch sees no CUDA/ROCm device "
                    f"(torch {torch.__version__})"
                )
            if idx >= torch.cuda.device_count():
                raise ValueError(
                    f"device {spec!r}: only {torch.cuda.device_count()} CUDA/ROCm device(s) visible"
                )
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
        return DeviceInfo(
            device, backend, apple_chip_name() or "Apple GPU (MPS)", host_memory_bytes()
        )
    return DeviceInfo(
        device, backend, cpu_model() or platform.processor() or "CPU", host_memory_bytes()
    )


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


Support = tuple[bool, bool, str | None]


def _cuda_support(device: str, precision: str) -> Support:
    cc = cuda_capability(device) or (0, 0)
    if precision == "tf32":
        ok = cc >= (8, 0)
        return ok, ok, None if ok else "TF32 needs compute capability ≥ 8.0"
    if precision == "fp16":
        return True, cc >= (7, 0), None if cc >= (7, 0) else "no fp16 tensor cores"
    if precision == "bf16":
        return True, cc >= (8, 0), None if cc >= (8, 0) else "bf16 emulated before sm_80"
    ok = cc >= (8, 9) and hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")
    return ok, ok, None if ok else "fp8 matmul needs compute capability ≥ 8.9"


def _rocm_support(device: str, precision: str) -> Support:
    arch = rocm_arch(device) or ""
    mi300 = arch.startswith(("gfx94", "gfx95"))
    if precision == "tf32":
        return mi300, mi300, None if mi300 else f"no TF32 on {arch or 'this GPU'}"
    if precision in ("fp16", "bf16"):
        return True, True, None
    ok = mi300 and hasattr(torch, "_scaled_mm")
    why = "fp8 on ROCm is not measured by this tool" if ok else "fp8 matmul not supported here"
    return False, False, why


def _mps_support(device: str, precision: str) -> Support:
    if precision == "fp16":
        return True, True, None
    if precision == "bf16":
        return True, True, "bf16 runs at about half the fp16 rate on M1-class chips"
    return False, False, f"{precision} is not available on MPS"


def _xpu_support(device: str, precision: str) -> Support:
    if precision in ("fp16", "bf16"):
        return True, True, None
    if precision == "tf32":
        return False, False, "TF32 rows are not measured on XPU"
    return False, False, f"{precision} is not measured on XPU"


_CPU_NATIVE_FLAGS = {
    "bf16": {"avx512_bf16", "amx_bf16", "bf16"},
    "fp16": {"avx512_fp16", "amx_fp16", "asimdhp", "fphp"},
}


def _cpu_support(device: str, precision: str) -> Support:
    wanted = _CPU_NATIVE_FLAGS.get(precision)
    if wanted is None:
        return False, False, f"{precision} does not apply to CPUs"
    native = bool(cpu_flags() & wanted)
    flags = "/".join(sorted(f for f in wanted if f.startswith(("avx", "amx"))))
    why = None if native else f"{precision} is not native on this CPU (no {flags}): emulated, slow"
    return True, native, why


_SUPPORT = {
    "cuda": _cuda_support,
    "rocm": _rocm_support,
    "mps": _mps_support,
    "xpu": _xpu_support,
    "cpu": _cpu_support,
}


def precision_support(device: str, precision: str) -> Support:
    """``(runnable, native, note)`` for a matmul precision on ``device``.

    ``native`` is False for emulated types (e.g. bf16 on a CPU without avx512_bf16): such
    rows are measured at a small size, tagged, and excluded from calibration.
    """
    if precision == "fp32":
        return True, True, None
    return _SUPPORT.get(backend_of(device), _cpu_support)(device, precision)


DTYPES: dict[str, torch.dtype] = {
    "fp32": torch.float32,
    "tf32": torch.float32,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
}

"""Every global torch setting the benchmarks touch: read, set per row, save and restore."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

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
    ("generic", "all"),
    ("cuda", "all"),
    ("cuda", "matmul"),
    ("cuda", "conv"),
    ("cuda", "rnn"),
    ("mkldnn", "all"),
    ("mkldnn", "matmul"),
    ("mkldnn", "conv"),
    ("mkldnn", "rnn"),
)


def _new_precision_api() -> bool:
    return hasattr(torch._C, "_get_fp32_precision_getter") and hasattr(
        torch._C, "_set_fp32_precision_setter"
    )


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
            torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction"
        ),
        "cuda.matmul.allow_bf16_reduced_precision_reduction": _quiet_get(
            torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction"
        ),
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

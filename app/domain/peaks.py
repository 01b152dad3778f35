"""Dense 16-bit tensor peaks where the catalog lacks them: derived from the FP32 peak by NVIDIA
generation and segment. Every path that prices tensor-core math (the operator path in perf, the
LLM step in llm_step) reads the same figure. Pure."""

from __future__ import annotations

from app.domain.gpu import GpuSpec

# Dense 16-bit tensor throughput (FP32 accumulate) ÷ non-tensor fp32, per NVIDIA generation and
# segment, read off the vendor whitepapers for parts that publish both (V100 125/15.7; RTX 2080 Ti
# 53.8/13.4; T4 65/8.1; RTX 3090 71/35.6; A10 125/31.2; A100 312/19.5; RTX 4090 165.2/82.6;
# L40S 362/91.6; RTX 5090 209.5/104.8; RTX PRO 6000 Blackwell 503.8/125.95). Used only when the
# catalog lacks the 16-bit figure; tests/catalog/test_derived_peaks.py cross-checks it against
# every published pair.
TENSOR_RATIO: dict[tuple[str, bool], float] = {
    ("7.0", True): 8.0,
    ("7.0", False): 8.0,
    ("7.5", True): 4.0,
    ("7.5", False): 8.0,
    ("8.0", False): 16.0,
    ("8.6", True): 2.0,
    ("8.6", False): 4.0,
    ("8.9", True): 2.0,
    ("8.9", False): 4.0,
    ("12.0", True): 2.0,
    ("12.0", False): 4.0,
}


def peak_tflops(gpu: GpuSpec, precision: str) -> tuple[float | None, bool]:
    """Dense peak for ``precision`` and whether it was derived rather than published."""
    value = gpu.peak_tflops(precision)
    if value:
        return value, False
    if gpu.vendor != "nvidia" or not gpu.fp32_tflops or precision not in ("fp16", "bf16", "tf32"):
        return None, False
    cc = gpu.compute_capability or ""
    ratio = TENSOR_RATIO.get((cc, gpu.segment in ("consumer", "laptop")))
    if ratio is None:
        return None, False
    if precision == "bf16" and cc in ("7.0", "7.5"):
        return None, False
    if precision == "tf32":
        if cc in ("7.0", "7.5"):
            return None, False
        ratio /= 2.0
    return gpu.fp32_tflops * ratio, True


__all__ = ["TENSOR_RATIO", "peak_tflops"]

"""Build device reports in the published schema for tests (no torch needed)."""

from __future__ import annotations

from typing import Any


def figure(value: float, unit: str) -> dict[str, Any]:
    return {"value": value, "unit": unit, "p10": value * 0.98, "p90": value * 1.01,
            "n_blocks": 7, "iters_per_block": 10, "median_time_s": 0.01}  # fmt: skip


def gpu_report(
    device_name: str = "NVIDIA H100 80GB HBM3",
    memory_bytes: int = 85_029_158_912,
    bf16: float = 790.0,
    fp32: float = 51.0,
    bandwidth: float = 3000.0,
    backend: str = "cuda",
) -> dict[str, Any]:
    def summary(p: str, v: float) -> dict[str, Any]:
        return {"precision": p, "native": True, "reference": figure(v, "TFLOPS"),
                "best": figure(v, "TFLOPS"), "best_shape": [8192, 8192, 8192]}  # fmt: skip

    return {
        "schema_version": 1,
        "profile": "quick",
        "duration_s": 12.0,
        "environment": {
            "backend": backend,
            "device": "cuda:0" if backend == "cuda" else backend,
            "device_name": device_name,
            "device_memory_bytes": memory_bytes,
            "os": "Linux",
            "python_version": "3.11.7",
            "torch_version": "2.13.0",
        },
        "matmul": {
            "reference_shape": [8192, 8192, 8192],
            "rows": [],
            "by_precision": {"bf16": summary("bf16", bf16), "fp32": summary("fp32", fp32)},
        },
        "memory": {
            "array_bytes": 2**30,
            "rows": [
                {"kernel": "copy", "bytes_per_call": 2**31, "figure": figure(bandwidth, "GB/s")}
            ],
            "best": figure(bandwidth, "GB/s"),
            "best_kernel": "copy",
        },
        "tips": ["bf16 is 15× faster than fp32 here"],
    }


def gemm_point(
    m: int = 4096, n: int = 4096, k: int = 4096, seconds: float = 2e-4
) -> dict[str, Any]:
    """A raw GEMM point of schema version 2, its FLOPs and rate consistent with its shape."""
    flops = 2 * m * n * k
    return {"kernel_class": "gemm", "op": "mm", "shape": {"m": m, "n": n, "k": k},
            "dtype": "bf16", "seconds": seconds, "flops": flops,
            "tflops": flops / seconds / 1e12}  # fmt: skip


def v2_report(*points: dict[str, Any]) -> dict[str, Any]:
    return gpu_report() | {"schema_version": 2, "kernels": {"points": list(points)}}

"""A small, valid device report (the BenchReport schema) for page tests."""

from __future__ import annotations

from typing import Any


def fig(value: float, unit: str) -> dict[str, Any]:
    return {
        "value": value,
        "unit": unit,
        "p10": value * 0.97,
        "p90": value * 1.02,
        "n_blocks": 5,
        "iters_per_block": 10,
        "median_time_s": 0.01,
    }


def sample_report(device_name: str = "NVIDIA GeForce RTX 4090") -> dict[str, Any]:
    return {
        "schema_version": 1,
        "profile": "quick",
        "duration_s": 42.0,
        "environment": {
            "backend": "cuda",
            "device": "cuda:0",
            "device_name": device_name,
            "device_memory_bytes": 24_000_000_000,
            "compute_capability": "8.9",
            "os": "Linux",
            "python_version": "3.11.9",
            "torch_version": "2.13.0",
        },
        "matmul": {
            "reference_shape": [4096, 4096, 4096],
            "rows": [],
            "by_precision": {
                "fp32": {
                    "precision": "fp32",
                    "native": True,
                    "reference": fig(60.0, "TFLOPS"),
                    "best": fig(70.0, "TFLOPS"),
                },
                "bf16": {
                    "precision": "bf16",
                    "native": True,
                    "reference": fig(140.0, "TFLOPS"),
                    "best": fig(150.0, "TFLOPS"),
                },
            },
        },
        "memory": {
            "array_bytes": 1_000_000_000,
            "rows": [
                {"kernel": "copy", "bytes_per_call": 2_000_000_000, "figure": fig(900.0, "GB/s")},
                {"kernel": "triad", "bytes_per_call": 3_000_000_000, "figure": fig(920.0, "GB/s")},
            ],
            "best": fig(920.0, "GB/s"),
            "best_kernel": "triad",
        },
        "transfer": {
            "kind": "pcie",
            "rows": [
                {"direction": "h2d", "memory": m, "size_bytes": size, "figure": fig(v * k, "GB/s")}
                for m, k in (("pinned", 1.0), ("pageable", 0.5))
                for size, v in ((1_000_000, 8.0), (16_000_000, 20.0), (256_000_000, 24.0))
            ],
            "fits": [
                {
                    "direction": "h2d",
                    "memory": "pinned",
                    "latency_s": 1e-5,
                    "bandwidth_gbs": 24.5,
                    "headline": fig(24.0, "GB/s"),
                    "headline_size_bytes": 256_000_000,
                },
                {
                    "direction": "h2d",
                    "memory": "pageable",
                    "latency_s": 2e-5,
                    "bandwidth_gbs": 12.5,
                    "headline": fig(12.0, "GB/s"),
                    "headline_size_bytes": 256_000_000,
                },
            ],
            "pinned_over_pageable_h2d": 2.0,
        },
        "batch_scaling": {
            "curves": [
                {
                    "workload": "transformer_block",
                    "mode": "train",
                    "precision": "bf16",
                    "description": "one transformer block",
                    "points": [
                        {
                            "batch": b,
                            "flops": 10**12 * b,
                            "step_time": fig(0.01 * b, "s"),
                            "samples_per_s": fig(100.0 * b / (1 + b / 16), "samples/s"),
                            "tflops": fig(min(140.0, 20.0 * b), "TFLOPS"),
                        }
                        for b in (1, 2, 4, 8, 16, 32)
                    ],
                }
            ]
        },
        "tips": ["Use pinned memory <b>for</b> the data loader."],
        "warnings": [],
    }

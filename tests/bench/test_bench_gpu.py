"""Runs on a real accelerator (CUDA/ROCm/MPS); skipped without one."""

from __future__ import annotations

import pytest
import torch

from app.bench import device as devmod
from app.bench import runner
from app.bench.suites.common import Profile

HAS_ACCEL = torch.cuda.is_available() or (
    hasattr(torch.backends, "mps") and torch.backends.mps.is_available()
)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_ACCEL, reason="no CUDA/ROCm/MPS device")]


def test_tiny_run_on_accelerator(tiny_profile: Profile) -> None:
    device = devmod.resolve_device("auto")
    report = runner.run_benchmarks(tiny_profile, device)
    assert report.environment.backend in ("cuda", "rocm", "mps")
    assert report.matmul and report.matmul.by_precision["fp32"].best.ok
    assert report.memory and report.memory.best and report.memory.best.ok
    assert report.transfer and report.transfer.status == "ok"
    if report.environment.backend != "mps":
        assert report.transfer.pinned_over_pageable_h2d is not None
        assert any(f.memory == "pinned" for f in report.transfer.fits)
    assert report.peak_memory and len(report.peak_memory.points) == 2


def test_sync_waits_for_device_work() -> None:
    device = devmod.resolve_device("auto")
    sync = devmod.synchronizer(device)
    a = torch.randn(2048, 2048, device=device)
    for _ in range(5):
        a = a @ a / 2048
    sync()
    assert torch.isfinite(a).all().item()


def test_quick_profile_matmul_on_accelerator() -> None:
    report = runner.run_benchmarks("quick", "auto", suites=["matmul", "memory"])
    for p in ("fp32", "bf16", "fp16"):
        s = report.matmul.by_precision[p]  # type: ignore[union-attr]
        if s.native:
            assert s.best.ok and (s.best.value or 0) > 0

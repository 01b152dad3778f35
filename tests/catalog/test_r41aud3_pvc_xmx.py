"""An Intel user's review (round 41, aud3): the Max 1550 stack had no XMX (matrix) figures, so
every bf16 or fp16 job on it was priced at the vector FP32 rate, 16x below Intel's own peak:
8 stacks trained Llama 3.1 8B at 1,610 tokens/s. Its XMX peaks are half Intel's Hot Chips 34
figures for the 2-stack OAM, each a whole multiple of the FP32 the entry already halves."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.catalog.loader import read_gpu_specs
from app.domain import perf
from app.domain.gpu import GpuSpec
from tests.domain.fixtures import llama31_8b_finetune

DATA = Path(__file__).resolve().parents[2] / "data"


def _pvc() -> GpuSpec:
    return next(g for g in read_gpu_specs(DATA) if g.slug == "max-1550")


def test_the_stack_carries_its_xmx_peaks() -> None:
    gpu = _pvc()
    assert gpu.bf16_tflops == pytest.approx(839 / 2, rel=1e-3)
    assert gpu.fp16_tflops == gpu.bf16_tflops
    assert gpu.tf32_tflops == pytest.approx(419 / 2, rel=1e-3)
    assert gpu.int8_tops == pytest.approx(1678 / 2, rel=1e-3)
    # the same stack as the FP32 figure: XMX bf16 is 16x the vector rate on both
    assert gpu.bf16_tflops is not None and gpu.fp32_tflops is not None
    assert gpu.bf16_tflops / gpu.fp32_tflops == pytest.approx(16, rel=0.01)


def test_bf16_training_runs_on_xmx_not_at_fp32_speed() -> None:
    est = perf.estimate(_pvc(), llama31_8b_finetune())
    assert est.compute_precision == "bf16"

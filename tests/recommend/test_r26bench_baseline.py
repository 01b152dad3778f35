"""r26: a baseline that cannot hold the job is quoted at the precision it runs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.recommend import schemas as s
from app.recommend import service
from app.recommend.presets import DATA_DIR
from app.shipped.rules import load_rules
from tests.domain.fixtures import A100, H100

# a CPU as orchestrate.measured_device_spec describes one: fp32 only (no native bf16)
CPU = replace(A100, slug="device-report-1", name="AMD EPYC (your device, measured)",
              vendor="cpu", architecture="cpu", segment="measured", memory_gb=23.5,
              memory_bandwidth_gbs=20.0, fp32_tflops=1.0, tf32_tflops=None, fp16_tflops=None,
              bf16_tflops=None, fp8_tflops=None, int8_tops=None, backends=("cpu",),
              visible_memory_mib=None)  # fmt: skip


def _note(**workload: Any) -> str:
    req = s.RecommendationRequest.model_validate({"workload": workload, "objective": "fastest"})
    r = service.recommend(req, [A100, H100], load_rules(DATA_DIR), baseline=CPU)
    assert r.baseline is not None and r.baseline.note is not None
    return r.baseline.note


def test_a_cpu_baseline_is_quoted_at_the_precision_it_runs() -> None:
    note = _note(preset="llama-3-8b", precision="bf16")
    assert "cannot hold this job" in note, note
    assert "at fp32, the precision it runs" in note, note

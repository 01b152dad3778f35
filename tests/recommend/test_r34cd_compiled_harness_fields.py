"""The compiled diffusion tuning rows say what their harness's loop does (issue 21): a per-step
host sync (``step_sync``) and SD 1.5's safety checker, read by benchmarks/accuracy.py into
WorkloadSpec; the held-out files carry neither (they are not tuned on)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import accuracy  # noqa: E402

from app.catalog.loader import read_gpu_specs  # noqa: E402

TUNING = ROOT / "tests" / "data" / "diffusion_compiled.yaml"
GPUS = {g.slug: g for g in read_gpu_specs(ROOT / "data")}


def _rows(path: Path) -> list[dict[str, object]]:
    return list(yaml.safe_load(path.read_text(encoding="utf-8"))["measurements"])


def test_step_sync_and_checker_are_set_by_harness() -> None:
    for row in _rows(TUNING):
        src, rt, preset = row["source"], row["runtime"], row["preset"]
        # diffusers' PNDM / DDIM / 0.21 Euler loops (alexeigor's PyTorch, ONNX Runtime's and
        # fal's harnesses) and TensorRT 9's demo with CUDA graphs (fal) sync every step
        syncs = src in ("ort-sd-readme", "fal-sd-benchmarks") or (
            src == "alexeigor-sd-benchmarks-next" and rt == "torch-compile"
        )
        assert bool(row.get("step_sync")) is syncs, row
        checker = src in ("alexeigor-sd-benchmarks-next", "fal-sd-benchmarks") and (
            rt == "torch-compile" and preset == "stable-diffusion-1.5"
        )
        assert bool(row.get("safety_checker")) is checker, row


def test_heldout_rows_carry_no_harness_fields() -> None:
    for path in sorted((ROOT / "tests" / "data").glob("heldout_diffusion_*.yaml")):
        for row in _rows(path):
            assert "step_sync" not in row and "safety_checker" not in row, (path.name, row)


def test_a_synced_row_is_priced_slower_than_without_the_field() -> None:
    row = next(
        r
        for r in _rows(TUNING)
        if r["source"] == "fal-sd-benchmarks" and r["runtime"] == "tensorrt"
    )
    gpu = GPUS[str(row["gpu_slug"])]
    synced = accuracy.predict_heldout(dict(row), gpu, ROOT / "data")
    plain = accuracy.predict_heldout({**row, "step_sync": False}, gpu, ROOT / "data")
    # 50 UNet calls × 22 calls after the sync × 23 µs: 25 ms of a ~0.6 s pipeline
    assert synced - plain == pytest.approx(50 * 22 * 23e-6, rel=1e-6)

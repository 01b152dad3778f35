"""benchmarks/band_tails.py (issue #23): the rows in the tails of the widest runtime bands, and
the measured speed of one runtime over another on the same GPU and job, which tells a GPU's
own limit (it slows every runtime on the card alike) from one software stack's."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from app.domain import perf
from tests.support import load_benchmark

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bt() -> ModuleType:
    return load_benchmark("band_tails.py", "bench_band_tails")


def _row(bt: ModuleType, gpu: str, runtime: str, batch: int, measured: float, metric: str = "m"):
    return bt.TailRow(
        "f", gpu, "resnet-50", runtime, "fp32", batch, metric, 0, "s", measured, 1.0, ""
    )


def test_pairs_only_the_same_gpu_job_and_batch(bt) -> None:
    rows = [
        _row(bt, "t4", "tensorflow", 8, 50.0),
        _row(bt, "t4", "pytorch", 8, 100.0),
        _row(bt, "t4", "pytorch", 16, 400.0),  # no TensorFlow row at batch 16: unpaired
        _row(bt, "v100", "tensorflow", 8, 90.0),
        _row(bt, "v100", "pytorch", 8, 100.0),
    ]
    got = bt.runtime_pair_ratios(rows, "tensorflow", "pytorch")
    assert got == {("t4", "fp32"): [0.5], ("v100", "fp32"): [0.9]}


def test_rows_of_other_metrics_do_not_pair(bt) -> None:
    rows = [
        _row(bt, "a100", "tensorrt", 1, 2.0, metric="seconds_per_batch"),
        _row(bt, "a100", "torch-compile", 1, 50.0, metric="denoise_steps_per_s"),
    ]
    assert bt.runtime_pair_ratios(rows, "tensorrt", "torch-compile") == {}


def test_held_out_files_are_refused(bt) -> None:
    with pytest.raises(ValueError, match="held-out"):
        bt.tail_rows(ROOT / "tests" / "data" / "heldout_tf_cnn_inference.yaml")


def test_tail_rows_carry_each_step_bound_and_leave_the_engine_as_found(bt) -> None:
    before = perf.estimate
    rows = bt.tail_rows(ROOT / "tests" / "data" / "hf_compile_vision.yaml")
    assert perf.estimate is before
    assert len(rows) == 36
    assert all(r.bound and r.ratio > 0 for r in rows)

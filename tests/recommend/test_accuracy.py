"""The throughput model against Lambda's published PyTorch training throughputs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENTS = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"


def _accuracy_module():
    spec = importlib.util.spec_from_file_location(
        "bench_accuracy", ROOT / "benchmarks" / "accuracy.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def scores():
    if not MEASUREMENTS.exists():
        pytest.skip("no measurement file")
    return _accuracy_module().evaluate(ROOT / "data", MEASUREMENTS)


def test_every_workload_ranks_and_sizes_gpus(scores) -> None:
    assert len(scores) >= 4
    for s in scores:
        assert s.n >= 5, s.model
        assert s.spearman >= 0.9, (s.model, s.precision, s.spearman)
        assert s.median_ratio <= 1.3, (s.model, s.precision, s.median_ratio)


def test_model_beats_bare_roofline(scores) -> None:
    for s in scores:
        assert s.median_ratio < s.roofline_median_ratio, s.model
        assert s.spearman >= s.roofline_spearman, s.model


def test_spearman_helper() -> None:
    mod = _accuracy_module()
    assert mod.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert mod.spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    assert mod.median_ratio([2.0, 1.0], [1.0, 1.0]) == pytest.approx(1.5)

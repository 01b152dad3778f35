"""The throughput model against Lambda's published PyTorch training throughputs."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENTS = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"


@pytest.fixture(scope="module")
def scores(accuracy):  # type: ignore[no-untyped-def]
    return accuracy.evaluate(ROOT / "data", MEASUREMENTS)


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


def test_spearman_helper(accuracy) -> None:  # type: ignore[no-untyped-def]
    mod = accuracy
    assert mod.spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert mod.spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    assert mod.median_ratio([2.0, 1.0], [1.0, 1.0]) == pytest.approx(1.5)

"""Calibrated uncertainty bands: leave-one-GPU-out coverage of published results, per regime."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.shipped.rules import load_efficiency

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"
LLM = ROOT / "tests" / "data" / "llm_inference.yaml"


@pytest.fixture(scope="module")
def bands(accuracy):
    return accuracy.band_scores(ROOT / "data", TRAIN, LLM)


def test_every_regime_covers_80_percent_held_out(bands) -> None:
    regimes = {b.regime for b in bands}
    assert {"train", "decode", "prefill"} <= regimes
    for b in bands:
        assert b.coverage >= 0.8, (b.regime, b.vendor, b.coverage)
        assert b.low <= 1.0 <= b.high
        assert 0.7 <= b.bias <= 1.4, (b.regime, b.vendor, b.bias)


def test_shipped_bands_are_the_computed_ones(bands) -> None:
    """data/efficiency.yaml carries what `benchmarks/accuracy.py --write-bands` computes."""
    table = load_efficiency(ROOT / "data")
    for b in bands:
        lo, hi = table.bands[(b.regime, b.vendor)]
        assert lo == pytest.approx(b.low, abs=0.011), (b.regime, b.vendor)
        assert hi == pytest.approx(b.high, abs=0.011), (b.regime, b.vendor)

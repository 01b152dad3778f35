"""Runtime-aware batch inference against published TensorRT results (A100, A30, T4; BERT-Base
and BERT-Large, INT8 and FP16, sequence 128 and 384, batch 128). Measured when written:
Spearman 0.98, median ratio 1.23, bias (measured ÷ predicted) 1.07 over 24 rows; the eager
16-bit roofline alone is 2–5× below these figures."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "runtime_inference.yaml"


@pytest.fixture(scope="module")
def score(accuracy):
    return accuracy.evaluate_runtime(ROOT / "data", DATA)


def test_optimised_inference_is_sized_and_ranked(score) -> None:
    assert score.n >= 20
    assert score.spearman >= 0.9, score.spearman
    assert score.median_ratio <= 1.5, score.median_ratio
    assert 0.7 <= score.bias <= 1.4, score.bias


def test_int8_runs_on_its_own_peak(score) -> None:
    by = {(slug, label): p for slug, label, _, p in score.rows}
    for (slug, label), pred in by.items():
        if " int8 " in label:
            fp16 = by[(slug, label.replace(" int8 ", " fp16 "))]
            assert pred > 1.5 * fp16, (slug, label)


def test_rows_cite_their_source() -> None:
    import yaml

    doc = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    for row in doc["measurements"]:
        assert row["source"] in doc["sources"], row
        assert row["samples_per_s"] == pytest.approx(
            row["batch_size"] / row["latency_ms"] * 1e3, rel=1e-3
        )

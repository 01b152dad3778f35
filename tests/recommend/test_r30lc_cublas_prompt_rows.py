"""The llama.cpp cuBLAS prompt path's tuning rows (tests/data/llamacpp_cublas_prompt.yaml).

Their F16 rows set the path's whole-pass factor (data/efficiency.yaml ``llamacpp-cublas-prompt``:
the geometric mean of measured / predicted over them, so that mean is 1 once the factor is in);
the quantised rows (dequantise + cuBLAS, 2024 builds) only check it. Before the factor the engine
ran the path at the GEMM prior and read every row fast (RTX 4090 F16: measured 0.74 of it)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.support import load_benchmark

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "llamacpp_cublas_prompt.yaml"


@pytest.fixture(scope="module")
def rows() -> list:
    acc = load_benchmark("accuracy.py", "accuracy_r30lc")
    priced, skipped = acc.evaluate_heldout(ROOT / "data", [FILE])
    assert not any(skipped.values())
    return priced


def test_the_f16_rows_mean_is_one(rows: list) -> None:
    f16 = [r.ratio for r in rows if " fp16 " in r.group]
    assert len(f16) == 2
    mean = math.exp(sum(math.log(x) for x in f16) / len(f16))
    assert mean == pytest.approx(1.0, abs=0.02)


def test_every_row_within_ten_percent(rows: list) -> None:
    """The quantised rows, which no constant was read from, land as the F16 ones do."""
    assert len(rows) == 4
    for r in rows:
        assert 1 / 1.1 <= r.ratio <= 1.1, (r.slug, r.group, r.ratio)

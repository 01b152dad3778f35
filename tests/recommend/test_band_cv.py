"""benchmarks/band_cv.py's alternatives to the shipped band rules (issue 23, second pass):
each on hand-worked rows, so the comparison it prints rests on rules that do what they say."""

from __future__ import annotations

import math
from types import ModuleType

import pytest

from app.domain import conformal
from tests.support import load_benchmark


@pytest.fixture(scope="module")
def band_cv() -> ModuleType:
    return load_benchmark("band_cv.py", "bench_band_cv")


def _rows(band_cv: ModuleType) -> list:
    # three GPUs, ten workloads: the third GPU runs at half the others' ratio (TensorFlow CNN
    # inference's T4 does), the workloads spread a little about each GPU's level
    level = {"a100": 1.0, "v100": 0.95, "t4": 0.5}
    return [
        band_cv.acc.CalRow(
            "infer-cnn", "tensorflow", f"w{w}", slug, "nvidia", "x", level[slug] * (1 + w / 100)
        )
        for slug in level
        for w in range(10)
    ]


def test_min_check_units_keeps_only_the_check_with_enough_units(band_cv) -> None:
    rows = _rows(band_cv)
    both = band_cv.acc._band_score("infer-cnn", "all", rows)
    assert both.unit == "GPU+workload"
    # three GPUs cannot hold a new GPU at 80 % (a rank needs nine units): the workloads alone
    lone = band_cv.acc._band_score("infer-cnn", "all", rows, min_units=9)
    assert lone.unit == "workload"
    fit = conformal.fit([(r.workload, r.ratio) for r in rows])
    assert (lone.low, lone.high) == (fit.low, fit.high)
    # the GPU check, held out against two GPUs near 1, is what reaches down to the half-rate one
    assert both.low < lone.low and both.high / both.low > lone.high / lone.low
    # enough units for both: the shipped envelope
    assert band_cv.acc._band_score("infer-cnn", "all", rows, min_units=3).unit == "GPU+workload"


def _unit(regime: str, i: int, ratio: float) -> conformal.Held:
    return conformal.Held(f"{regime} s{i}", conformal.Spread(1.0, 0.1, 0.1), (ratio,))


def test_joint_source_is_the_80_percent_rank_of_each_units_larger_need(band_cv) -> None:
    # nine one-row units against a ±0.1 log band: unit i needs √(ln(rᵢ)² − 0.1²) on its side
    ratios = [1.0, 1.05, 0.9, 1.3, 0.7, 1.5, 0.6, 1.2, 2.0]
    held = [_unit("decode", i, r) for i, r in enumerate(ratios)]
    needs = sorted(max(conformal.unit_need(h)) for h in held)
    k = math.ceil(10 * 0.8)  # ⌈(G+1)·0.8⌉ = 8 of 9
    (lo, hi) = band_cv.joint_source(held)["all"]
    assert hi == pytest.approx(math.exp(needs[k - 1])) and lo == pytest.approx(1 / hi)
    assert needs[k - 1] == pytest.approx(math.sqrt(math.log(0.6) ** 2 - 0.01))
    assert band_cv.joint_source(held[:3]) == {}  # under four units no rank reaches 80 %


def test_per_kind_source_gives_each_kind_its_own_units_term(band_cv) -> None:
    llm = [_unit("decode", i, 1.0 + 0.1 * i) for i in range(9)]
    batch = [_unit("train", i, 1.0 + 0.02 * i) for i in range(9)]
    terms = band_cv.per_kind_source(llm + batch)
    assert terms["decode"] == band_cv._source_pair(llm)
    assert terms["train"] == band_cv._source_pair(batch)
    assert terms["all"] == band_cv._source_pair(llm + batch)
    # both ranks are the largest need here (⌈10·0.9⌉ = 9 of 9, ⌈19·0.9⌉ = 18 of 18): the batch
    # kind no longer takes the LLM units' spread
    assert terms["decode"][1] == terms["all"][1] > terms["train"][1]
    # a kind too thin for the rank takes the pooled term
    thin = band_cv.per_kind_source(llm + batch[:3])
    assert "train" not in thin and thin["decode"] == band_cv._source_pair(llm)
    assert band_cv._of(thin, "train") == thin["all"] == band_cv._source_pair(llm + batch[:3])


def test_class_rows_are_the_rows_a_band_is_fitted_on(band_cv) -> None:
    row = band_cv.acc.CalRow
    rows = [
        row("decode", "llama.cpp", "a", "g1", "nvidia", "x", 1.0),
        row("decode", "llama.cpp", "a", "m1", "apple", "y", 1.0),
        row("decode", "tensorrt-llm", "b", "g1", "nvidia", "x", 1.0),
        row("decode", "tensorrt-llm", "c", "g1", "nvidia", "x", 1.0, moe=True),
        row("prefill", "llama.cpp", "a", "g1", "nvidia", "x", 1.0),
    ]
    assert band_cv.class_rows(rows, "decode", "all") == rows[:3]
    assert band_cv.class_rows(rows, "decode/llama.cpp", "nvidia") == rows[:1]
    assert band_cv.class_rows(rows, "decode/tensorrt-llm", "all") == rows[2:3]

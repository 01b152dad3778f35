"""benchmarks/band_cv.py's alternatives to the shipped band rules (issue 23, second pass):
each on hand-worked rows, so the comparison it prints rests on rules that do what they say."""

from __future__ import annotations

import math
from types import ModuleType
from unittest import mock

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


# ------------------------------------------------ issue 23, third pass: the candidates weighed


def _sources(regime: str, ratios: list[float]) -> list[conformal.Held]:
    return [
        conformal.Held(f"{regime} s{i}", conformal.Spread.of(0.9, 1.1), (r,))
        for i, r in enumerate(ratios)
    ]


def test_pooled_terms_nested_check_on_one_regimes_sources(band_cv) -> None:
    """Nine one-row "a" sources below a ±10 % band, needs rising; 27 "b" sources inside it.
    Each "a" source against the pooled term rebuilt without it (35 others, rank ⌈36·0.9⌉ = 33:
    the 6th smallest of the other eight "a" needs): sources 0–5 met, 6–8 not. Its own term
    rebuilt without each (eight others, under the rank: their largest) misses only source 8."""
    rest = _sources("b", [1.0] * 27)
    spread = _sources("a", [math.exp(-(0.3 + 0.05 * i)) for i in range(9)])
    assert band_cv.pooled_cv_met(spread, spread + rest) == pytest.approx(6 / 9)
    own = conformal.source_term(spread)
    assert own is not None and own.rank == 9 and own.cv_met == pytest.approx(8 / 9)
    assert band_cv.selected_source(spread + rest)["a"] == (own.low, own.high)
    # alike needs: both terms meet every "a" source, a tie, and the pooled term stands
    alike = _sources("a", [math.exp(-0.3)] * 9)
    assert band_cv.pooled_cv_met(alike, alike + rest) == 1.0
    assert "a" not in band_cv.selected_source(alike + rest)
    assert "a" in band_cv.own_at_rank_source(alike + rest)  # the shipped rule keeps it
    assert math.isnan(band_cv.pooled_cv_met([], rest))


def test_trimmed_fit_pulls_in_only_the_side_no_held_out_unit_crossed(band_cv) -> None:
    """Three GPUs, three workloads each: one GPU runs 1.5× above the other two (the V100 in
    Hugging Face's compile guide). Held out, it needs the margin on the high side; the shipped
    fit puts the same margin on the low side as well, which the trimmed fit takes back."""
    level = {"a100": 0.95, "t4": 0.9, "v100": 1.45}
    rows = [(slug, lv * (1 + w / 50)) for slug, lv in level.items() for w in range(3)]
    shipped = conformal.fit(rows)
    trimmed = band_cv.trimmed_fit(rows)
    assert shipped.margin > 1.0
    assert trimmed.high == pytest.approx(shipped.high)
    assert shipped.low < trimmed.low <= min(r for _, r in rows)
    assert trimmed.coverage >= conformal.TARGET_COVERAGE
    # margins only: the same here (the shipped fit needed a margin, not steps)
    assert band_cv._margins_only(rows) == trimmed


def test_runtime_band_min_gpus_drops_a_thin_runtime_to_its_regime(band_cv) -> None:
    rows = _rows(band_cv) + [
        band_cv.acc.CalRow("infer-cnn", "pytorch", f"p{w}", slug, "nvidia", "x", 1.0 + w / 100)
        for slug in ("a100", "v100", "t4", "l4")
        for w in range(5)
    ]
    shipped = {b.regime for b in band_cv.acc.bands_of(rows)}
    assert {"infer-cnn/tensorflow", "infer-cnn/pytorch"} <= shipped
    with mock.patch.object(band_cv.acc, "RUNTIME_BAND_MIN_GPUS", 4):
        four = {b.regime for b in band_cv.acc.bands_of(rows)}
    assert "infer-cnn/tensorflow" not in four and "infer-cnn/pytorch" in four

"""benchmarks/llamacpp_pp_residuals.py (issue 21): its power headroom is the engine's own MMQ
clock share before the cap, its rows are accuracy.py's CUDA pp512 rows, and its boost what-if
leaves the ranking as it is at a factor of 1."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.support import load_benchmark


@pytest.fixture(scope="module")
def pp() -> ModuleType:
    return load_benchmark("llamacpp_pp_residuals.py", "bench_llamacpp_pp_residuals")


@pytest.fixture(scope="module")
def rows(pp: ModuleType) -> list:
    return pp.rows()


def test_headroom_is_the_engine_clock_share_before_its_cap(rows: list) -> None:
    with_figure = [r for r in rows if r.headroom is not None]
    assert with_figure, "no tuning board has a per-watt figure"
    for r in with_figure:
        assert r.share == pytest.approx(min(1.0, r.headroom)), r.slug
    # boards without a figure (Hopper, Blackwell) keep their boost clock
    assert all(r.share == 1.0 for r in rows if r.headroom is None)


def test_rows_are_the_tuning_scoreboards_cuda_prompt_rows(accuracy, rows: list) -> None:
    score = next(
        s
        for s in accuracy.evaluate_inference(accuracy.ROOT / "data", accuracy.INFERENCE_FILE)
        if s.backend == "cuda" and s.metric == "pp"
    )
    assert sorted((r.slug, r.measured, r.predicted) for r in rows) == sorted(score.rows)


def test_boost_what_if_at_one_is_the_engine_ranking(pp: ModuleType, accuracy, rows: list) -> None:
    plain = accuracy.spearman([r.predicted for r in rows], [r.measured for r in rows])
    assert pp.boost_what_if(rows, 1.0) == pytest.approx(plain)

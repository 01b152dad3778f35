"""The tie-aware per-group Spearman (benchmarks/accuracy.py) and the failing-group classes of
benchmarks/failing_groups.py (issue #21): a swap inside a measurement tie is forgiven, a
swap across a real gap is not, and a flat prediction over GPUs measured apart is its own class."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.support import load_benchmark


@pytest.fixture(scope="module")
def fg() -> ModuleType:
    return load_benchmark("failing_groups.py", "bench_failing_groups")


def test_tie_classes_start_at_each_class_floor(accuracy) -> None:
    # 100, 102 within 3 % of 100; 104 is 4 % above the class floor: a new class
    assert accuracy.tie_classes([104.0, 100.0, 102.0, 200.0], 0.03) == [1, 0, 0, 2]


def test_tie_aware_forgives_a_swap_inside_the_tie(accuracy) -> None:
    meas = [100.0, 102.0, 150.0]  # the first two within 3 %
    pred = [11.0, 10.0, 20.0]  # the engine swaps them
    assert accuracy.spearman(pred, meas) == pytest.approx(0.5)
    assert accuracy.tie_aware_spearman(pred, meas, 0.03) == pytest.approx(1.0)


def test_tie_aware_keeps_a_swap_across_a_gap(accuracy) -> None:
    meas = [100.0, 110.0, 150.0]  # 10 % apart: no tie
    pred = [11.0, 10.0, 20.0]
    plain = accuracy.spearman(pred, meas)
    assert accuracy.tie_aware_spearman(pred, meas, 0.03) == pytest.approx(plain)
    assert plain == pytest.approx(0.5)


def test_heldout_scores_carry_the_tie_aware_figure_beside_the_plain(accuracy) -> None:
    Row = accuracy.HeldoutRow
    rows = [Row("r", "g", "a", "samples_per_s", 100.0, 11.0),
            Row("r", "g", "b", "samples_per_s", 101.0, 10.0),
            Row("r", "g", "c", "samples_per_s", 300.0, 30.0)]  # fmt: skip
    (score,) = accuracy.heldout_scores(rows)
    assert score.group_spearman == [pytest.approx(0.5)]
    assert score.group_spearman_tied == [pytest.approx(1.0)]


def test_classify_tie_engine_tie_structural(fg) -> None:
    P = fg.Point
    noise = [P("a", 100.0, 11.0), P("b", 103.0, 10.0), P("c", 200.0, 20.0)]
    assert fg.classify(noise, 0.05)[0] == "tie"
    flat = [P("a", 100.0, 10.0), P("b", 150.0, 10.0), P("c", 200.0, 20.0)]
    assert fg.classify(flat, 0.05) == ("engine-tie", pytest.approx(0.5))
    swap = [P("a", 100.0, 11.0), P("b", 120.0, 10.0), P("c", 200.0, 20.0)]
    assert fg.classify(swap, 0.05) == ("structural", pytest.approx(0.2))


def test_pretrain_groups_forgive_a_tie_only_when_asked() -> None:
    from benchmarks import llm_pretrain

    Row = llm_pretrain.PretrainRow
    # a and b measured 1 % apart, the engine swaps them; c far above
    rows = [Row("s", "t", "g", slug, "", m, p)
            for slug, m, p in (("a", 100.0, 11.0), ("b", 101.0, 10.0), ("c", 300.0, 30.0))]  # fmt: skip
    assert llm_pretrain.group_spearmans(rows) == [pytest.approx(0.5)]
    assert llm_pretrain.group_spearmans(rows, 0.03) == [pytest.approx(1.0)]

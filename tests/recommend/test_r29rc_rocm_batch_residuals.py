"""benchmarks/rocm_batch_residuals.py: the missed MI300X vLLM step time's slope per running
sequence, and what each candidate cost would make of the two Llama models' slopes."""

from __future__ import annotations

import pytest

from app.domain.workload import ModelSpec
from benchmarks.rocm_batch_residuals import Point, candidates, per_sequence_us, slope

# Llama 3.1 70B and 405B's config.json shapes (meta-llama, the catalog's presets)
SMALL = ModelSpec("decoder", 70.6e9, layers=80, hidden_size=8192, num_heads=64, num_kv_heads=8)
LARGE = ModelSpec("decoder", 405.9e9, layers=126, hidden_size=16384, num_heads=128, num_kv_heads=8)


def test_slope_is_least_squares_and_zero_without_two_points() -> None:
    assert slope([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(2.0)
    assert slope([1.0, 2.0, 3.0], [1.0, 3.0, 2.0]) == pytest.approx(0.5)
    assert slope([4.0], [1.0]) == 0.0
    assert slope([4.0, 4.0], [1.0, 2.0]) == 0.0


def test_per_sequence_slope_is_per_model_and_length_and_skips_small_batches() -> None:
    def pt(model: str, isl: int, seqs: int, missed_ms: float) -> Point:
        return Point(model, isl, 2048, seqs, measured_ms=10.0 + missed_ms, predicted_ms=10.0)

    rows = [pt("a", 128, c, 0.05 * c) for c in (16, 32, 64, 128)]
    rows += [pt("a", 128, 1, 5.0)]  # below the cut: would bend the fit
    rows += [pt("a", 2048, c, 0.1 * c) for c in (16, 128)]
    rows += [pt("b", 128, c, 0.2 * c + 1.0) for c in (32, 64)]
    got = per_sequence_us(rows, 16)
    assert got == pytest.approx(
        {("a", 128, 2048): 50.0, ("a", 2048, 2048): 100.0, ("b", 128, 2048): 200.0}
    )
    assert per_sequence_us(rows, 1)[("a", 128, 2048)] < 50.0


def test_candidates_scale_as_their_costs() -> None:
    cs, cl = candidates(SMALL, 8, 2.0), candidates(LARGE, 8, 2.0)
    assert cl["host (per sequence)"] / cs["host (per sequence)"] == 1.0
    assert cl["layers"] / cs["layers"] == pytest.approx(126 / 80)
    # two all-reduces of a hidden-wide 16-bit row per layer: 126 x 16384 against 80 x 8192
    assert cl["all-reduced bytes"] / cs["all-reduced bytes"] == pytest.approx(
        126 * 16384 / (80 * 8192)
    )
    assert cs["all-reduced bytes"] == pytest.approx(2 * 80 * 8192 * 2)
    # one KV head of 128 per GPU and layer at TP 8 on both: the layers' ratio
    assert cl["KV bytes per context token"] / cs["KV bytes per context token"] == pytest.approx(
        126 / 80
    )
    assert cl["GEMM FLOPs"] / cs["GEMM FLOPs"] == pytest.approx(405.9 / 70.6)
    assert cs["GEMM FLOPs"] == pytest.approx(2 * 70.6e9 / 8)

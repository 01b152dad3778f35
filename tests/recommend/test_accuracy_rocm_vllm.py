"""The held-out ROCm vLLM serving set (tests/data/heldout_rocm_vllm.yaml): AMD's published
8 x MI300X vLLM 0.10.2 throughput table, scored on its own.

The set is never tuned on. The thresholds below are what the engine achieves on it now, kept
so that a change that makes it worse fails; they are NOT the project's goal. The goal for a
held-out regime is a median ratio error of 1.25 or less: this set misses it (1.42 on
2026-12-03, every row over-predicted, 1.21-1.58x; 1.38 once the MI300X streams at AMD's
measured multi-XCD share, perf.AMD_MULTI_XCD_STREAM_SHARE; 1.36 with vLLM's piecewise CUDA
graphs' split per layer, graph_split_us). What is and is not explained is written up
in docs/methodology.md ("Held-out: vLLM on MI300X (ROCm)"): the all-reduces are priced by
AMD's measured RCCL curve; FP8 GEMMs at AMD's max-achievable rate (0.49 of peak against the
prior's 0.55) only as the app answers (the MI300X's kernel profile, which the LLM step reads
since 2026-12-03: 1.34, 1.31 with the stream share), not on the priors path scored first; vLLM's per-step host work at
thousands of sequences is not modelled.
"""

from __future__ import annotations

import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "tests" / "data" / "heldout_rocm_vllm.yaml"


def test_the_rocm_vllm_set_is_priced_and_scored_on_its_own(accuracy) -> None:
    rows, skipped = accuracy.evaluate_heldout(ROOT / "data", [FILE])
    assert not skipped and len(rows) == 8
    assert {r.slug for r in rows} == {"mi300x"}
    assert {r.regime for r in rows} == {"serving-vllm-rocm"}
    assert accuracy.HELDOUT_BAND_REGIME["serving-vllm-rocm"] == "serving"
    (score,) = accuracy.heldout_scores(rows, skipped)
    # what it achieves now (median ratio 1.16, bias 0.86, Spearman 0.98): the 1.25 goal is
    # met since vLLM's synchronous host work per sequence (13 µs, vLLM PR #23914); before it
    # 1.32, bias 0.76; before the measured RCCL curve it was 1.64, bias 0.61, before the
    # multi-XCD stream share 1.42, bias 0.71, before vLLM's piecewise graph split 1.38, bias 0.72
    assert score.median_ratio <= 1.19
    assert 0.80 <= score.bias <= 0.90
    assert score.spearman >= 0.95
    # over-predicted on every row: a one-sided miss, not noise around the measurement
    assert all(r.predicted > r.measured for r in rows)


def test_the_larger_model_is_ranked_slower_on_every_workload(accuracy) -> None:
    """Within each ISL/OSL the 405B row is the slower, as published. (Per model the engine
    orders the four workloads as published but for 70B's 128/4096 and 500/2000, measured
    within 0.6 % of each other, 11,313 vs 11,377 tokens/s, which it has 17,288 vs 15,990.)"""
    rows, _ = accuracy.evaluate_heldout(ROOT / "data", [FILE])
    by = {(r.group.split()[0], tuple(r.group.split()[-2:])): r for r in rows}
    for (model, shape), r in by.items():
        if model == "llama-3.1-405b":
            small = by[("llama-3.1-70b", shape)]
            assert r.predicted < small.predicted and r.measured < small.measured
    assert all(math.isfinite(r.predicted) for r in rows)


def test_as_the_app_answers_the_fp8_gemms_run_at_the_profiles_rate(accuracy) -> None:
    """With the shipped kernel profiles attached the LLM step's FP8 GEMMs run at the MI300X
    profile's figure (AMD's max-achievable FP8, below the 0.55 prior): every row is priced
    slower than on the priors, none faster, and the set reads closer to its measurements."""
    data = ROOT / "data"
    prior, prior_skipped = accuracy.evaluate_heldout(data, [FILE])
    app, skipped = accuracy.evaluate_heldout(data, [FILE], accuracy.app_calibration(data))
    assert not skipped and len(app) == len(prior)
    for p, a in zip(prior, app, strict=True):
        assert (p.slug, p.group) == (a.slug, a.group)
        assert a.predicted < p.predicted
    (score,) = accuracy.heldout_scores(app, skipped)
    (first,) = accuracy.heldout_scores(prior, prior_skipped)
    # what it achieves now (1.29 against the priors path's 1.36; 1.34 and 1.42 before the
    # multi-XCD stream share, 1.31 and 1.38 before vLLM's piecewise graph split)
    assert score.median_ratio < first.median_ratio
    assert score.median_ratio <= 1.32

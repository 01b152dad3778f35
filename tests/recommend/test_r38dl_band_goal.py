"""Issue 23's "done when" for bands, held by a test (it was printed by benchmarks/accuracy.py
and benchmarks/band_crossfit.py, and no test read it): on the held-out sets, each regime's
rows fall inside the band the engine draws at least 80 % of the time, at a median width of at
most ×2.5. Scored as those scripts score it, never in sample: the new-source term is sized on
the calibrating held-out files too, so each file (files sharing a source together) is scored
under the term built without it; the spot-check set, which calibrates nothing, under the
shipped term. A change that breaks this is a change to the bands' honesty, not to a test's
number: rewrite the bands (accuracy.py --write-bands) and say the figure."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from app.shipped.rules import load_efficiency
from tests.support import load_benchmark

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "tests" / "data" / "lambda_pytorch_train.yaml"


@pytest.fixture(scope="module")
def crossfit() -> ModuleType:
    return load_benchmark("band_crossfit.py", "bench_band_crossfit_r38dl")


def test_every_held_out_regime_meets_the_band_goal_cross_fitted(crossfit: ModuleType) -> None:
    data = ROOT / "data"
    acc = crossfit.acc
    table = load_efficiency(data)
    rows = crossfit.heldout_rows(data, table)
    tuning = acc.source_units(acc.calibration_rows(data, TRAIN, acc.INFERENCE_FILE))
    results = crossfit.score(crossfit.crossfit(rows, crossfit.shipped_rule, tuning))
    spot = crossfit.scored_rows(acc.evaluate_heldout(data, [acc.SPOTCHECK_FILE])[0], table)
    full = crossfit.shipped_rule([*tuning, *crossfit.units(rows)])
    spot_results = crossfit.score([(s, s.band(full)) for s in spot])
    every = [*results, *spot_results]
    # the regimes issue 23 named: llama.cpp's, the LLM ones and the CNN ones are all scored
    names = {r.regime for r in every}
    assert {"llamacpp-decode", "llamacpp-prefill", "serving-trtllm", "cnn-training"} <= names
    assert len(every) >= 20
    short = [(r.regime, round(r.coverage, 2), round(r.width, 2)) for r in every if not r.met]
    assert not short, short
    for r in every:
        assert r.coverage >= 0.8 and r.width <= 2.5, r


@pytest.fixture(scope="module")
def app_scores(crossfit: ModuleType) -> dict[str, object]:
    """The vLLM/SGLang NVIDIA and MLPerf Llama 2 sets are in no band's calibration
    (accuracy.NOT_CALIBRATING): scored under the bands the app draws (shipped kernel profiles
    attached), as a user reads them."""
    acc = crossfit.acc
    data = ROOT / "data"
    files = [f for f in acc.NOT_CALIBRATING if f != acc.SPOTCHECK_FILE]
    rows, _ = acc.evaluate_heldout(
        data, files, calibration=acc.app_calibration(data), app_bands=True
    )
    scores = {b.regime: b for b in acc.heldout_band_scores(rows)}
    assert set(scores) == {"serving-open-cuda", "serving-mlperf-offline"}
    return scores


@pytest.mark.parametrize(
    "regime",
    [
        "serving-mlperf-offline",
        pytest.param(
            "serving-open-cuda",
            # since the TensorRT-LLM tuning rows were priced under their stated MAX_UTILIZATION
            # policy (kv2, 2026-12-07) the serving band is centred on them at 1.07, and 7 of
            # these 32 vLLM/SGLang rows run 0.44-0.71 of the engine, below it: 25 of 32 inside
            # (78 %), one row short. Not met; strict, so meeting it again fails here and the
            # mark must go (docs/methodology.md §6.7t "bw")
            marks=pytest.mark.xfail(strict=True, reason="25 of 32 inside, goal 26 (§6.7t bw)"),
        ),
    ],
)
def test_the_sets_that_calibrate_nothing_meet_it_as_the_app_answers(
    app_scores: dict[str, object], regime: str
) -> None:
    b = app_scores[regime]
    coverage, width = b.coverage, b.median_width  # type: ignore[attr-defined]
    assert coverage >= 0.8 and width <= 2.5, (regime, coverage, width)


def test_the_open_cuda_set_holds_at_least_what_it_reads_now(app_scores: dict[str, object]) -> None:
    """The strict xfail above only says the goal is not met; this floor says by how much, so
    a fall from 25 of 32 inside fails here."""
    b = app_scores["serving-open-cuda"]
    assert b.n == 32  # type: ignore[attr-defined]
    assert b.coverage >= 25 / 32 - 1e-9, b  # type: ignore[attr-defined]
    assert b.median_width <= 2.5, b  # type: ignore[attr-defined]

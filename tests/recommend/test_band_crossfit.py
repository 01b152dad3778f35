"""benchmarks/band_crossfit.py: the new-source term sized on the tuning and held-out sources
(issue 23), scored by cross-fitting. Hand-worked rows for the folds and the cross-fit; the
shipped term against the computed one is in test_accuracy_bands.py."""

from __future__ import annotations

import math
from types import ModuleType

import pytest

from app.domain import bands, conformal
from tests.support import load_benchmark

BAND = conformal.Spread.of(0.9, 1.1)  # a ±10 % band about 1


@pytest.fixture(scope="module")
def crossfit() -> ModuleType:
    return load_benchmark("band_crossfit.py", "bench_band_crossfit")


def _row(crossfit: ModuleType, file: str, source: str, ratio: float, regime: str = "x"):
    inputs = bands.BandInputs("decode", "nvidia", "Hopper", "llama.cpp", "prior")
    row = crossfit.acc.HeldoutRow(
        regime, "g", "h100", "tokens_per_s", ratio, 1.0, source=source, inputs=inputs, file=file
    )
    return crossfit.Scored(row, "decode", BAND)


def test_files_sharing_a_source_fall_in_one_fold(crossfit) -> None:
    """A source's rows share their errors: two files naming one source (the DeepLearningExamples
    ResNet-50 tables in CNN training and TensorFlow inference) must not calibrate each other."""
    rows = [
        _row(crossfit, "f1", "s1", 1.0),
        _row(crossfit, "f2", "s2", 1.0),
        _row(crossfit, "f2", "s3", 1.0),
        _row(crossfit, "f4", "s4", 1.0),
        _row(crossfit, "f3", "s3", 1.0),
    ]
    folds = crossfit.folds(rows)
    assert {f: len(ss) for f, ss in folds.items()} == {"f1": 1, "f2+f3": 3, "f4": 1}
    # a unit is a (held-out regime, source): two regimes of one source are two units
    two = crossfit.units([*rows, _row(crossfit, "f1", "s1", 1.0, regime="y")])
    assert sorted(h.unit for h in two if "s1" in h.unit) == ["decode s1 x", "decode s1 y"]


def test_each_fold_is_scored_by_a_term_built_without_it(crossfit) -> None:
    """Nine tuning sources at the band (no need) and three held-out folds: one far low (0.5),
    one far high (2.0), one at the band. Cross-fitted, the low fold's term has nothing below
    (the high fold's need above), so its row falls outside; likewise the high fold; the fold at
    the band gets both needs. In sample (the term from every fold) all three are inside."""
    extra = [conformal.Held(f"decode t{i} -", BAND, (1.0,) * 3) for i in range(9)]
    rows = [
        _row(crossfit, "low", "a", 0.5),
        _row(crossfit, "high", "b", 2.0),
        _row(crossfit, "mid", "c", 1.0),
    ]
    banded = {
        s.row.source: band for s, band in crossfit.crossfit(rows, crossfit.shipped_rule, extra)
    }
    down = math.exp(-math.sqrt(math.log(2.0) ** 2 - math.log(0.9) ** 2))
    up = math.exp(math.sqrt(math.log(2.0) ** 2 - math.log(1.1) ** 2))
    assert banded["a"] == pytest.approx((0.9, BAND.widened([(1.0, up)]).band()[1]))
    assert banded["b"] == pytest.approx((BAND.widened([(down, 1.0)]).band()[0], 1.1))
    assert banded["c"] == pytest.approx((0.5, 2.0))
    (result,) = crossfit.score(crossfit.crossfit(rows, crossfit.shipped_rule, extra))
    assert result.n == 3 and result.coverage == pytest.approx(1 / 3)
    full = crossfit.shipped_rule([*extra, *crossfit.units(rows)])
    assert all(crossfit._inside(s, s.band(full)) for s in rows)
    # a regime with nine units or more has its own term (decode here), equal to the pooled one
    assert full["decode"] == full["all"] == pytest.approx((down, up))


def test_the_spot_check_set_calibrates_nothing(crossfit) -> None:
    files = crossfit.calibrating_files()
    assert crossfit.acc.SPOTCHECK_FILE not in files
    # nor, until the bands are next written, the vLLM/SGLang NVIDIA sets (scored, not units)
    for path in (crossfit.acc.VLLM_NVIDIA_FILE, crossfit.acc.VLLM_NVIDIA_MOE_FILE):
        assert path not in files and path.exists()
    every = sorted(crossfit.acc.HELDOUT_DIR.glob(crossfit.acc.HELDOUT_GLOB))
    assert set(files) == set(every) - set(crossfit.acc.NOT_CALIBRATING) and len(files) >= 10


def test_a_row_band_is_its_spread_widened_by_its_regimes_term(crossfit) -> None:
    row = _row(crossfit, "f", "s", 1.0)
    assert row.band({"all": (0.8, 1.3)}) == BAND.widened([(0.8, 1.3)]).band()
    assert row.band({"all": (0.8, 1.3), "decode": (0.6, 1.1)}) == BAND.widened([(0.6, 1.1)]).band()
    assert row.band({}) == BAND.band()

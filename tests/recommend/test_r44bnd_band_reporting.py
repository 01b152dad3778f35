"""The held-out band tables say which regimes are in sample for the new-source term and which
are not, and the cross-fitted table lists every held-out regime (issue 23, session 44 "bnd").

The new-source term is sized on the calibrating held-out files too, so their regimes' figures in
accuracy.py's first two band tables are in sample and band_crossfit.print_crossfit gives the
honest (cross-fitted) one. The files of accuracy.NOT_CALIBRATING size nothing: their figures are
out of sample as they stand. Before this change the tables called every regime in sample and the
cross-fitted table left out the vLLM/SGLang NVIDIA (serving-open-cuda) and MLPerf
(serving-mlperf-offline) sets, though not on purpose: only the spot-check set was added there."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.support import load_benchmark


@pytest.fixture(scope="module")
def crossfit() -> ModuleType:
    return load_benchmark("band_crossfit.py", "bench_band_crossfit_r44bnd")


def _write(path: Path, *regimes: str) -> Path:
    rows = "\n".join(f'  - {{regime: "{r}", value: 1.0}}' for r in regimes)
    path.write_text(f"measurements:\n{rows}\n", encoding="utf-8")
    return path


def test_a_regime_is_out_of_sample_only_where_no_calibrating_file_holds_it(
    crossfit: ModuleType, tmp_path: Path
) -> None:
    acc = crossfit.acc
    outside = _write(tmp_path / "heldout_outside.yaml", "open", "shared")
    _write(tmp_path / "heldout_inside.yaml", "trt", "shared")
    _write(tmp_path / "not_heldout.yaml", "open")  # a tuning file: not a held-out file
    got = acc.outside_term_regimes((outside,), tmp_path)
    # "shared" has rows in a calibrating file too, so its figure is partly in sample
    assert got == {"open"}
    assert acc.outside_term_regimes((), tmp_path) == frozenset()


def test_the_shipped_sets_outside_the_term(crossfit: ModuleType) -> None:
    acc = crossfit.acc
    assert acc.outside_term_regimes() == {
        "serving-open-cuda",
        "serving-mlperf-offline",
        "timm-infer-eager",
        "timm-infer-compile",
        "timm-train",
    }
    assert acc._sample_note("serving-open-cuda") == acc.OUT_OF_SAMPLE
    assert acc._sample_note("serving-trtllm") == ""


def test_the_cross_fitted_table_covers_every_held_out_regime(crossfit: ModuleType) -> None:
    """print_crossfit scores the calibrating files cross-fitted and ``outside_files`` under the
    shipped term: together they are every held-out file, so every regime the in-sample tables
    list has a line there, serving-open-cuda and serving-mlperf-offline included."""
    acc = crossfit.acc
    every = sorted(acc.HELDOUT_DIR.glob(acc.HELDOUT_GLOB))
    inside, outside = crossfit.calibrating_files(), crossfit.outside_files()
    assert not set(inside) & set(outside)
    assert set(inside) | set(outside) == set(every)
    assert {acc.VLLM_NVIDIA_FILE, acc.VLLM_NVIDIA_MOE_FILE, acc.MLPERF_LLAMA2_FILE} <= set(outside)
    assert acc.file_regimes(outside) >= {"serving-open-cuda", "serving-mlperf-offline"}

"""The accuracy harness lives in benchmarks/accuracy.py (a script people run); the tests
load it as a module so the floors they hold are computed by the same code.

Its two costly pure readers of the repository's tuning and held-out sets, ``calibration_rows``
and ``evaluate_heldout`` (priors path), are computed once per argument set per session (per
xdist worker) instead of once per call: a dozen test files ask for the same calibration rows,
and the harness's own band, source and extrapolation functions call them again inside. Only
calls on the repository's own files are remembered (a test's tmp_path copy is always read
afresh), and each caller gets its own copies of the rows."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Hashable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support import ROOT, load_benchmark


def _repo_paths(key: Hashable) -> bool:
    """Every path in the call is a file or folder of this checkout (none in a tmp folder)."""
    if isinstance(key, tuple):
        return all(_repo_paths(k) for k in key)
    return not isinstance(key, Path) or key.resolve().is_relative_to(ROOT)


def _remembered(
    fn: Callable[..., Any], key_of: Callable[..., Hashable | None], fresh: Callable[[Any], Any]
) -> Callable[..., Any]:
    """fn, computed once per key (None: not remembered); ``fresh`` copies what a caller gets."""
    done: dict[Hashable, Any] = {}

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        key = key_of(*args, **kwargs)
        if key is None or not _repo_paths(key):
            return fn(*args, **kwargs)
        if key not in done:
            done[key] = fn(*args, **kwargs)
        return fresh(done[key])

    return call


def _calibration_key(data_dir: Path, measurements: Path, inference: Path) -> Hashable:
    return (Path(data_dir), Path(measurements), Path(inference))


def _heldout_key(
    data_dir: Path,
    files: list[Path] | None = None,
    calibration: object | None = None,
    app_bands: bool = False,
) -> Hashable | None:
    if calibration is not None:  # a calibration object has no stable key: always computed
        return None
    return (Path(data_dir), None if files is None else tuple(map(Path, files)), app_bands)


def _fresh_heldout(out: tuple[list[Any], dict[str, list[str]]]) -> Any:
    rows, skipped = out
    return [copy.copy(r) for r in rows], {k: list(v) for k, v in skipped.items()}


@pytest.fixture(scope="session")
def accuracy() -> ModuleType:
    mod = load_benchmark("accuracy.py", "bench_accuracy")
    # the module's own functions look these names up at call time: they share the memo too
    mod.calibration_rows = _remembered(mod.calibration_rows, _calibration_key, list)  # type: ignore[attr-defined]
    mod.evaluate_heldout = _remembered(mod.evaluate_heldout, _heldout_key, _fresh_heldout)  # type: ignore[attr-defined]
    return mod

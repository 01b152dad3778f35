"""The accuracy harness lives in benchmarks/accuracy.py (a script people run); the tests
load it as a module so the floors they hold are computed by the same code."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def accuracy() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_accuracy", ROOT / "benchmarks" / "accuracy.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod

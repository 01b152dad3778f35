"""The accuracy harness lives in benchmarks/accuracy.py (a script people run); the tests
load it as a module so the floors they hold are computed by the same code."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.support import load_benchmark


@pytest.fixture(scope="session")
def accuracy() -> ModuleType:
    return load_benchmark("accuracy.py", "bench_accuracy")

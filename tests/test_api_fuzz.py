"""Schemathesis against /openapi.json: every documented operation, fed generated valid and
invalid input (a bounded number of examples each, derandomized so CI is repeatable), on
SQLite and PostgreSQL, never answers 5xx."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from app.config import Settings
from app.main import create_app

EXAMPLES_PER_OPERATION = 8
# Benchmark runs started by the fuzzer must not run the real benchmark: a stand-in that
# fails at once exercises the same job-runner paths.
FAILING_BENCH = [sys.executable, "-c", "import sys; sys.exit(3)"]


def _openapi_document() -> dict:
    # Only the document: no database is touched (nothing migrates, nothing connects).
    app = create_app(
        Settings(database_url="sqlite://", migrate_on_start=False, seed_on_start=False)
    )
    document = app.openapi()
    app.state.engine.dispose()
    return document


schema = schemathesis.openapi.from_dict(_openapi_document())


@pytest.fixture
def fuzzed_app(settings: Settings) -> Iterator[FastAPI]:
    """The app under test, on this backend's freshly seeded database."""
    app = create_app(settings.model_copy(update={"bench_command": FAILING_BENCH}))
    yield app
    app.state.engine.dispose()


@schema.parametrize()
@hypothesis_settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_operation_answers_5xx(
    case: schemathesis.Case, fuzzed_app: FastAPI, admin: dict[str, str]
) -> None:
    # a generous read timeout: this test is about 5xx answers, not latency (benchmarks/ time
    # the service), and a first request on a loaded two-core machine warms the whole catalog
    response = case.call(app=fuzzed_app, headers=admin, timeout=60)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} -> {response.status_code}\n"
        f"{case.as_curl_command()}\n{response.text[:1000]}"
    )

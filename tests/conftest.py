"""Shared fixtures: a real database per test (SQLite always, PostgreSQL when
GPU_ADVISOR_TEST_DATABASE_URL is set) and an app built by create_app(settings)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.config import Settings
from app.main import create_app

ROOT = Path(__file__).resolve().parent.parent
ADMIN_TOKEN = "test-admin-token"
PG_URL = os.environ.get("GPU_ADVISOR_TEST_DATABASE_URL")


def _backends() -> list[str]:
    return ["sqlite", "postgres"] if PG_URL else ["sqlite"]


def _reset_postgres(url: str) -> str:
    parsed = make_url(url)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    engine = create_engine(parsed)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return parsed.render_as_string(hide_password=False)


@pytest.fixture(params=_backends())
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        assert PG_URL is not None
        return _reset_postgres(PG_URL)
    return f"sqlite:///{tmp_path / 'test.db'}"


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=database_url,
        admin_token=ADMIN_TOKEN,
        data_dir=ROOT / "data",
        bench_jobs_dir=tmp_path / "jobs",
    )


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    app = create_app(settings)
    with TestClient(app) as c:
        yield c
    app.state.engine.dispose()


@pytest.fixture
def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}

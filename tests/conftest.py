"""Shared fixtures: a real database per test (SQLite always, PostgreSQL when
GPU_ADVISOR_TEST_DATABASE_URL is set) and an app built by create_app(settings).

``database_url`` is an empty database. ``settings`` (and so ``client``) get a database
already migrated and seeded: each backend is migrated and seeded once per session into a
template (a SQLite file; a PostgreSQL database named ``<your database>_template``) that
every test copies (a file copy; ``CREATE DATABASE ... TEMPLATE``), so create_app finds
the schema at head and the shipped data seeded and has nothing to do."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError

from app.config import Settings
from app.main import create_app, prepare_database

ROOT = Path(__file__).resolve().parent.parent
ADMIN_TOKEN = "test-admin-token"
PG_URL = os.environ.get("GPU_ADVISOR_TEST_DATABASE_URL")


def _backends() -> list[str]:
    return ["sqlite", "postgres"] if PG_URL else ["sqlite"]


def _pg_url() -> URL:
    assert PG_URL is not None
    parsed = make_url(PG_URL)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def _render(url: URL) -> str:
    return url.render_as_string(hide_password=False)


def _reset_postgres(url: str) -> str:
    parsed = make_url(url)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    engine = create_engine(parsed)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return _render(parsed)


def _seed_into(url: str) -> None:
    prepare_database(Settings(database_url=url, data_dir=ROOT / "data"))


class _PgTemplate:
    """``<db>_template``, migrated and seeded once; each test's database is re-created
    from it. Without the right to create databases, tests migrate and seed in place."""

    def __init__(self) -> None:
        self.url = _pg_url()
        assert self.url.database
        self.name = self.url.database
        self.template = f"{self.name}_template"
        self.admin = create_engine(self.url.set(database="postgres"), isolation_level="AUTOCOMMIT")
        self.available = True
        try:
            with self.admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{self.template}" WITH (FORCE)'))
                conn.execute(text(f'CREATE DATABASE "{self.template}"'))
        except DBAPIError:
            self.available = False
            return
        _seed_into(_render(self.url.set(database=self.template)))

    def fresh_copy(self) -> str:
        if not self.available:
            url = _reset_postgres(_render(self.url))
            _seed_into(url)
            return url
        with self.admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{self.name}" TEMPLATE "{self.template}"'))
        return _render(self.url)

    def close(self) -> None:
        if self.available:
            with self.admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{self.template}" WITH (FORCE)'))
        self.admin.dispose()


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "seeded.db"
    _seed_into(f"sqlite:///{path}")
    with sqlite3.connect(path) as conn:  # fold the WAL into the file, so a copy is whole
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    return path


@pytest.fixture(scope="session")
def _pg_template() -> Iterator[_PgTemplate]:
    template = _PgTemplate()
    yield template
    template.close()


@pytest.fixture(params=_backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def database_url(backend: str, tmp_path: Path) -> str:
    """An empty database (no tables)."""
    if backend == "postgres":
        assert PG_URL is not None
        return _reset_postgres(PG_URL)
    return f"sqlite:///{tmp_path / 'test.db'}"


@pytest.fixture
def seeded_database_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A database at the schema head with the shipped catalog seeded, fresh for this test."""
    if backend == "postgres":
        template: _PgTemplate = request.getfixturevalue("_pg_template")
        return template.fresh_copy()
    source: Path = request.getfixturevalue("_sqlite_template")
    target = tmp_path / "test.db"
    shutil.copyfile(source, target)
    return f"sqlite:///{target}"


@pytest.fixture
def settings(seeded_database_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=seeded_database_url,
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

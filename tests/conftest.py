"""Shared fixtures: a real database (SQLite always, PostgreSQL when
GPU_ADVISOR_TEST_DATABASE_URL is set) and an app built by create_app(settings).

``database_url`` is an empty database. ``settings`` (and so ``client``) get a database
already migrated and seeded, fresh for each test and on each backend: use them where a test
writes or exercises the database code. Each backend is migrated and seeded once per session
(per xdist worker) into a template (a SQLite file; a PostgreSQL database named
``<your database>_template``) that every test copies (a file copy; ``CREATE DATABASE ...
TEMPLATE``), so create_app finds the schema at head and the shipped data seeded.

``read_client`` is one app per test module on a SQLite copy of the template, for tests that
only read (pages, API answers): nothing they do changes what the next test sees, and the
database code they pass through is run on both backends by the tests that write.
``shipped_catalog`` is the shipped catalog, offers and rules as the engine takes them, read
once per session, for engine tests that need no app at all."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError

from app.catalog.service import all_specs
from app.config import Settings
from app.db import make_engine, make_session_factory, session_scope
from app.domain.compat import Rules
from app.domain.cost import GpuOffers
from app.domain.gpu import GpuSpec
from app.main import create_app, prepare_database
from app.offers.service import gpu_offers
from app.shipped.rules import load_rules

ROOT = Path(__file__).resolve().parent.parent
ADMIN_TOKEN = "test-admin-token"
PG_URL = os.environ.get("GPU_ADVISOR_TEST_DATABASE_URL")
# pytest-xdist runs each worker in its own process: each needs its own PostgreSQL databases.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def _backends() -> list[str]:
    return ["sqlite", "postgres"] if PG_URL else ["sqlite"]


def _pg_url() -> URL:
    """The test database, suffixed with the xdist worker's id when there is one."""
    assert PG_URL is not None
    parsed = make_url(PG_URL)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if WORKER and parsed.database:
        parsed = parsed.set(database=f"{parsed.database}_{WORKER}")
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
            _ensure_database(self.url)
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


def _ensure_database(url: URL) -> None:
    """Creates an xdist worker's database when it is missing (the one named in
    GPU_ADVISOR_TEST_DATABASE_URL is the caller's to create)."""
    if not WORKER:
        return
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        found = conn.execute(
            text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": url.database}
        ).first()
        if found is None:
            conn.execute(text(f'CREATE DATABASE "{url.database}"'))
    admin.dispose()


@pytest.fixture(scope="session")
def _pg_database() -> str:
    url = _pg_url()
    _ensure_database(url)
    return _render(url)


@pytest.fixture
def database_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """An empty database (no tables)."""
    if backend == "postgres":
        return _reset_postgres(request.getfixturevalue("_pg_database"))
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


def _settings(database_url: str, jobs_dir: Path) -> Settings:
    return Settings(
        database_url=database_url,
        admin_token=ADMIN_TOKEN,
        data_dir=ROOT / "data",
        bench_jobs_dir=jobs_dir,
    )


@pytest.fixture
def settings(seeded_database_url: str, tmp_path: Path) -> Settings:
    return _settings(seeded_database_url, tmp_path / "jobs")


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """An app on a fresh seeded database of this test's own, on each backend."""
    app = create_app(settings)
    with TestClient(app) as c:
        yield c
    app.state.engine.dispose()


@pytest.fixture(scope="module")
def read_settings(_sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings on a SQLite copy of the seeded template shared by one test module."""
    folder = tmp_path_factory.mktemp("read")
    target = folder / "read.db"
    shutil.copyfile(_sqlite_template, target)
    return _settings(f"sqlite:///{target}", folder / "jobs")


@pytest.fixture(scope="module")
def read_client(read_settings: Settings) -> Iterator[TestClient]:
    """One app per test module, for tests that only read: a test that writes (an edit, an
    upload, a run) or changes the app takes ``client``."""
    app = create_app(read_settings)
    with TestClient(app) as c:
        yield c
    app.state.engine.dispose()


@pytest.fixture(scope="session")
def shipped_catalog(_sqlite_template: Path) -> tuple[list[GpuSpec], Mapping[str, GpuOffers], Rules]:
    """The shipped GPUs, their offers and the rules, as the engine takes them: read once
    from the seeded template, through the same code the app reads them with."""
    engine = make_engine(f"sqlite:///{_sqlite_template}")
    with session_scope(make_session_factory(engine)) as session:
        catalog = all_specs(session), gpu_offers(session), load_rules(ROOT / "data")
    engine.dispose()
    return catalog


@pytest.fixture
def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}

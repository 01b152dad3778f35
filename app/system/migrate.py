"""Run Alembic migrations and the catalog seed from code, under a lock.

`gpu-advisor db upgrade` (run once by `make run` and by the container's entrypoint), `serve`
on a database that is not at head, and tests all come through ``prepare``. Two processes
starting at once take turns: SQLite through an exclusive lock on a file next to the
database, PostgreSQL through a session advisory lock; the second finds the work done.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from app.config import Settings
from app.shipped.paths import shipped_path

# Any constant shared by every process of this application; "gpu-adv" in ASCII.
_ADVISORY_KEY = 0x6770752D616476


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(shipped_path("migrations")))
    return cfg


def head_revision() -> str | None:
    """The newest revision this code ships (exactly one head is kept)."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None for an empty database)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    cfg = alembic_config()
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, revision)


def upgrade_if_needed(engine: Engine) -> bool:
    """Upgrade to head unless the database is there already; True if it migrated."""
    if current_revision(engine) == head_revision():
        return False
    upgrade(engine)
    return True


@contextlib.contextmanager
def database_lock(engine: Engine) -> Iterator[None]:
    """Hold the database-wide lock for schema changes and seeding."""
    url = make_url(str(engine.url))
    if url.get_backend_name() == "sqlite":
        database = url.database or ""
        if not database or database == ":memory:":
            yield
            return
        lock_path = Path(database).with_name(Path(database).name + ".lock")
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with lock_path.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
        return
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _ADVISORY_KEY})
        conn.commit()
        try:
            yield
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _ADVISORY_KEY})
            conn.commit()


def prepare(settings: Settings, *, migrate_schema: bool = True, seed: bool = True,
            revision: str = "head") -> None:  # fmt: skip
    """Migrate to ``revision`` and load the shipped catalog, once, under the lock."""
    from app.catalog.loader import seed_if_changed
    from app.db import make_engine, make_session_factory, session_scope
    from app.offers.loader import seed as seed_offers

    engine = make_engine(settings.database_url, pool_size=1)
    try:
        with database_lock(engine):
            # Each step only when needed: the second of two processes starting at once
            # finds the schema at head and the shipped data's fingerprint stored.
            if migrate_schema:
                if revision == "head":
                    upgrade_if_needed(engine)
                else:
                    upgrade(engine, revision)
            if seed:
                with session_scope(make_session_factory(engine)) as session:
                    seeded = seed_if_changed(session, settings.data_dir, current_revision(engine))
                    if seeded is not None:  # the shipped data changed: offers with it
                        seed_offers(session, settings.data_dir)
    finally:
        engine.dispose()

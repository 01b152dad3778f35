"""Run Alembic migrations from code: `gpu-advisor db upgrade`, `serve` and tests."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from app.resources import shipped_path


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

"""Run Alembic migrations from code: `gpu-advisor db upgrade`, `serve` and tests."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

from app.resources import shipped_path


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(shipped_path("migrations")))
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    cfg = alembic_config()
    with engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.upgrade(cfg, revision)

"""`serve` (prepare_database) migrates and seeds only when something changed: the schema
head or the shipped data files."""

from __future__ import annotations

import shutil
from pathlib import Path

import sqlalchemy as sa

from app.config import Settings
from app.db import make_engine
from app.main import prepare_database
from app.shipped.paths import shipped_path
from app.system import migrate


def _name(engine: sa.Engine, slug: str) -> str:
    with engine.connect() as conn:
        return str(
            conn.execute(sa.text("SELECT name FROM gpus WHERE slug = :s"), {"s": slug}).scalar_one()
        )


def _rename(engine: sa.Engine, slug: str, name: str) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE gpus SET name = :n WHERE slug = :s"), {"n": name, "s": slug})


def test_prepare_reseeds_only_when_shipped_data_changes(database_url: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(shipped_path("data"), data)
    settings = Settings(database_url=database_url, data_dir=data)
    engine = make_engine(database_url)
    prepare_database(settings)
    assert migrate.current_revision(engine) == migrate.head_revision()
    shipped_name = _name(engine, "h100-sxm")

    # Same data, schema at head: nothing is re-seeded (a seed would restore the name).
    _rename(engine, "h100-sxm", "changed behind the loader's back")
    prepare_database(settings)
    assert _name(engine, "h100-sxm") == "changed behind the loader's back"

    # Any shipped data file changes -> seed again.
    readme = data / "README.md"
    readme.write_text(readme.read_text() + "\nOne more line.\n")
    prepare_database(settings)
    assert _name(engine, "h100-sxm") == shipped_name
    engine.dispose()


def test_upgrade_if_needed_skips_a_database_at_head(database_url: str) -> None:
    engine = make_engine(database_url)
    assert migrate.current_revision(engine) is None
    assert migrate.upgrade_if_needed(engine) is True
    assert migrate.upgrade_if_needed(engine) is False
    assert migrate.current_revision(engine) == migrate.head_revision()
    engine.dispose()

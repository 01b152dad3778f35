"""Imports every ORM module so Base.metadata is complete (Alembic, tests)."""

from __future__ import annotations


def import_all_models() -> None:
    import app.catalog.models
    import app.reports.models  # noqa: F401  (both register tables on Base.metadata)

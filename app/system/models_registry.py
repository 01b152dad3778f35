"""Imports every ORM module so Base.metadata is complete (Alembic, tests)."""

from __future__ import annotations


def import_all_models() -> None:
    import app.catalog.models
    import app.offers.models
    import app.reports.models
    import app.system.state  # noqa: F401  (each registers tables on Base.metadata)

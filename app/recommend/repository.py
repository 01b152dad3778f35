"""The recommender's reads that span features: whether the catalog, the offers or the
device reports changed, in one query per request (each feature keeps its own cache)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.catalog import repository as catalog
from app.offers import repository as offers
from app.reports import repository as reports


@dataclass(frozen=True, slots=True)
class Stamps:
    catalog: tuple[Any, ...]
    offers: tuple[Any, ...]
    reports: tuple[Any, ...]


def input_stamps(session: Session) -> Stamps:
    parts = (catalog.stamp_columns(), offers.stamp_columns(), reports.stamp_columns())
    row = tuple(session.execute(select(*parts[0], *parts[1], *parts[2])).one())
    a, b = len(parts[0]), len(parts[0]) + len(parts[1])
    return Stamps(row[:a], row[a:b], row[b:])

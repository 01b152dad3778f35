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


_PARTS = (catalog.stamp_columns(), offers.stamp_columns(), reports.stamp_columns())
# Built once: building this statement cost twice as much as running it.
_STAMPS = select(*_PARTS[0], *_PARTS[1], *_PARTS[2])
_A, _B = len(_PARTS[0]), len(_PARTS[0]) + len(_PARTS[1])


def input_stamps(session: Session) -> Stamps:
    # the Core statement on the session's connection: the ORM's execute path cost a third more
    row = tuple(session.connection().execute(_STAMPS).one())
    return Stamps(row[:_A], row[_A:_B], row[_B:])

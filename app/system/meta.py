"""What GET /api/v1/meta says of the data: how much, and how recent."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.catalog import service as catalog
from app.offers import repository as offers


def offers_as_of(session: Session) -> str | None:
    """The newest date any stored offer (cloud or purchase) carries."""
    return offers.newest_as_of(session)


def dates(session: Session) -> tuple[str | None, str | None, str | None]:
    """(newest of both, the catalog's newest price date, the offers' newest date): the
    catalog's own price fields lag the offers, which a refresh of the price files renews."""
    catalog_as_of = catalog.data_as_of(session)
    offers = offers_as_of(session)
    known = [d for d in (catalog_as_of, offers) if d]
    return (max(known) if known else None), catalog_as_of, offers

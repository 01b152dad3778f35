"""Small facts the service keeps about itself in the database (table ``app_state``),
such as the fingerprint of the shipped data it last seeded. ORM row and all its SQL."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, String, Text, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from app.db import Base


class AppStateRow(Base):
    __tablename__ = "app_state"

    key: Mapped[str] = mapped_column(String(80), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


def get(session: Session, key: str) -> str | None:
    return session.scalar(select(AppStateRow.value).where(AppStateRow.key == key))


def put(session: Session, key: str, value: str) -> None:
    row = session.get(AppStateRow, key)
    now = datetime.now(UTC)
    if row is None:
        session.add(AppStateRow(key=key, value=value, updated_at=now))
    else:
        row.value, row.updated_at = value, now
    session.flush()

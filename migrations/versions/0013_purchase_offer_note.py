"""purchase_offers.note: the data's caveat on a price (purchase.yaml ``note``)

A price read from one listing, qualification samples or a figure its source says to treat
loosely carries that caveat to wherever it is paid (``buy_at.note``, a row's buy cost). Null
where the data says nothing.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("purchase_offers", sa.Column("note", sa.String(300), nullable=True))


def downgrade() -> None:
    op.drop_column("purchase_offers", "note")

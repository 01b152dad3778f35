"""gpus.cooling: how a card is cooled as sold (passive | active | liquid)

A passively cooled datacenter card has no fan: it needs a server chassis's forced airflow, and a
row that buys one says so (app.domain.compat.cooling_caveat). Null where no source states it.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("gpus", sa.Column("cooling", sa.String(10), nullable=True))


def downgrade() -> None:
    op.drop_column("gpus", "cooling")

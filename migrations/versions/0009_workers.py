"""workers: each benchmark worker says it is alive

A worker writes its row every few seconds (label, host, backend, the run it is on), so the
device page can say whether anyone will take a run before the user starts one.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("label", sa.String(100), primary_key=True),
        sa.Column("host", sa.String(200), nullable=False),
        sa.Column("backend", sa.String(20), nullable=False),
        sa.Column("device_name", sa.String(200)),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("run_id", sa.String(36)),
    )


def downgrade() -> None:
    op.drop_table("workers")

"""gpus.sm_count: streaming multiprocessors / compute units per GPU

The operator engine spreads a kernel's output tiles over the GPU's SMs a wave at a time
(app.domain.kernels.wave_fill); the catalog now carries the count where a source states it.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("gpus", sa.Column("sm_count", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("gpus", "sm_count")

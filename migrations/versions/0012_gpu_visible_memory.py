"""gpus.visible_memory_mib: device memory CUDA reports as the total a process can use

The vendor's "24 GB" is 24 GiB of DRAM, but with ECC on (the datacenter default for GDDR parts)
and what the driver keeps back, CUDA reports less (an L4: 22.03 GiB). efficiency.usable_gb
starts from this figure where the catalog has a source. Null where none: the vendor GiB.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("gpus", sa.Column("visible_memory_mib", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("gpus", "visible_memory_mib")

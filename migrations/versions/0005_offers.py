"""offers: cloud instances and purchase prices

Revision ID: 0005
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cloud_offers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("gpu_slug", sa.String(length=80), nullable=False),
        sa.Column("provider", sa.String(length=80), nullable=False),
        sa.Column("instance_type", sa.String(length=200), nullable=False),
        sa.Column("accelerator", sa.String(length=80), nullable=True),
        sa.Column("gpus", sa.Integer(), nullable=False),
        sa.Column("vcpus", sa.Float(), nullable=True),
        sa.Column("ram_gb", sa.Float(), nullable=True),
        sa.Column("usd_per_hour", sa.Float(), nullable=False),
        sa.Column("spot_usd_per_hour", sa.Float(), nullable=True),
        sa.Column("tier", sa.String(length=20), nullable=False),
        sa.Column("regions", sa.Integer(), nullable=True),
        sa.Column("as_of", sa.String(length=10), nullable=False),
        sa.Column("source", sa.String(length=300), nullable=False),
        sa.Column("origin", sa.String(length=10), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("provider", "instance_type", name="uq_cloud_offer"),
    )
    with op.batch_alter_table("cloud_offers") as batch:
        batch.create_index("ix_cloud_offers_gpu_slug", ["gpu_slug"], unique=False)
        batch.create_index("ix_cloud_offers_provider", ["provider"], unique=False)
        batch.create_index("ix_cloud_offers_usd_per_hour", ["usd_per_hour"], unique=False)
    op.create_table(
        "purchase_offers",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("gpu_slug", sa.String(length=80), nullable=False),
        sa.Column("condition", sa.String(length=10), nullable=False),
        sa.Column("usd", sa.Float(), nullable=False),
        sa.Column("as_of", sa.String(length=10), nullable=False),
        sa.Column("source", sa.String(length=300), nullable=False),
        sa.Column("origin", sa.String(length=10), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("gpu_slug", "condition", "source", name="uq_purchase_offer"),
    )
    with op.batch_alter_table("purchase_offers") as batch:
        batch.create_index("ix_purchase_offers_gpu_slug", ["gpu_slug"], unique=False)


def downgrade() -> None:
    op.drop_table("purchase_offers")
    op.drop_table("cloud_offers")

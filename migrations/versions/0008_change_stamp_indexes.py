"""indexes on updated_at for the per-request change stamps

The recommender reads, on every request, whether the catalog or the offers changed: row
count, max id and max updated_at per table. Without an index max(updated_at) and the count
scan the tables (1.3 ms with a 1,070-GPU catalog on SQLite; 0.07 ms with these indexes).

Revision ID: 0008
Revises: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0004"
branch_labels = None
depends_on = None

TABLES = ("gpus", "cloud_offers", "purchase_offers")


def upgrade() -> None:
    for table in TABLES:
        op.create_index(f"ix_{table}_updated_at", table, ["updated_at"])


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(f"ix_{table}_updated_at", table_name=table)

"""idempotent uploads, catalog tombstones, benchmark runs on workers

Revision ID: 0004
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("device_reports") as batch:
        batch.add_column(sa.Column("idempotency_key", sa.String(200), nullable=True))
        batch.add_column(sa.Column("content_sha256", sa.String(64), nullable=True))
        batch.create_unique_constraint("uq_device_reports_idempotency_key", ["idempotency_key"])
    op.create_table(
        "catalog_tombstones",
        sa.Column("slug", sa.String(80), primary_key=True),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=False),
    )
    with op.batch_alter_table("benchmark_runs") as batch:
        batch.add_column(sa.Column("label", sa.String(100), nullable=True))
        batch.add_column(sa.Column("worker", sa.String(100), nullable=True))
        batch.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("cancel_requested", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("timeout_s", sa.Float(), nullable=True))
        batch.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
    # One queued-or-running run per worker label, in every process on every host.
    active = sa.text("status IN ('queued', 'running')")
    op.create_index(
        "uq_benchmark_runs_active_label",
        "benchmark_runs",
        ["label"],
        unique=True,
        sqlite_where=active,
        postgresql_where=active,
    )


def downgrade() -> None:
    op.drop_index("uq_benchmark_runs_active_label", table_name="benchmark_runs")
    with op.batch_alter_table("benchmark_runs") as batch:
        for name in (
            "attempts",
            "timeout_s",
            "cancel_requested",
            "heartbeat_at",
            "worker",
            "label",
        ):
            batch.drop_column(name)
    op.drop_table("catalog_tombstones")
    with op.batch_alter_table("device_reports") as batch:
        batch.drop_constraint("uq_device_reports_idempotency_key", type_="unique")
        batch.drop_column("content_sha256")
        batch.drop_column("idempotency_key")

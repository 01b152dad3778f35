"""device reports: store the headline figures

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from pydantic import ValidationError

from app.bench.report import BenchReport

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("device_reports") as batch:
        batch.add_column(sa.Column("headline", sa.JSON(), nullable=True))
    reports = sa.table(
        "device_reports",
        sa.column("id", sa.Integer),
        sa.column("report", sa.JSON),
        sa.column("headline", sa.JSON),
    )
    conn = op.get_bind()
    for row in conn.execute(sa.select(reports.c.id, reports.c.report)).all():
        try:
            headline = BenchReport.model_validate(row.report).summary_measured()
        except ValidationError:
            headline = {}
        conn.execute(reports.update().where(reports.c.id == row.id).values(headline=headline))
    with op.batch_alter_table("device_reports") as batch:
        batch.alter_column("headline", existing_type=sa.JSON(), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("device_reports") as batch:
        batch.drop_column("headline")

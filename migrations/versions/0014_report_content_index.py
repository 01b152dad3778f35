"""device_reports.content_sha256 indexed: an upload looks its content up to answer a report the
server already holds with its first copy (app/reports/repository.report_by_content).

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_device_reports_content_sha256", "device_reports", ["content_sha256"])


def downgrade() -> None:
    op.drop_index("ix_device_reports_content_sha256", table_name="device_reports")

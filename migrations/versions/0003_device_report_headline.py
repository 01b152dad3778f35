"""device reports: store the headline figures

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

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
        headline = _headline(row.report)
        conn.execute(reports.update().where(reports.c.id == row.id).values(headline=headline))
    with op.batch_alter_table("device_reports") as batch:
        batch.alter_column("headline", existing_type=sa.JSON(), nullable=False)


# Frozen here on purpose: what BenchReport.summary_measured() computed when this revision
# was written, over the stored JSON as it was then. Migrations never import live code,
# which may change or disappear after them.
_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8")


def _ok_value(figure: Any) -> float | None:
    if not isinstance(figure, dict) or figure.get("status", "ok") != "ok":
        return None
    value = figure.get("value")
    return float(value) if isinstance(value, int | float) else None


def _headline(report: Any) -> dict[str, float]:
    """Best native matmul TFLOPS per precision and best memory bandwidth (GB/s)."""
    if not isinstance(report, dict):
        return {}
    out: dict[str, float] = {}
    by_precision = (report.get("matmul") or {}).get("by_precision") or {}
    for precision in _PRECISIONS:
        summary = by_precision.get(precision)
        if isinstance(summary, dict) and summary.get("native"):
            value = _ok_value(summary.get("best"))
            if value is not None:
                out[precision] = value
    bandwidth = _ok_value((report.get("memory") or {}).get("best"))
    if bandwidth is not None:
        out["bandwidth_gbs"] = bandwidth
    return out


def downgrade() -> None:
    with op.batch_alter_table("device_reports") as batch:
        batch.drop_column("headline")

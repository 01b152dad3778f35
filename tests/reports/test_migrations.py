"""Schema changes keep what is stored: a report stored before the headline column existed
gets its headline when the database is upgraded."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import sqlalchemy as sa

from app.db import make_engine
from app.system.migrate import upgrade
from tests.reports.factory import gpu_report


def test_upgrade_backfills_report_headlines(database_url: str) -> None:
    engine = make_engine(database_url)
    upgrade(engine, "0002")
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO device_reports (created_at, device_name, backend, gpu_slug, profile,"
                " schema_version, origin, size_bytes, report) VALUES (:t, 'NVIDIA H100 80GB HBM3',"
                " 'cuda', 'h100-sxm', 'quick', 1, 'upload', 10, :r)"
            ),
            {"t": datetime.now(UTC), "r": json.dumps(gpu_report(bf16=700.0, bandwidth=3000.0))},
        )
    upgrade(engine)
    with engine.connect() as conn:
        headline = conn.execute(sa.text("SELECT headline FROM device_reports")).scalar_one()
    engine.dispose()
    if isinstance(headline, str):  # SQLite hands JSON back as text through a raw query
        headline = json.loads(headline)
    assert headline == {"bf16": 700.0, "fp32": 51.0, "bandwidth_gbs": 3000.0}

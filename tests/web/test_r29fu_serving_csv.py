"""A serving question's CSV carries the figures its page shows on each row: the whole-hour
$ per million output tokens on the row's price basis, TTFT and ITL at the load, and what the
weights and the KV cache are stored as (the export had none of them)."""

from __future__ import annotations

import csv
import io

from fastapi.testclient import TestClient

from app.domain.serving import weights_name
from app.web.question_pages import CSV_COLUMNS, _csv_number

SERVING_Q = "preset=llama-3.1-8b&task=serving&concurrent_requests=16&acquisition=either"
SERVING_COLUMNS = (
    "usd_per_million_output_blended", "price_basis", "ttft_ms", "ttft_p95_ms", "itl_ms",
    "itl_p95_ms", "weight_format", "kv_cache_precision",
)  # fmt: skip


def _cell(value: object) -> str:
    if value is None:
        return ""
    return str(_csv_number(value)) if isinstance(value, float) else str(value)


def test_the_serving_columns_come_after_every_older_one() -> None:
    # an encoder's own columns (tests/web/test_r38enc3_encoder_csv_chart.py) follow them
    at = CSV_COLUMNS.index(SERVING_COLUMNS[0])
    assert CSV_COLUMNS[at : at + len(SERVING_COLUMNS)] == SERVING_COLUMNS
    assert CSV_COLUMNS.index("per_usd_unit") < CSV_COLUMNS.index(SERVING_COLUMNS[0])


def test_each_serving_row_carries_the_pages_figures(read_client: TestClient) -> None:
    text = read_client.get(f"/recommendations.csv?{SERVING_Q}").text
    rows = list(csv.DictReader(io.StringIO(text)))
    recs = read_client.get(f"/recommendations.json?{SERVING_Q}").json()["recommendations"]
    assert rows and len(rows) == len(recs)
    for row, rec in zip(rows, recs, strict=True):
        sv = rec["serving"]
        assert row["usd_per_million_output_blended"] == _cell(
            sv["usd_per_million_output_tokens_blended"]
        )
        assert row["price_basis"] == _cell(sv["price_basis"])
        for name in ("ttft_ms", "ttft_p95_ms", "itl_ms", "itl_p95_ms"):
            assert row[name] == _cell(sv[name]), name
        assert row["weight_format"] == weights_name(sv["weight_precision"], sv["weight_format"])
        assert row["kv_cache_precision"] == sv["kv_cache_precision"]
    assert any(row["usd_per_million_output_blended"] for row in rows)
    assert all(row["ttft_ms"] and row["itl_ms"] for row in rows)


def test_other_tasks_leave_the_serving_columns_empty(read_client: TestClient) -> None:
    text = read_client.get("/recommendations.csv?preset=resnet-50&task=training").text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows
    assert all(row[name] == "" for row in rows for name in SERVING_COLUMNS)

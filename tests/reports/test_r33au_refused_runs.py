"""r33au: a benchmark run refused for its body (an unknown profile or device, an empty or
over-long label, a field the run does not take, a body that is not an object) is a 422 naming
the field and leaves no run row behind, on either database."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.reports.models import BenchmarkRunRow
from tests.support import stored_rows


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"profile": "nope"}, "profile"),
        ({"device": "tpu:0"}, "device"),
        ({"label": ""}, "label"),
        ({"label": "x" * 500}, "label"),
        ({"profile": "quick", "extra": 1}, "extra"),
        ([], "body"),
    ],
)
def test_a_refused_run_writes_nothing(
    client: TestClient, settings: Settings, body: Any, field: str
) -> None:
    r = client.post("/api/v1/benchmark-runs", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == field
    assert stored_rows(settings.database_url, BenchmarkRunRow) == 0

"""r33au: two uploads of the same report at once, without an Idempotency-Key, store it once.
Each had checked for a stored copy before validating (the costly part) and inserted after,
so both found none and both stored it: one machine counted twice in the pooled calibration,
the very thing the content check exists to stop. The check is repeated under the write lock.
And an upload refused part-way (a figure above the card's peak, a body cut short) leaves no
row behind."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from fastapi.testclient import TestClient

from app.config import Settings
from app.reports.models import DeviceReportRow
from tests.reports.factory import gpu_report
from tests.support import stored_rows

JSON = {"content-type": "application/json"}


def test_concurrent_uploads_of_one_report_store_it_once(
    client: TestClient, settings: Settings
) -> None:
    body = json.dumps(gpu_report()).encode()

    def post(_: int) -> tuple[int, int, bool]:
        r = client.post("/api/v1/device-reports", content=body, headers=JSON)
        return r.status_code, int(r.json()["id"]), bool(r.json().get("duplicate"))

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(post, range(16)))
    assert {rid for _, rid, _ in answers} == {answers[0][1]}, answers
    assert sorted(code for code, _, _ in answers) == [200] * 15 + [201], answers
    assert sum(dup for _, _, dup in answers) == 15
    assert stored_rows(settings.database_url, DeviceReportRow) == 1


def test_a_refused_upload_leaves_no_row(client: TestClient, settings: Settings) -> None:
    too_fast = gpu_report(bf16=5000.0)  # above the H100's peak: refused after matching
    assert client.post("/api/v1/device-reports", json=too_fast).status_code == 422
    cut = json.dumps(gpu_report()).encode()[:-40]
    assert client.post("/api/v1/device-reports", content=cut, headers=JSON).status_code == 422
    assert stored_rows(settings.database_url, DeviceReportRow) == 0

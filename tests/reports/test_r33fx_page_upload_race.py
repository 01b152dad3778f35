"""r33fx: the upload page stores through the same function as the API, under the same lock
with the same re-check. It had called a path of its own that looked for a stored copy before
validating and inserted after, with no lock: two uploads of one report through the form at
once both stored it (one machine counted twice in the pooled calibration)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from fastapi.testclient import TestClient

from app.config import Settings
from app.reports.models import DeviceReportRow
from tests.reports.factory import gpu_report
from tests.support import stored_rows


def test_concurrent_page_uploads_of_one_report_store_it_once(
    client: TestClient, settings: Settings
) -> None:
    body = json.dumps(gpu_report())

    def post(_: int) -> tuple[int, str]:
        r = client.post(
            "/device/reports",
            files={"report": ("r.json", body, "application/json")},
            follow_redirects=False,
        )
        return r.status_code, r.headers.get("location", r.text[:200])

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(post, range(16)))
    # every upload is sent to the one stored copy
    assert {a for a in answers} == {(303, answers[0][1])}, answers
    assert stored_rows(settings.database_url, DeviceReportRow) == 1

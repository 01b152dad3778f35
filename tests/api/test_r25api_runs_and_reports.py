"""Benchmark runs and workers are pages as every list is; a run for a label no worker ever
reported is queued with a warning; a cancelled queued run no longer waits; device reports
are strict at the top and capped, and still take what `gpu-advisor bench` writes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from app.bench.report import BenchReport
from app.db import write_scope
from app.reports import repository
from tests.reports.factory import gemm_point, gpu_report, v2_report


def test_benchmark_runs_and_workers_are_pages(client: TestClient) -> None:
    ids = []
    for label in ("a1", "a2", "a3"):
        r = client.post("/api/v1/benchmark-runs", json={"label": label})
        assert r.status_code == 202, r.text
        ids.append(r.json()["id"])
    page = client.get("/api/v1/benchmark-runs?limit=2&offset=1").json()
    assert (page["total"], page["limit"], page["offset"]) == (3, 2, 1)
    assert len(page["items"]) == 2
    every = [r["id"] for r in client.get("/api/v1/benchmark-runs").json()["items"]]
    assert sorted(every) == sorted(ids)
    assert [r["id"] for r in page["items"]] == every[1:3]
    workers = client.get("/api/v1/workers?limit=5").json()
    assert workers == {"total": 0, "limit": 5, "offset": 0, "items": []}


def test_a_run_no_worker_can_take_is_queued_with_a_warning(client: TestClient) -> None:
    r = client.post("/api/v1/benchmark-runs", json={"label": "nobody-here"})
    assert r.status_code == 202, r.text
    run = r.json()
    assert run["status"] == "queued"
    assert "nobody-here" in run["warning"] and "no worker" in run["warning"]
    # cancelled before any worker took it: the step no longer says it waits for one
    cancelled = client.delete(f"/api/v1/benchmark-runs/{run['id']}").json()
    assert cancelled["status"] == "cancelled"
    assert "waiting" not in cancelled["step"] and "cancelled" in cancelled["step"]
    assert cancelled["step_label"] == "Cancelled"


def test_a_run_for_a_reported_worker_has_no_warning(client: TestClient) -> None:
    session_factory = client.app.state.session_factory  # type: ignore[attr-defined]
    with write_scope(session_factory) as s:
        repository.save_worker(
            s,
            {"label": "gpu-box", "host": "gpu-box", "backend": "cuda", "device_name": "H100",
             "last_seen": datetime.now(UTC), "started_at": datetime.now(UTC)},
        )  # fmt: skip
    run = client.post("/api/v1/benchmark-runs", json={"label": "gpu-box"}).json()
    assert run["warning"] is None


def test_an_extra_top_level_field_is_refused_by_name(read_client: TestClient) -> None:
    r = read_client.post("/api/v1/device-reports", json=gpu_report() | {"uploader": "me"})
    assert r.status_code == 422, r.text[:300]
    assert r.json()["error"]["details"]["field"] == "uploader"


@pytest.mark.parametrize(
    "path, value",
    [
        (("environment", "device_name"), "x" * 100_000),
        (("environment", "os"), "L" * 201),
        (("environment", "torch_version"), "2." * 41),
        (("profile",), "q" * 41),
    ],
)
def test_a_long_string_is_refused_by_name(
    read_client: TestClient, path: tuple[str, ...], value: str
) -> None:
    report = gpu_report()
    target = report
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    r = read_client.post("/api/v1/device-reports", json=report)
    assert r.status_code == 422, r.text[:300]
    assert r.json()["error"]["details"]["field"] == ".".join(path)


def test_reports_of_both_schema_versions_still_load(client: TestClient) -> None:
    v1, v2 = gpu_report(), v2_report(gemm_point())
    assert v1["schema_version"] == 1 and v2["schema_version"] == 2
    for report in (v1, v2):
        r = client.post("/api/v1/device-reports", json=report)
        assert r.status_code == 201, r.text[:300]
        # what the server stores reads back under the same (strict) schema
        BenchReport.model_validate(r.json()["report"])

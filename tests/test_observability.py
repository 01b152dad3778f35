"""Operations: gzip for large answers, cache rules for versioned static files, a request id
on every answer and in the JSON access log, and Prometheus metrics by route template."""

from __future__ import annotations

import gzip
import json
import logging
import re
import sys

import pytest
from fastapi.testclient import TestClient
from isal import igzip

from app.config import Settings
from app.http import compression, observability
from app.web.static_assets import static_url


def test_large_answers_are_gzipped_small_ones_are_not(read_client: TestClient) -> None:
    big = read_client.get("/api/v1/gpus?limit=500", headers={"Accept-Encoding": "gzip"})
    assert big.status_code == 200 and big.headers["content-encoding"] == "gzip"
    assert len(big.json()["items"]) > 50  # the client decoded it: it was real gzip
    small = read_client.get("/api/v1/health", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers
    plain = read_client.get("/api/v1/gpus?limit=500", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers


def _wire_and_body(client: TestClient, url: str) -> tuple[bytes, bytes]:
    with client.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as r:
        assert r.headers["content-encoding"] == "gzip"
        wire = b"".join(r.iter_raw())
    return wire, gzip.decompress(wire)


def test_api_json_is_gzipped_for_speed_pages_for_size(read_client: TestClient) -> None:
    """API answers take ISA-L's gzip level 1 (CPU is the one-worker server's request rate),
    pages zlib's level 5 (their over-the-wire budget): each wire body is as long as its
    compressor makes it."""
    wire, body = _wire_and_body(read_client, "/api/v1/gpus?limit=500")
    fast, small = len(igzip.compress(body, compression.API_LEVEL)), len(gzip.compress(body, 5))
    assert small < 0.95 * fast  # the two are told apart on this body
    assert abs(len(wire) - fast) < 64
    assert abs(len(wire) - len(gzip.compress(body, 1))) >= 64  # not zlib's level 1
    wire, body = _wire_and_body(read_client, "/gpus")
    assert abs(len(wire) - len(gzip.compress(body, 5))) < 64
    assert len(gzip.compress(body, 5)) < 0.95 * len(gzip.compress(body, 1))


def test_versioned_static_urls_are_immutable_others_revalidate(read_client: TestClient) -> None:
    page = read_client.get("/")
    versioned = static_url("css/app.css")
    assert re.fullmatch(r"/static/css/app\.css\?v=[0-9a-f]{12}", versioned)
    assert f'href="{versioned}"' in page.text  # the templates use the helper
    assert f'src="{static_url("js/app.js")}"' in page.text

    fresh = read_client.get(versioned)
    assert fresh.status_code == 200
    assert fresh.headers["cache-control"] == "public, max-age=31536000, immutable"
    for url in ("/static/css/app.css", "/static/css/app.css?v=000000000000"):
        stale = read_client.get(url)
        assert stale.status_code == 200 and stale.headers["cache-control"] == "no-cache"
    revalidated = read_client.get(
        "/static/css/app.css", headers={"If-None-Match": fresh.headers["etag"]}
    )
    assert revalidated.status_code == 304
    assert read_client.get("/static/nothing-here.css").status_code == 404


def test_request_id_is_returned_kept_when_plain_replaced_when_not(read_client: TestClient) -> None:
    made = read_client.get("/api/v1/health").headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", made)
    assert (
        read_client.get("/api/v1/health", headers={"X-Request-ID": "abc-123.x"}).headers[
            "x-request-id"
        ]
        == "abc-123.x"
    )
    for bad in ("x" * 65, "has space", "<script>"):
        got = read_client.get("/api/v1/health", headers={"X-Request-ID": bad}).headers[
            "x-request-id"
        ]
        assert got != bad and re.fullmatch(r"[0-9a-f]{32}", got)
    # errors carry it too
    missing = read_client.get("/api/v1/gpus/no-such-gpu", headers={"X-Request-ID": "trace-404"})
    assert missing.status_code == 404 and missing.headers["x-request-id"] == "trace-404"


def test_access_log_is_json_with_request_id_and_bounded_path(
    read_client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    huge = "a" * 5000
    with caplog.at_level(logging.INFO, logger="gpu_advisor.access"):
        read_client.get(f"/api/v1/gpus/{huge}?q={huge}", headers={"X-Request-ID": "req-1"})
    (record,) = [r for r in caplog.records if r.name == "gpu_advisor.access"]
    line = json.loads(observability.JsonFormatter().format(record))
    assert line["request_id"] == "req-1" and line["message"] == "request"
    # ?q= is no parameter of the detail route: a 422 naming it (app/http/strict_query.py)
    assert line["status"] == 422 and line["method"] == "GET"
    assert line["route"] == "/api/v1/gpus/{slug}"
    assert len(line["path"]) <= 200 and huge not in json.dumps(line)
    assert isinstance(line["duration_ms"], float) and line["level"] == "info"


def _sample(text: str, name: str, **labels: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            labels_text = line[line.find("{") + 1 : line.rfind("}")] if "{" in line else ""
            got = dict(re.findall(r'(\w+)="([^"]*)"', labels_text))
            if all(got.get(k) == v for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
    return None


def test_metrics_by_route_template_in_flight_and_runs(client: TestClient) -> None:
    def count() -> float:
        text = client.get("/metrics").text
        value = _sample(text, "gpu_advisor_http_request_duration_seconds_count",
                        method="GET", route="/api/v1/gpus/{slug}")  # fmt: skip
        return value or 0.0

    before = count()
    assert client.get("/api/v1/gpus/h100-sxm").status_code == 200
    assert client.get("/api/v1/gpus/a100-sxm4-80gb").status_code == 200
    client.get("/no/such/page")
    response = client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert count() == before + 2
    assert "h100-sxm" not in text  # labels are templates, never raw paths
    assert _sample(text, "gpu_advisor_http_requests_total", route="<unmatched>", status="404")
    assert _sample(text, "gpu_advisor_http_requests_in_flight") == 1.0  # the scrape itself
    assert "/metrics" not in client.get("/openapi.json").text


def test_metrics_count_stored_runs_by_status(client: TestClient) -> None:
    from app.db import session_scope
    from app.reports import repository

    with session_scope(client.app.state.session_factory) as session:  # type: ignore[attr-defined]
        for i, status in enumerate(("failed", "failed", "succeeded")):
            repository.add_run(session, {"id": f"run-{i}", "status": status,
                                         "profile": "quick", "device": "cpu"})  # fmt: skip
    text = client.get("/metrics").text
    assert _sample(text, "gpu_advisor_benchmark_runs", status="failed") == 2.0
    assert _sample(text, "gpu_advisor_benchmark_runs", status="succeeded") == 1.0


def _outcomes(outcome: str) -> float:
    value = observability.REGISTRY.get_sample_value(
        "gpu_advisor_benchmark_run_outcomes_total", {"outcome": outcome}
    )
    return value or 0.0


def test_runs_ended_by_a_worker_or_a_cancel_are_counted(
    client: TestClient, settings: Settings
) -> None:
    from app.db import session_scope
    from app.reports import repository
    from app.reports.executor import Executor

    factory = client.app.state.session_factory  # type: ignore[attr-defined]
    with session_scope(factory) as session:
        repository.add_run(session, {"id": "crashes", "status": "queued",
                                     "profile": "quick", "device": "cpu"})  # fmt: skip
    failed = _outcomes("failed")
    # A real child process that exits with an error: the worker ends the run as failed.
    crash = [sys.executable, "-c", "import sys; sys.exit(3)"]
    Executor(settings.model_copy(update={"bench_command": crash}), factory, "here")("crashes")
    with session_scope(factory) as session:
        row = repository.get_run(session, "crashes")
        assert row is not None and row.status == "failed"
    assert _outcomes("failed") == failed + 1

    # A run nobody took yet, cancelled over the API, is ended (and counted) by the web process.
    with session_scope(factory) as session:
        repository.add_run(session, {"id": "waits", "status": "queued",
                                     "profile": "quick", "device": "cpu"})  # fmt: skip
    cancelled = _outcomes("cancelled")
    assert client.delete("/api/v1/benchmark-runs/waits").json()["status"] == "cancelled"
    text = client.get("/metrics").text
    assert _sample(text, "gpu_advisor_benchmark_run_outcomes_total", outcome="cancelled") == (
        cancelled + 1
    )


def test_queue_depth_is_read_from_the_stored_runs(client: TestClient) -> None:
    from app.db import session_scope
    from app.reports import repository

    with session_scope(client.app.state.session_factory) as session:  # type: ignore[attr-defined]
        for i, status in enumerate(("queued", "queued", "running", "failed", "succeeded")):
            repository.add_run(session, {"id": f"q-{i}", "status": status, "worker": "w",
                                         "profile": "quick", "device": "cpu"})  # fmt: skip
    text = client.get("/metrics").text
    assert _sample(text, "gpu_advisor_benchmark_queue_depth") == 3.0

"""What every request goes through: security headers on every response, NUL bytes and
oversized bodies refused with the error shape, CSRF, rate limits."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.http.ratelimit import RateLimiter
from app.main import create_app
from tests.reports.factory import gpu_report

QUESTION = {"workload": {"preset": "resnet-50"}}


@pytest.mark.parametrize("path", ["/api/v1/gpus", "/api/v1/nope", "/nope", "/gpus", "/docs"])
def test_security_headers_on_every_response(read_client: TestClient, path: str) -> None:
    r = read_client.get(path)
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/gpus?q=a%00b", "q"),
        ("/api/v1/gpus?vendor=%00", "vendor"),
        ("/api/v1/gpus/compare?slugs=h100-sxm,%00", "slugs"),
        ("/api/v1/gpus/h100%00", "slug"),
        ("/api/v1/device-reports?gpu_slug=%00", "gpu_slug"),
        ("/api/v1/benchmark-runs/%00", "run_id"),
        ("/gpus?q=%00", "q"),
    ],
)
def test_nul_in_path_or_query_is_422_naming_it(client: TestClient, url: str, field: str) -> None:
    r = client.get(url, headers={"accept": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"]["field"] == field


def test_nul_in_json_body_is_422_naming_it(client: TestClient) -> None:
    body = {"workload": {"preset": "resnet-50\x00"}}
    r = client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "workload.preset"
    r = client.post("/api/v1/estimate", json={"gpu": "h100\x00", **QUESTION})
    assert r.status_code == 422 and r.json()["error"]["details"]["field"] == "gpu"


@pytest.mark.parametrize(
    ("url", "body"),
    [
        ("/api/v1/recommendations", b'{"workload": {"preset": "\xff\xfe"}}'),
        ("/api/v1/device-reports", b"\xc3\x28"),
        ("/api/v1/estimate", b'{"gpu": "h100-sxm", "workload": {"preset": "resnet-50"}, "x": [[[['),
    ],
)
def test_undecodable_bodies_name_the_body(read_client: TestClient, url: str, body: bytes) -> None:
    r = read_client.post(url, content=body, headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500, r.text
    assert r.json()["error"]["details"]["field"] == "body"


def test_body_size_limit_on_every_endpoint(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"max_body_bytes": 1000}))
    with TestClient(app) as c:
        big = {**QUESTION, "padding": "x" * 5000}
        for url in ("/api/v1/recommendations", "/api/v1/estimate", "/api/v1/benchmark-runs"):
            r = c.post(url, json=big)
            assert r.status_code == 413, (url, r.text)
            assert r.json()["error"]["code"] == "payload_too_large"

        # a chunked body with no length declared is cut off while it streams
        def chunks():
            for _ in range(10):
                yield b" " * 500

        r = c.post("/api/v1/recommendations", content=chunks(),
                   headers={"content-type": "application/json"})  # fmt: skip
        assert r.status_code == 413
    app.state.engine.dispose()


def test_cross_site_form_cannot_start_a_run(read_client: TestClient) -> None:
    # what <form method=post action=http://127.0.0.1:8000/api/v1/benchmark-runs> sends
    form = read_client.post(
        "/api/v1/benchmark-runs",
        content=b"",
        headers={"content-type": "application/x-www-form-urlencoded",
                 "origin": "https://evil.example", "sec-fetch-site": "cross-site"},
    )  # fmt: skip
    assert form.status_code == 403
    assert form.json()["error"]["details"]["field"] == "origin"
    # the same without the browser's origin headers is still refused: forms cannot send JSON
    bare = read_client.post("/api/v1/benchmark-runs", content=b"profile=quick",
                       headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert bare.status_code == 415
    assert bare.json()["error"]["details"]["field"] == "content-type"
    plain = read_client.post(
        "/api/v1/device-reports", content=b"{}", headers={"content-type": "text/plain"}
    )
    assert plain.status_code == 415
    assert read_client.get("/api/v1/benchmark-runs").json()["items"] == []
    # a same-origin page (the /device page's script) may
    same = read_client.post("/api/v1/recommendations", json=QUESTION,
                       headers={"origin": "http://testserver", "sec-fetch-site": "same-origin"})  # fmt: skip
    assert same.status_code == 200


def test_writes_are_rate_limited_per_client(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={
        "rate_limit_writes_burst": 2, "rate_limit_writes_per_minute": 1,
        "rate_limit_expensive_burst": 1, "rate_limit_expensive_per_minute": 1}))  # fmt: skip
    # three different reports (one sent again is answered with its first copy, 200)
    reports = [{**gpu_report(), "duration_s": 12.0 + i} for i in range(3)]
    with TestClient(app) as c:
        assert c.post("/api/v1/device-reports", json=reports[0]).status_code == 201
        assert c.post("/api/v1/device-reports", json=reports[1]).status_code == 201
        third = c.post("/api/v1/device-reports", json=reports[2])
        assert third.status_code == 429
        assert third.json()["error"]["code"] == "rate_limited"
        assert int(third.headers["retry-after"]) >= 1
        assert c.post("/api/v1/recommendations", json=QUESTION).status_code == 200
        assert c.post("/api/v1/recommendations", json=QUESTION).status_code == 429
        assert c.get("/api/v1/gpus").status_code == 200  # cheap reads are not limited
        assert c.get("/api/v1/device-reports").json()["total"] == 2
    app.state.engine.dispose()


def test_token_bucket_refills() -> None:
    bucket = RateLimiter(burst=2, per_second=1.0)
    assert bucket.take("a", now=0.0) == 0 and bucket.take("a", now=0.0) == 0
    assert bucket.take("a", now=0.0) == pytest.approx(1.0)
    assert bucket.take("b", now=0.0) == 0  # per client
    assert bucket.take("a", now=1.5) == 0
    assert RateLimiter(burst=0, per_second=0).take("a") == 0  # 0 turns it off

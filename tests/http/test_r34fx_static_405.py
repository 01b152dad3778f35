"""A 405 raised inside the static mount: the path matches no top-level route once the mount
has set its root_path, so the Allow header came back empty and the message ended in "this
path takes ". Static files take GET and HEAD."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.testclient import TestClient
from starlette.exceptions import HTTPException
from starlette.routing import Mount

from app.main import _http_error, allowed_methods


def test_a_static_405_allows_get_and_head(read_client: TestClient) -> None:
    r = read_client.post("/static/css/app.css?v=0123456789ab", headers={"accept": "text/html"})
    assert r.status_code == 405
    assert r.headers["allow"] == "GET, HEAD"
    assert "this path takes GET, HEAD" in r.text


def test_a_405_no_route_answers_keeps_the_raisers_allow_and_no_empty_clause() -> None:
    # a mount that is not static files raises its own 405: nothing top-level takes the path
    app = FastAPI()

    async def inner(scope, receive, send):
        request = Request(scope, receive)
        response = _http_error(request, HTTPException(405, headers={"Allow": "OPTIONS"}))
        assert allowed_methods(request) == []
        await response(scope, receive, send)

    app.router.routes.append(Mount("/api/elsewhere", app=inner))
    r = TestClient(app).post("/api/elsewhere/x")
    assert r.status_code == 405
    assert r.headers["allow"] == "OPTIONS"
    assert r.json()["error"]["message"] == "POST is not allowed here"

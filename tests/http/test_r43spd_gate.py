"""The guard's concurrency gate: a free slot is taken at once (no task, no timer: issue 21's
speed), a full gate still waits up to queue_timeout_s and then answers 503."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

from app.config import Settings
from app.http.guard import GuardMiddleware


async def _ok(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def _call(guard: GuardMiddleware) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/api/v1/workloads",
        "raw_path": b"/api/v1/workloads",
        "query_string": b"",
        "headers": [],
        "client": ("127.0.0.1", 1),
    }
    asyncio.run(guard(scope, receive, send))
    return sent


def _status(sent: list[dict[str, Any]]) -> int:
    return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))


def test_a_free_gate_answers_without_waiting_and_frees_its_slot(monkeypatch: Any) -> None:
    guard = GuardMiddleware(_ok, Settings(max_concurrent_requests=2))
    waited: list[object] = []
    real = asyncio.wait_for

    async def counted(aw: Any, timeout: float | None) -> Any:
        waited.append(aw)
        return await real(aw, timeout)

    monkeypatch.setattr(asyncio, "wait_for", counted)
    assert _status(_call(guard)) == 200
    assert waited == []  # taken at once: no wait_for task
    assert guard.gate._value == 2  # released after the answer


def test_a_full_gate_still_waits_then_answers_busy() -> None:
    guard = GuardMiddleware(_ok, Settings(max_concurrent_requests=1, queue_timeout_s=0.05))
    guard.gate._value = 0  # every slot held by requests in flight
    sent = _call(guard)
    assert _status(sent) == 503
    start = next(m for m in sent if m["type"] == "http.response.start")
    assert (b"retry-after", b"5") in [(k.lower(), v) for k, v in start["headers"]]

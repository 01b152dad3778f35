"""What the service tells its operators: one JSON log line per request carrying a request
id, and Prometheus metrics at /metrics.

A run's outcome is counted by the process that ends it (``record_run_outcome``: the
worker, or the web process for a run cancelled while queued). Queue depth and the stored
runs by status are read from the database at each scrape, so they are whole whichever
process queued or ran each run.

Metrics live in this process. With ``serve --workers N`` each scrape reaches one worker
and sees its share of the request metrics (the database-derived run gauges are whole):
scrape one worker per container, or run one worker per container behind the balancer.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID_HEADER = "X-Request-ID"
# An incoming id is kept only if it is short and plain; anything else is replaced, so logs
# never carry a client's arbitrary (or huge) input.
_VALID_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_MAX_LOGGED_PATH = 200

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
access_log = logging.getLogger("gpu_advisor.access")

REGISTRY = CollectorRegistry(auto_describe=True)
HTTP_LATENCY = Histogram(
    "gpu_advisor_http_request_duration_seconds",
    "Time to answer a request, by route template (not raw path).",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=REGISTRY,
)
HTTP_REQUESTS = Counter(
    "gpu_advisor_http_requests",
    "Requests answered, by route template and status code.",
    ["method", "route", "status"],
    registry=REGISTRY,
)
HTTP_IN_FLIGHT = Gauge(
    "gpu_advisor_http_requests_in_flight",
    "Requests being answered by this process now.",
    registry=REGISTRY,
)
RUN_OUTCOMES = Counter(
    "gpu_advisor_benchmark_run_outcomes",
    "Benchmark runs finished by this process, by outcome (succeeded, failed, cancelled, ...).",
    ["outcome"],
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge(
    "gpu_advisor_benchmark_queue_depth",
    "Benchmark runs waiting or running, as last reported by the run queue.",
    registry=REGISTRY,
)
RUNS_BY_STATUS = Gauge(
    "gpu_advisor_benchmark_runs",
    "Benchmark runs stored in the database, by status (read at each scrape).",
    ["status"],
    registry=REGISTRY,
)


def record_run_outcome(outcome: str, count: int = 1) -> None:
    """Called by whatever ends runs: once per run, or with the number a sweep ended."""
    if count > 0:
        RUN_OUTCOMES.labels(outcome=outcome[:32]).inc(count)


def set_queue_depth(depth: int) -> None:
    """The run queue calls this when runs are queued, taken or finished."""
    QUEUE_DEPTH.set(max(0, depth))


def metrics_response(runs_by_status: dict[str, int] | None = None) -> Response:
    """The Prometheus exposition; ``runs_by_status`` refreshes the stored-run gauge."""
    if runs_by_status is not None:
        RUNS_BY_STATUS.clear()  # a status with no runs left disappears
        for status, count in runs_by_status.items():
            RUNS_BY_STATUS.labels(status=status[:32]).set(count)
        # The database knows the whole queue, whichever process queued or runs each run.
        set_queue_depth(sum(runs_by_status.get(s, 0) for s in ("queued", "running")))
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)


# -- logs ------------------------------------------------------------------------------


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the request id when there
    is one, and any ``extra={"fields": {...}}``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        if rid is not None:
            entry["request_id"] = rid
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)[-8000:]
        return json.dumps(entry, default=str)


_HANDLER_NAME = "gpu_advisor_json"
_base_factory = logging.getLogRecordFactory()


def _record_with_request_id(*args: Any, **kwargs: Any) -> logging.LogRecord:
    # Taken when the record is made, in the request's context: handlers may format later.
    record = _base_factory(*args, **kwargs)
    record.request_id = request_id_var.get()
    return record


_TEXT_FORMAT = "%(levelname)s [%(name)s] %(message)s"


def configure_logging(
    level: str = "INFO", json_lines: bool = True, loggers: tuple[str, ...] = ("gpu_advisor",)
) -> None:
    """Send the application's logs (``gpu_advisor.*``; a benchmark worker adds its queue's,
    ``huey``) to stderr, as JSON lines by default. Idempotent: create_app may run many times
    in one process (tests)."""
    logging.setLogRecordFactory(_record_with_request_id)
    for name in loggers:
        logger = logging.getLogger(name)
        logger.setLevel(level.upper())
        handler = next((h for h in logger.handlers if h.get_name() == _HANDLER_NAME), None)
        if handler is None:
            handler = logging.StreamHandler(sys.stderr)
            handler.set_name(_HANDLER_NAME)
            logger.addHandler(handler)
        handler.setFormatter(JsonFormatter() if json_lines else logging.Formatter(_TEXT_FORMAT))
    # Our access log replaces uvicorn's plain one (which has no request id or route).
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)


def uvicorn_log_config(level: str = "INFO", json_lines: bool = True) -> dict[str, Any]:
    """uvicorn's own lines ("Started server process", "Uvicorn running on …") in the format
    of every other log line: its default configuration wrote them as plain text beside the
    JSON lines that README "Operations" promises. Access lines stay off (ours replace them)."""
    formatter: dict[str, Any] = (
        {"()": f"{__name__}.JsonFormatter"} if json_lines else {"format": _TEXT_FORMAT}
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"line": formatter},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "line",
                "stream": "ext://sys.stderr",
            },
        },
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": level.upper(), "propagate": False},
            "uvicorn.access": {"level": "WARNING"},
        },
    }


# -- the middleware --------------------------------------------------------------------


def _route_template(app: ASGIApp, scope: Scope) -> str:
    route = scope.get("route")
    if route is None:  # routers that do not record the match: find it the same way
        for candidate in getattr(app, "routes", ()):
            if candidate.matches(scope)[0] == Match.FULL:
                route = candidate
                break
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path else "<unmatched>"


class ObservabilityMiddleware:
    """Pure ASGI (no per-request task): request id in and out, timing, metrics, a log line."""

    def __init__(self, app: ASGIApp, router: ASGIApp | None = None) -> None:
        self.app = app
        self.router = router or app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = _header(scope, b"x-request-id")
        rid = incoming if incoming and _VALID_ID.fullmatch(incoming) else uuid.uuid4().hex
        token = request_id_var.set(rid)
        scope.setdefault("state", {})["request_id"] = rid
        status = 500
        start = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = rid
            await send(message)

        HTTP_IN_FLIGHT.inc()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            HTTP_IN_FLIGHT.dec()
            elapsed = time.perf_counter() - start
            method = scope.get("method", "GET")
            method = method if method in _METHODS else "OTHER"
            route = _route_template(self.router, scope)
            HTTP_LATENCY.labels(method, route).observe(elapsed)
            HTTP_REQUESTS.labels(method, route, str(status)).inc()
            if access_log.isEnabledFor(logging.INFO):
                access_log.info(
                    "request",
                    extra={"fields": {
                        "method": method,
                        "path": scope.get("path", "")[:_MAX_LOGGED_PATH],
                        "route": route,
                        "status": status,
                        "duration_ms": round(elapsed * 1000, 2),
                    }},
                )  # fmt: skip
            request_id_var.reset(token)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def request_id(request: Request) -> str | None:
    """The id of the request being answered (for error bodies or outgoing calls)."""
    return getattr(request.state, "request_id", None)

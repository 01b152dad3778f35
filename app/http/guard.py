"""One ASGI middleware that bounds and screens every request before the app sees it.

In order: security headers on every response (errors and API included); a 4xx naming the
field for a NUL byte in the path or query; CSRF (a write from another origin is refused);
an API write whose body is not JSON (application/json, +json) is 415; per-client rate limits on
writes and expensive reads; a body read with a cap (413); JSON screened for NaN/Infinity,
NUL bytes, lone surrogates and deep nesting (422 naming the field); then a gate admitting
at most ``max_concurrent_requests`` at once, sized with the connection pool (app/db.py).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.routing import compile_path

from app.config import Settings
from app.errors import error_body
from app.http.ratelimit import RateLimiter

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Reads that cost far more than a page: the engine ranks the whole catalog.
EXPENSIVE = frozenset(
    {
        ("POST", "/api/v1/recommendations"),
        ("POST", "/api/v1/estimate"),
        ("GET", "/api/v1/gpus/compare"),
        ("GET", "/recommendations"),
        ("POST", "/recommendations"),
        ("GET", "/recommendations.json"),
        ("GET", "/recommendations.csv"),
        ("GET", "/compare"),
    }
)
# Answered without waiting at the gate: probes must answer while the app is saturated.
UNGATED_PREFIXES = ("/api/v1/health", "/api/v1/ready", "/static/")
# An API write's body is JSON and nothing else: a cross-site HTML form cannot send it without
# a CORS preflight (which this server never grants), and the JSON screen below then sees
# every body an endpoint will parse (an octet-stream body would reach json.loads unscreened).
_JSON_TYPES = ("application/json",)

API_CSP = "default-src 'none'; frame-ancestors 'none'"
PAGE_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
# Swagger UI starts itself with an inline script.
DOCS_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
)


class Rejected(Exception):
    def __init__(self, status: int, code: str, message: str, field: str | None = None,
                 headers: dict[str, str] | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field
        self.headers = headers or {}


def short(text: str, limit: int = 80) -> str:
    """Inputs echoed in messages and logs are cut: an error never repeats a huge input."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


# ------------------------------------------------------------------------------- JSON screen


class _NonFinite(float):
    """What NaN/Infinity (or a number past float range) parse to, so the walk can name it."""


def _constant(name: str) -> float:
    return _NonFinite("nan")


def _float(text: str) -> float:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite("nan")


def _bad_string(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL byte"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode)"
    return None


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def screen_json(raw: bytes, max_depth: int) -> None:
    """Raise Rejected for the first value no database should be asked to store."""
    try:
        data = json.loads(raw, parse_constant=_constant, parse_float=_float)
    except RecursionError as exc:
        raise Rejected(422, "invalid_input", f"body: JSON nested deeper than {max_depth} levels",
                       "body") from exc  # fmt: skip
    except UnicodeDecodeError as exc:
        raise Rejected(422, "invalid_input", "body: not valid UTF-8 JSON", "body") from exc
    except ValueError:
        return  # not JSON at all: the endpoint's own validation names it
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > max_depth:
            where = path or "body"
            raise Rejected(422, "invalid_input",
                           f"{short(where)}: JSON nested deeper than {max_depth} levels",
                           where)  # fmt: skip
        if isinstance(value, _NonFinite):
            raise Rejected(422, "invalid_input",
                           f"{short(path or 'body')}: NaN and Infinity are not JSON numbers",
                           path or "body")  # fmt: skip
        if isinstance(value, str):
            why = _bad_string(value)
            if why:
                raise Rejected(422, "invalid_input", f"{short(path or 'body')}: {why}",
                               path or "body")  # fmt: skip
        elif isinstance(value, dict):
            for key, item in value.items():
                why = _bad_string(key)
                if why:
                    raise Rejected(422, "invalid_input", f"{short(path or 'body')}: a key {why}",
                                   path or "body")  # fmt: skip
                stack.append((item, _join(path, key), depth + 1))
        elif isinstance(value, list):
            stack.extend((item, _join(path, i), depth + 1) for i, item in enumerate(value))


def screen_form(raw: bytes) -> None:
    for key, value in parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True):
        if "\x00" in key or "\x00" in value:
            raise Rejected(422, "invalid_input", f"{short(key)}: contains a NUL byte", key)


# The question form's pages read their own query and re-show it with each bad field named
# (a NUL included): the guard's bare error would lose the user's other answers.
FORM_PAGES = frozenset({"/", "/recommendations"})


def _path_parameter_with_nul(scope: Scope) -> str:
    """The path parameter a NUL byte is in ("slug" of /api/v1/gpus/{slug}), as a 404 for an
    unknown slug names it; "path" where no operation's parameter holds it (a page, a typo).

    The guard runs before routing, and FastAPI keeps included routers' routes behind private
    classes, so the templates come from the app's OpenAPI paths (built once and cached by
    FastAPI), matched as Starlette compiles a route's path; only a request with a NUL pays."""
    openapi = getattr(scope.get("app"), "openapi", None)
    if not callable(openapi):
        return "path"
    path: str = scope.get("path", "")
    for template in openapi().get("paths", {}):
        if "{" not in template:
            continue
        found = _compiled(template).match(path)
        if found is None:
            continue
        for name, value in found.groupdict().items():
            if "\x00" in value:
                return name
    return "path"


@functools.lru_cache(maxsize=512)
def _compiled(template: str) -> re.Pattern[str]:
    return compile_path(template)[0]


def screen_target(scope: Scope) -> None:
    path: str = scope.get("path", "")
    if "\x00" in path:
        field = _path_parameter_with_nul(scope)
        raise Rejected(422, "invalid_input", f"{field}: contains a NUL byte", field)
    if scope.get("method") == "GET" and path in FORM_PAGES:
        return
    query = scope.get("query_string", b"").decode("latin-1")
    for key, value in parse_qsl(query, keep_blank_values=True):
        if "\x00" in key or "\x00" in value:
            field = key.replace("\x00", "") or "query"
            raise Rejected(422, "invalid_input", f"{short(field)}: contains a NUL byte", field)


# ----------------------------------------------------------------------------------- CSRF


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def check_origin(scope: Scope, trusted: list[str]) -> None:
    """Refuse a write a browser sent on behalf of another site."""
    if _header(scope, b"sec-fetch-site") == "cross-site":
        raise Rejected(403, "forbidden", "cross-site requests may not change anything", "origin")
    origin = _header(scope, b"origin")
    if origin is None:
        return  # not sent by a browser (curl, the CLI), or a same-origin GET-like navigation
    host = _header(scope, b"host") or ""
    parts = urlsplit(origin)
    if origin == "null" or (parts.netloc != host and origin not in trusted):
        raise Rejected(403, "forbidden", f"writes from origin {short(origin)} are not allowed",
                       "origin")  # fmt: skip


def _media_type(scope: Scope) -> str:
    return (_header(scope, b"content-type") or "").split(";")[0].strip().lower()


def is_json_type(ctype: str) -> bool:
    """application/json, or a structured-syntax JSON type (application/problem+json)."""
    return ctype in _JSON_TYPES or (ctype.startswith("application/") and ctype.endswith("+json"))


def check_api_body_type(scope: Scope, has_body: bool) -> None:
    ctype = _media_type(scope)
    if is_json_type(ctype) or not (ctype or has_body):
        return
    said = f"not '{short(ctype, 60)}'" if ctype else "not a body without a Content-Type"
    message = f"API writes take 'Content-Type: application/json', {said}"
    raise Rejected(415, "unsupported_media_type", message, "content-type")


# ----------------------------------------------------------------------------- middleware


class GuardMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.gate = asyncio.Semaphore(settings.max_concurrent_requests)
        self.writes = RateLimiter(
            settings.rate_limit_writes_burst, settings.rate_limit_writes_per_minute / 60
        )
        self.expensive = RateLimiter(
            settings.rate_limit_expensive_burst, settings.rate_limit_expensive_per_minute / 60
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(scope, send)
        try:
            receive = await self._screen(scope, receive)
        except Rejected as exc:
            await _reject(scope, send, exc)
            return
        path: str = scope["path"]
        if path.startswith(UNGATED_PREFIXES):
            await self.app(scope, receive, send)
            return
        try:
            if self.gate.locked():
                await asyncio.wait_for(self.gate.acquire(), self.settings.queue_timeout_s)
            else:
                # a free slot is taken at once, without waiting: wait_for's task and timer (a
                # turn of the event loop) were ~0.1 M instructions of every request (issue 21)
                await self.gate.acquire()
        except TimeoutError:
            await _reject(scope, send, Rejected(503, "busy", "the server is busy; retry shortly",
                                                headers={"retry-after": "5"}))  # fmt: skip
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.gate.release()

    async def _screen(self, scope: Scope, receive: Receive) -> Receive:
        method: str = scope["method"]
        path: str = scope["path"]
        is_api = path.startswith("/api/")
        screen_target(scope)
        if method in UNSAFE:
            check_origin(scope, self.settings.trusted_origins)
        client = (scope.get("client") or ("?", 0))[0]
        if (method, path) in EXPENSIVE:
            self._limit(self.expensive, client, "expensive requests")
        elif method in UNSAFE and is_api:
            self._limit(self.writes, client, "writes")
        cap = self._cap(method, path)
        declared = _header(scope, b"content-length")
        if declared and declared.isdigit() and int(declared) > cap:
            raise Rejected(413, "payload_too_large", f"the body may be at most {cap} bytes", "body")
        body = await _read_body(receive, cap)
        if method in UNSAFE and is_api:
            check_api_body_type(scope, bool(body))
        if body:
            ctype = _media_type(scope)
            if is_json_type(ctype) or (is_api and not ctype):
                screen_json(body, self.settings.max_json_depth)
            elif ctype == "application/x-www-form-urlencoded":
                screen_form(body)
        return _replay(body, receive)

    def _cap(self, method: str, path: str) -> int:
        if method == "POST" and path.rstrip("/") == "/api/v1/device-reports":
            return self.settings.max_report_bytes
        if method == "POST" and path.rstrip("/") == "/device/reports":
            return self.settings.max_report_bytes + 65_536  # the upload form: multipart framing
        return self.settings.max_body_bytes

    @staticmethod
    def _limit(limiter: RateLimiter, client: str, what: str) -> None:
        wait = limiter.take(client)
        if wait > 0:
            raise Rejected(429, "rate_limited",
                           f"too many {what} from {client}; retry in {math.ceil(wait)} s",
                           headers={"retry-after": str(math.ceil(wait))})  # fmt: skip


async def _read_body(receive: Receive, cap: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Rejected(400, "disconnected", "the client went away", "body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            raise Rejected(413, "payload_too_large", f"the body may be at most {cap} bytes",
                           "body")  # fmt: skip
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _with_security_headers(scope: Scope, send: Send) -> Send:
    path: str = scope.get("path", "")

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            names = {k.lower() for k, _ in headers}
            ctype = next((v for k, v in headers if k.lower() == b"content-type"), b"")
            if b"content-security-policy" not in names:
                if path.startswith("/docs"):
                    csp = DOCS_CSP
                elif ctype.startswith(b"text/html"):
                    csp = PAGE_CSP
                else:
                    csp = API_CSP
                headers.append((b"content-security-policy", csp.encode()))
            if message.get("status") == 401 and b"www-authenticate" not in names:
                # RFC 9110: a 401 says which scheme would be accepted; every token this app
                # checks is a bearer token (app/deps.py check_token)
                headers.append((b"www-authenticate", b"Bearer"))
            for name, value in (
                (b"x-content-type-options", b"nosniff"),
                (b"x-frame-options", b"DENY"),
                (b"referrer-policy", b"same-origin"),
                (b"cross-origin-opener-policy", b"same-origin"),
            ):
                if name not in names:
                    headers.append((name, value))
            message["headers"] = headers
        await send(message)

    return wrapped


async def _reject(scope: Scope, send: Send, exc: Rejected) -> None:
    path: str = scope.get("path", "")
    details = {"field": exc.field} if exc.field else {}
    if path.startswith("/api/") or not _wants_html(scope):
        body = json.dumps(error_body(exc.code, exc.message, details)).encode()
        ctype = b"application/json"
    else:
        body = _html_error(scope, exc).encode()
        ctype = b"text/html; charset=utf-8"
    headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in exc.headers.items()]
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _wants_html(scope: Scope) -> bool:
    return "text/html" in (_header(scope, b"accept") or "")


def _html_error(scope: Scope, exc: Rejected) -> str:
    from markupsafe import escape

    app = scope.get("app")
    templates = getattr(getattr(app, "state", None), "templates", None)
    title = exc.code.replace("_", " ")
    if templates is not None:
        template = templates.env.get_template("error.html")
        return str(template.render(status=exc.status, title=title, message=exc.message,
                                   request=None))  # fmt: skip
    return f"<h1>{exc.status} {escape(title)}</h1><p>{escape(exc.message)}</p>"

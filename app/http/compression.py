"""Gzip with a level per audience.

API answers are JSON read by programs, usually over fast links, and the open question's
answer is ~75 KB of it: level 1 compresses it to ~14 KB in half the CPU time of level 5
(~11 KB), and on a one-worker server that CPU is the request rate. Pages go to browsers over
any link, so they keep level 5 and their over-the-wire budget (tests/web/test_pages_browser.py).
"""

from __future__ import annotations

from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

API_PREFIX = "/api/"
API_LEVEL = 1
PAGE_LEVEL = 5


class LeveledGZip:
    def __init__(self, app: ASGIApp, minimum_size: int = 1024) -> None:
        self._api = GZipMiddleware(app, minimum_size=minimum_size, compresslevel=API_LEVEL)
        self._pages = GZipMiddleware(app, minimum_size=minimum_size, compresslevel=PAGE_LEVEL)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        api = scope["type"] == "http" and scope["path"].startswith(API_PREFIX)
        await (self._api if api else self._pages)(scope, receive, send)

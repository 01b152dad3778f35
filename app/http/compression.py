"""Gzip with a compressor per audience.

API answers are JSON read by programs, usually over fast links, and the open question's
answer is ~75 KB of it: on a one-worker server the CPU spent compressing it is the request
rate. They are compressed by ISA-L's deflate (Intel's Intelligent Storage Acceleration
Library, through the ``isal`` package's zlib-compatible ``isal_zlib``) at its level 1: on that
answer 14.1 KB in ~0.11 ms, where zlib's level 1 made 14.8 KB in ~0.6 ms and its level 5
11.4 KB in ~1.2 ms (one core of the 2-core development machine; docs/methodology.md §4). The
wire format is the same gzip every client reads. Pages go to browsers over any link, so they
keep zlib's level 5 and their over-the-wire budget (tests/web/test_pages_browser.py).
"""

from __future__ import annotations

from typing import Any

from isal import isal_zlib
from starlette.datastructures import Headers
from starlette.middleware.gzip import GZipMiddleware, GZipResponder, IdentityResponder
from starlette.types import ASGIApp, Receive, Scope, Send

API_PREFIX = "/api/"
API_LEVEL = 1  # ISA-L's levels are 0-3
PAGE_LEVEL = 5  # zlib's


class _IsalResponder(GZipResponder):
    """Starlette's gzip responder (headers, streaming, what it leaves alone) with ISA-L's
    deflate in place of zlib's: the same calls (isal_zlib mirrors zlib's compressobj)."""

    _deflate: isal_zlib.Compress | None = None

    @property
    def compressor(self) -> Any:  # read by GZipResponder's _compress_body
        if self._deflate is None:
            self._deflate = isal_zlib.compressobj(
                self.compresslevel, isal_zlib.DEFLATED, 16 + isal_zlib.MAX_WBITS
            )
        return self._deflate


class _IsalGZip(GZipMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        responder: IdentityResponder
        if "gzip" in Headers(scope=scope).get("Accept-Encoding", ""):
            responder = _IsalResponder(
                self.app,
                self.minimum_size,
                compresslevel=self.compresslevel,
                thread_minimum_size=self.thread_minimum_size,
                exclude_content_types=self.exclude_content_types,
            )
        else:
            responder = IdentityResponder(
                self.app, self.minimum_size, exclude_content_types=self.exclude_content_types
            )
        await responder(scope, receive, send)


class LeveledGZip:
    def __init__(self, app: ASGIApp, minimum_size: int = 1024) -> None:
        self._api = _IsalGZip(app, minimum_size=minimum_size, compresslevel=API_LEVEL)
        self._pages = GZipMiddleware(app, minimum_size=minimum_size, compresslevel=PAGE_LEVEL)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        api = scope["type"] == "http" and scope["path"].startswith(API_PREFIX)
        await (self._api if api else self._pages)(scope, receive, send)

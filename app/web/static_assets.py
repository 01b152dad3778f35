"""Static files with versioned URLs: ``static_url("css/app.css")`` is
``/static/css/app.css?v=<content hash>``. A request carrying the file's current hash is
cached for a year (``immutable``: the URL changes when the file does); any other request
for a static file must revalidate (``no-cache``, answered from the ETag)."""

from __future__ import annotations

import hashlib
from functools import cache
from urllib.parse import parse_qs

from fastapi import FastAPI
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from app.shipped.paths import shipped_path

PREFIX = "/static"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@cache
def static_version(relative: str) -> str:
    """The first 12 hex digits of the file's sha256 (static files never change while a
    process runs: they ship inside the package)."""
    path = shipped_path("static") / relative
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def static_url(relative: str) -> str:
    relative = relative.lstrip("/")
    return f"{PREFIX}/{relative}?v={static_version(relative)}"


class VersionedStaticFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            asked = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("v")
            try:
                current = static_version(path)
            except OSError:
                current = None
            fresh = asked is not None and current is not None and asked[-1] == current
            response.headers["Cache-Control"] = IMMUTABLE if fresh else REVALIDATE
        return response


def mount_static(app: FastAPI) -> None:
    """Serve shipped static/ at /static with the cache rules above."""
    app.mount(PREFIX, VersionedStaticFiles(directory=shipped_path("static")), name="static")

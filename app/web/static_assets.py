"""Static files with versioned URLs: ``static_url("css/app.css")`` is
``/static/css/app.css?v=<content hash>``. A request carrying the file's current hash is
cached for a year (``immutable``: the URL changes when the file does); any other request
for a static file must revalidate (``no-cache``, answered from the ETag).

The stylesheet and the script go out without their comments and indentation (``lean``): the
sources keep the words that say why, and every page's weight budget counts both files in full
(test_pages_stay_small). Only the project's own files: ``lean``'s rules hold for what this
project writes, not for a vendored bundle (``vendor/``), whose minified lines they had broken
(Swagger UI's bundle lost 75 bytes and /docs its SwaggerUIBundle)."""

from __future__ import annotations

import hashlib
import re
from functools import cache
from urllib.parse import parse_qs

from fastapi import FastAPI
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from app.shipped.paths import shipped_path

PREFIX = "/static"
# third-party files, served byte for byte
VENDOR = "vendor/"
# a CSS comment: the stylesheet quotes no "/*" in a string
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
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


def lean(text: str, kind: str) -> str:
    """``kind`` "css" or "js" without comments and indentation; newlines stay, so a script's
    statements end where they did. Only what cannot change its meaning goes: a stylesheet's
    comments (it quotes no "/*"), and a script's lines that are a comment alone (``//`` or a
    one-line ``/* */``); a comment after code stays. The script holds no template literal, so
    no string spans lines for a stripped indent to change."""
    if kind == "css":
        text = _CSS_COMMENT.sub("", text)
    kept = []
    for line in text.splitlines():
        bare = line.strip()
        if not bare:
            continue
        if kind == "js" and (
            bare.startswith("//") or (bare.startswith("/*") and bare.endswith("*/"))
        ):
            continue
        kept.append(bare)
    return "\n".join(kept) + "\n"


@cache
def _lean_bytes(relative: str) -> bytes:
    path = shipped_path("static") / relative
    return lean(path.read_text(encoding="utf-8"), relative.rsplit(".", 1)[-1]).encode("utf-8")


class VersionedStaticFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if (
            response.status_code == 200
            and isinstance(response, FileResponse)
            and path.endswith((".css", ".js"))
            and not path.startswith(VENDOR)
        ):
            # the file's own ETag and type stay (its lean form is a function of its bytes); no
            # byte ranges, which would index the file on disk
            lean_body = _lean_bytes(path)
            skip = ("content-length", "accept-ranges")
            headers = {k: v for k, v in response.headers.items() if k not in skip}
            response = Response(lean_body, status_code=200, headers=headers)
            if scope.get("method") == "HEAD":
                response.body = b""
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

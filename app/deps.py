"""Annotated dependency aliases for routers and pages."""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import session_scope
from app.errors import Forbidden, Unauthorized


async def get_settings_dep(request: Request) -> Settings:
    # async: read on the event loop, where a plain function would be a trip to the threadpool
    settings: Settings = request.app.state.settings
    return settings


def get_session(request: Request) -> Iterator[Session]:
    # Commit (or roll back) before the response leaves: a client never sees a success
    # whose write did not land.
    with request_session(request) as session:
        yield session


def request_session(request: Request) -> AbstractContextManager[Session]:
    """The request's session, for a read-only route that opens it itself in its own thread:
    as a dependency its opening and its closing are two more trips to the threadpool (with
    the settings dependency, 0.3 ms a request under uvicorn on a 2-core machine, against a
    trivial route's 0.75 ms)."""
    return session_scope(request.app.state.session_factory)


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


# The header a token goes in, named as the field at fault in every 401/403 (the guard adds
# the WWW-Authenticate challenge to each 401, app/http/guard.py).
AUTH_FIELD = "Authorization"


def check_token(request: Request, expected: str | None, what: str) -> None:
    """``what``: the operation, as a gerund phrase ("deleting device reports"), so the message
    says what the token is for."""
    if not expected:
        raise Forbidden(f"{what} is disabled: the server has no token configured", field=AUTH_FIELD)
    token = _bearer(request)
    if token is None:
        raise Unauthorized(f"{what} needs 'Authorization: Bearer <token>'", field=AUTH_FIELD)
    if not hmac.compare_digest(token.encode(), expected.encode()):
        raise Forbidden(f"the token is not valid for {what}", field=AUTH_FIELD)


# Declares the bearer scheme in OpenAPI for the routes that need the admin token; the check
# itself is check_token's, so a missing token is our 401 in the one error shape.
admin_bearer = HTTPBearer(
    auto_error=False, scheme_name="bearerAuth", description="GPU_ADVISOR_ADMIN_TOKEN"
)


def _admin_check(what: str) -> Callable[..., None]:
    def require_admin(
        request: Request,
        settings: SettingsDep,
        _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(admin_bearer)] = None,
    ) -> None:
        check_token(request, settings.admin_token, what)

    return require_admin


require_admin = _admin_check("editing the catalog")

AdminDep = Annotated[None, Depends(require_admin)]
# The same admin token, for the one admin operation outside the catalog.
ReportAdminDep = Annotated[None, Depends(_admin_check("deleting device reports"))]

# Every list under /api pages alike: `limit` and `offset` count items (an offset is no page
# number), and the page answers `total`, `limit`, `offset` and `items`.
LIMIT = "the most items to return (a count)"
OFFSET = "items to skip before the first one returned (a count of items, not of pages)"

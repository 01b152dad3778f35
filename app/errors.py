"""Typed errors and the one error shape.

Services raise these; ``main.py`` turns them into ``{"error": {"code", "message",
"details"}}`` for ``/api`` and into an HTML error page for pages.
"""

from __future__ import annotations

from typing import Any


class AppError(Exception):
    status_code = 400
    code = "bad_request"

    def __init__(
        self, message: str, *, field: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.details: dict[str, Any] = dict(details or {})
        if field is not None:
            self.details.setdefault("field", field)


class NotFound(AppError):
    status_code = 404
    code = "not_found"


class InvalidInput(AppError):
    status_code = 422
    code = "invalid_input"


class Conflict(AppError):
    status_code = 409
    code = "conflict"


class Unauthorized(AppError):
    status_code = 401
    code = "unauthorized"


class Forbidden(AppError):
    status_code = 403
    code = "forbidden"


class PayloadTooLarge(AppError):
    status_code = 413
    code = "payload_too_large"


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}

"""Typed errors and the one error shape.

Services raise these; ``main.py`` turns them into ``{"error": {"code", "message",
"details"}}`` for ``/api`` and into an HTML error page for pages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

# re-exported: the API, the form and the CLI import it from here
from app.validation_words import error_text as error_text
from app.validation_words import every_problem as every_problem


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


_REQUEST_PARTS = ("body", "query", "path", "header")


_UNION_BRANCH = re.compile(r"^(?:str|int|float|bool|none|[a-z-]+\[.*\])$")


def field_path(loc: Sequence[Any], default: str) -> str:
    """A validation error's location as the dotted field a user wrote ('constraints.max_gpus'),
    without FastAPI's leading request part."""
    parts = list(loc)
    if parts and parts[0] in _REQUEST_PARTS:
        # ("body", 12) is a JSON decode error at character 12: the field is the body itself
        if all(isinstance(p, int) for p in parts[1:]):
            return str(parts[0])
        parts = parts[1:]
    # a union's failing branch is named in the location ('device_report_id', 'str'): the
    # user wrote the field, not the branch
    parts = [p for p in parts if not (isinstance(p, str) and _UNION_BRANCH.match(p))]
    return ".".join(str(p) for p in parts) or default


def invalid_input_from(exc: ValidationError, default_field: str = "body") -> InvalidInput:
    """The first problem of a pydantic validation, as an InvalidInput naming its field."""
    first = exc.errors()[0]
    field = field_path(first["loc"], default_field)
    return InvalidInput(f"{field}: {error_text(first)}", field=field)


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def no_offers_from(unknown: Iterable[str], known: Iterable[str]) -> str:
    """A cloud filter that names a provider no offer comes from: the ones there are, and how a
    cloud gets in. The shipped SkyPilot snapshot has no AWS or GCP rows (data/offers/README.md),
    and an engineer renting there had read only "no offer comes from aws" with no way on."""
    return (
        f"no offer comes from {', '.join(unknown)}; the providers with offers are "
        f"{', '.join(sorted(known))} (the shipped snapshot leaves AWS and GCP out: load a "
        "cloud's SkyPilot vms.csv with `gpu-advisor offers import`)"
    )

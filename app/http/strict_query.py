"""One rule for the API's query strings: a parameter the endpoint does not declare, or one
given with an empty value, is a 422 naming it, as an unknown or empty body field is.

A typo (``?max_hourly=0.2``) or a cleared form field (``?gpu=``) read as "no filter" and
answered a different question than the one asked. Pages under ``/`` are not held to it:
browsers and link trackers add parameters of their own."""

from __future__ import annotations

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel

from app.errors import InvalidInput
from app.http.guard import short

# Per (path, methods): an app's routes are fixed once it starts, and every app built from
# this code declares the same parameters on the same route.
_declared: dict[tuple[str, str], tuple[str, ...]] = {}


def declared_query(route: APIRoute) -> tuple[str, ...]:
    """The query parameter names a route reads, its dependencies' included."""
    key = (route.path_format, ",".join(sorted(route.methods or ())))
    names = _declared.get(key)
    if names is None:
        names = _declared[key] = tuple(dict.fromkeys(_names(route.dependant)))
    return names


def _names(dependant: Dependant) -> list[str]:
    names: list[str] = []
    for field in dependant.query_params:
        annotation = field.field_info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            # a query-parameter model: its fields are the parameters
            names.extend(f.alias or n for n, f in annotation.model_fields.items())
        else:
            names.append(field.alias)
    for sub in dependant.dependencies:
        names.extend(_names(sub))
    return names


async def strict_query(request: Request) -> None:
    # async: a check of the query string needs no thread from the pool
    if not request.url.path.startswith("/api/") or not request.query_params:
        return
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    allowed = declared_query(route)
    for name, value in request.query_params.multi_items():
        if name not in allowed:
            takes = ", ".join(allowed) if allowed else "no query parameters"
            raise InvalidInput(
                f"unknown query parameter '{short(name, 40)}'; "
                f"{request.method} {route.path} takes: {takes}",
                field=short(name, 40),
            )
        if not value.strip():
            raise InvalidInput(
                f"{name}: empty; give a value or leave the parameter out", field=name
            )

"""One rule for the API's query strings: a parameter the endpoint does not declare, or one
given with an empty value, is a 422 naming it, as an unknown or empty body field is.

A typo (``?max_hourly=0.2``) or a cleared form field (``?gpu=``) read as "no filter" and
answered a different question than the one asked. Pages under ``/`` are not held to it:
browsers and link trackers add parameters of their own."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from types import UnionType

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel

from app.errors import InvalidInput
from app.http.guard import short

# Per (path, methods): an app's routes are fixed once it starts, and every app built from
# this code declares the same parameters on the same route. Each name with whether it takes
# several values (a list parameter: ?vendor=a&vendor=b).
_declared: dict[tuple[str, str], dict[str, bool]] = {}


def declared_query(route: APIRoute) -> dict[str, bool]:
    """The query parameter names a route reads, its dependencies' included, each with whether
    it takes several values."""
    key = (route.path_format, ",".join(sorted(route.methods or ())))
    names = _declared.get(key)
    if names is None:
        names = _declared[key] = {}
        for name, many in _names(route.dependant):
            names[name] = names.get(name, False) or many
    return names


def _takes_many(annotation: object) -> bool:
    """A list (or other sequence) annotation, bare or inside Optional/Annotated."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _takes_many(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is UnionType:
        return any(_takes_many(a) for a in typing.get_args(annotation))
    target = origin or annotation
    return (
        isinstance(target, type)
        and issubclass(target, (list, tuple, set, frozenset, Sequence))
        and not issubclass(target, (str, bytes))
    )


def _names(dependant: Dependant) -> list[tuple[str, bool]]:
    names: list[tuple[str, bool]] = []
    for field in dependant.query_params:
        annotation = field.field_info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            # a query-parameter model: its fields are the parameters
            names.extend(
                (f.alias or n, _takes_many(f.annotation))
                for n, f in annotation.model_fields.items()
            )
        else:
            names.append((field.alias, _takes_many(annotation)))
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
    seen: set[str] = set()
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
        # ?limit=1&limit=2 or ?backend=cuda&backend=rocm had been read as its last value:
        # another question than the one asked, answered without a word
        if name in seen and not allowed[name]:
            raise InvalidInput(f"{name}: given more than once; it takes one value", field=name)
        seen.add(name)

"""create_app(settings) -> FastAPI: routers, static, error handlers, start-up."""

from __future__ import annotations

import logging
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from sqlalchemy.exc import DataError, IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from app import __version__
from app.config import Settings, get_settings
from app.db import make_engine, make_session_factory, session_scope
from app.errors import AppError, error_body, error_text, field_path
from app.http.compression import LeveledGZip
from app.http.guard import GuardMiddleware, short
from app.http.observability import ObservabilityMiddleware, configure_logging, metrics_response
from app.http.strict_query import strict_query
from app.web.static_assets import mount_static

log = logging.getLogger("gpu_advisor")


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _field_of(loc: tuple[Any, ...] | list[Any]) -> str:
    if loc and loc[0] == "query":
        # ?vendor=a&vendor=b: the user's field is 'vendor', not 'vendor.1'
        loc = [p for p in loc if not isinstance(p, int)]
    return field_path(loc, "request")


def allowed_methods(request: Request) -> list[str]:
    """The methods some route takes at this path, asked of the router method by method:
    FastAPI keeps one route per method (and included routers answer only whole matches).
    Mounts and hosts are not asked (they match a path whatever the method), and the routes are
    asked against the app's root_path: a 405 raised inside a mount (static files) carries the
    mount's root_path, under which no top-level route matches."""
    from starlette.routing import Host, Match, Mount
    from starlette.staticfiles import StaticFiles

    root = request.scope.get("app_root_path", "")
    routes = request.app.router.routes
    base = {**request.scope, "root_path": root}
    for route in routes:
        static = isinstance(route, Mount) and isinstance(route.app, StaticFiles)
        if static and route.matches(base)[0] is Match.FULL:
            return ["GET", "HEAD"]  # what StaticFiles serves
    allowed = []
    for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"):
        scope = {**base, "method": method}
        if any(
            not isinstance(route, (Mount, Host)) and route.matches(scope)[0] is Match.FULL
            for route in routes
        ):
            allowed.append(method)
    return allowed


def _not_allowed(request: Request, starlette_allow: str | None) -> tuple[str, str | None]:
    """A 405's message and Allow header. RFC 9110 §15.5.6: a 405 lists the methods the path
    takes; Starlette's Allow names only the first route that matched the path (GET of
    /api/v1/gpus, not its POST). Where no route answers, Starlette's own header stays."""
    allowed = ", ".join(allowed_methods(request))
    if not allowed:
        return f"{request.method} is not allowed here", starlette_allow
    return f"{request.method} is not allowed here; this path takes {allowed}", allowed


def _render_error(request: Request, status: int, title: str, message: str) -> Response:
    templates = getattr(request.app.state, "templates", None)
    if templates is None:
        return HTMLResponse(f"<h1>{status} {title}</h1>", status_code=status)
    return templates.TemplateResponse(
        request,
        "error.html",
        {"status": status, "title": title, "message": message},
        status_code=status,
    )


def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    message = short(str(exc.detail), 300) if exc.detail else code
    # every client error names what to fix: the path, the method, else the request
    field = {404: "path", 405: "method"}.get(exc.status_code, "request")
    if exc.status_code == 404:
        message = f"nothing at {short(request.url.path)}"
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        theirs = [headers.pop(k) for k in list(headers) if k.lower() == "allow"]
        message, allow = _not_allowed(request, theirs[0] if theirs else None)
        if allow:
            headers["Allow"] = allow
    if _is_api(request):
        body = error_body(code, message, {"field": field})
        return JSONResponse(body, status_code=exc.status_code, headers=headers or None)
    page = _render_error(request, exc.status_code, code.replace("_", " "), message)
    page.headers.update(headers)
    return page


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def app_error(request: Request, exc: AppError) -> Response:
        if _is_api(request):
            return JSONResponse(
                error_body(exc.code, exc.message, exc.details), status_code=exc.status_code
            )
        return _render_error(request, exc.status_code, exc.code.replace("_", " "), exc.message)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        errors = [
            {"field": _field_of(e.get("loc", ())), "message": error_text(e)} for e in exc.errors()
        ]
        first = errors[0] if errors else {"field": "request", "message": "invalid"}
        message = f"{first['field']}: {first['message']}"
        if _is_api(request):
            return JSONResponse(
                error_body("invalid_input", message, {"field": first["field"], "errors": errors}),
                status_code=422,
            )
        return _render_error(request, 422, "invalid input", message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _http_error(request, exc)

    def _plain(request: Request, status: int, code: str, message: str, **extra: Any) -> Response:
        if _is_api(request):
            headers = {"retry-after": "5"} if status == 503 else None
            body = error_body(code, message, extra or None)
            return JSONResponse(body, status_code=status, headers=headers)
        return _render_error(request, status, code.replace("_", " "), message)

    @app.exception_handler(OperationalError)
    @app.exception_handler(PoolTimeout)
    async def database_unavailable(request: Request, exc: Exception) -> Response:
        # The database is down, unreachable, locked past the busy timeout or out of
        # connections: the request may succeed later, so 503, never a bare 500.
        log.warning(
            "database unavailable on %s: %s",
            short(request.url.path),
            short(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 300),
        )
        return _plain(request, 503, "database_unavailable",
                      "the database is unavailable; retry shortly")  # fmt: skip

    @app.exception_handler(IntegrityError)
    async def integrity_conflict(request: Request, exc: IntegrityError) -> Response:
        # Two writers raced for the same unique value; the loser is told, nothing half-done.
        return _plain(request, 409, "conflict",
                      "the change conflicts with a concurrent change; reload and retry",
                      field="request")  # fmt: skip

    @app.exception_handler(DataError)
    async def data_error(request: Request, exc: DataError) -> Response:
        return _plain(
            request,
            422,
            "invalid_input",
            "a value is out of the range the database can store",
            field="request",
        )

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        # Never log the input: a short line plus the innermost frames, bounded in size.
        frames = "".join(traceback.format_exception(exc, limit=-8))[-8000:]
        log.error("unhandled %s on %s\n%s", type(exc).__name__, short(request.url.path), frames)
        message = "internal error; it has been logged"
        if _is_api(request):
            return JSONResponse(error_body("internal_error", message), status_code=500)
        return _render_error(request, 500, "internal error", message)


def prepare_database(settings: Settings) -> None:
    """Migrate and seed under the database's lock (app/system/migrate.py), as configured."""
    from app.system import migrate

    if settings.migrate_on_start or settings.seed_on_start:
        migrate.prepare(
            settings, migrate_schema=settings.migrate_on_start, seed=settings.seed_on_start
        )


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    import asyncio

    from app.system.health import keep_checking

    checker = asyncio.create_task(keep_checking(app))
    _warm(app)
    try:
        yield
    finally:
        checker.cancel()
        app.state.health_engine.dispose()


def _warm(app: FastAPI) -> None:
    """The recommendation caches, loaded before the first request; an optimisation only, so a
    database that cannot answer now leaves them to the first request (and the health check
    to say why)."""
    from app.recommend import orchestrate

    try:
        with session_scope(app.state.session_factory) as session:
            orchestrate.warm(session, app.state.settings)
    except SQLAlchemyError:
        log.warning("recommendation caches not loaded at start-up", exc_info=True)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    configure_logging(settings.log_level, json_lines=settings.log_format == "json")
    prepare_database(settings)
    engine = make_engine(settings.database_url, pool_size=settings.max_concurrent_requests)

    app = FastAPI(
        title="GPU Advisor",
        version=__version__,
        description="Which GPU should I buy or rent for this deep-learning job, and why.\n\n"
        "Every error has one shape, `{error: {code, message, details: {field}}}`. Query "
        "parameters are strict under /api: one the operation does not take, one given "
        "empty (leave it out instead), one that takes a single value given twice, or a "
        "catalog slug the catalog lacks is a 422 naming it, as an unknown body field is.",
        docs_url=None,  # served below from vendored assets, so /docs works offline
        redoc_url=None,
        lifespan=_lifespan,
        # every route: an API query parameter the route does not read, or an empty one, is a
        # 422 naming it (app/http/strict_query.py); pages are left alone
        dependencies=[Depends(strict_query)],
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = make_session_factory(engine)
    # Readiness probes use their own connections: they answer while the pool is busy.
    app.state.health_engine = make_engine(settings.database_url, pool_size=1)

    from app.catalog.router import router as catalog_router
    from app.offers.router import gpu_router as gpu_offers_router
    from app.offers.router import router as offers_router
    from app.recommend.router import router as recommend_router
    from app.reports import router as reports
    from app.system.router import router as system_router
    from app.web import pages

    app.include_router(system_router)
    app.include_router(catalog_router)
    app.include_router(gpu_offers_router)
    app.include_router(offers_router)
    app.include_router(recommend_router)
    reports.install(app)
    pages.install(app)

    mount_static(app)
    _install_docs(app)
    _install_metrics(app)
    install_error_handlers(app)
    from app.http import openapi

    openapi.install(app)
    # Outermost last: the request id and timing cover everything, the guard and gzip included.
    # gzip: level 1 for API JSON, 5 for pages (app/http/compression.py says why)
    app.add_middleware(LeveledGZip, minimum_size=1024)
    app.add_middleware(GuardMiddleware, settings=settings)
    app.add_middleware(ObservabilityMiddleware, router=app.router)
    return app


def _install_metrics(app: FastAPI) -> None:
    from app.reports.repository import count_runs_by_status

    @app.get("/metrics", include_in_schema=False)
    def metrics() -> Response:
        """Prometheus exposition (README "Operations")."""
        with session_scope(app.state.session_factory) as session:
            runs = count_runs_by_status(session)
        return metrics_response(runs)


SWAGGER = "vendor/swagger-ui-5.35.0"


def _install_docs(app: FastAPI) -> None:
    from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html

    from app.web.static_assets import static_url

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="GPU Advisor API",
            swagger_js_url=static_url(f"{SWAGGER}/swagger-ui-bundle.js"),
            swagger_css_url=static_url(f"{SWAGGER}/swagger-ui.css"),
            swagger_favicon_url=static_url("favicon.svg"),
            oauth2_redirect_url="/docs/oauth2-redirect",
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    def swagger_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

"""JSON API: device reports (upload, list, show) and benchmark runs on the server."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, FastAPI, Header, Path, Query, Request, Response, status
from fastapi.concurrency import run_in_threadpool

from app.deps import LIMIT, OFFSET, ReportAdminDep, SessionDep, SettingsDep, check_token
from app.errors import PayloadTooLarge
from app.reports import service
from app.reports.runs import Runs, worker_page
from app.reports.schemas import (
    MAX_ID,
    ReportOut,
    ReportPage,
    RunCreate,
    RunOut,
    RunPage,
    RunStarted,
    WorkerPage,
)

router = APIRouter(prefix="/api/v1", tags=["device reports"])


def _runs(request: Request) -> Runs:
    runs: Runs = request.app.state.runs
    return runs


@router.post(
    "/device-reports",
    response_model=ReportOut,
    status_code=status.HTTP_201_CREATED,
    summary="Store a report written by `gpu-advisor bench`",
    # the answer to a report whose content is already stored (documented: a client that
    # checks the status against the document must not read a duplicate as an error)
    responses={
        status.HTTP_200_OK: {
            "model": ReportOut,
            "description": "The report's content was already stored: the first copy, "
            "with duplicate: true (nothing new stored)",
        }
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    },
)
async def upload_report(
    request: Request,
    response: Response,
    settings: SettingsDep,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            min_length=1,
            max_length=200,
            pattern=r"^[\x21-\x7e]+$",
            description="Any printable ASCII string unique to this report: a retried "
            "upload with the same key stores nothing new and answers with the first copy "
            "(201, duplicate: true). Without a key, a report whose content is already "
            "stored is answered with that copy too, with 200 and duplicate: true.",
        ),
    ] = None,
) -> ReportOut:
    # Async only to read the body; the database work runs in a thread, in its own
    # transaction, committed before the answer is built (never a blocking call on the loop).
    if settings.upload_token:
        check_token(request, settings.upload_token, "uploading reports")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > settings.max_report_bytes:
        raise PayloadTooLarge(f"a report may be at most {settings.max_report_bytes} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > settings.max_report_bytes:
            raise PayloadTooLarge(f"a report may be at most {settings.max_report_bytes} bytes")
    out, replayed = await run_in_threadpool(
        service.store_once,
        request.app.state.session_factory,
        body,
        "upload",
        idempotency_key=idempotency_key,
        retention=(settings.report_retention_count, settings.report_retention_bytes),
    )
    if out.duplicate:
        # the same content stored before under another key or none: nothing was created
        response.status_code = status.HTTP_200_OK
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
        # a retry under its key keeps the first answer's 201, but its body says the one fact
        # as every re-upload does: it had read duplicate: false where the CLI said "already
        # stored" (one word, the API's, for one fact)
        out = out.model_copy(update={"duplicate": True})
    return out


@router.get("/device-reports", response_model=ReportPage)
def list_reports(
    session: SessionDep,
    gpu_slug: Annotated[
        str | None,
        Query(max_length=80, description="a catalog slug (a slug the catalog lacks is a 422)"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description=LIMIT)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_ID, description=OFFSET)] = 0,
) -> ReportPage:
    if gpu_slug is not None:
        service.require_catalog_slug(session, gpu_slug, "gpu_slug")
    return service.list_reports(session, gpu_slug=gpu_slug, limit=limit, offset=offset)


@router.get("/device-reports/{report_id}", response_model=ReportOut)
def get_report(session: SessionDep, report_id: Annotated[int, Path(ge=1, le=MAX_ID)]) -> ReportOut:
    return service.get_report(session, report_id)


@router.delete(
    "/device-reports/{report_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Delete a stored report (admin token)",
)
def delete_report(
    _admin: ReportAdminDep, session: SessionDep, report_id: Annotated[int, Path(ge=1, le=MAX_ID)]
) -> Response:
    service.delete_report(session, report_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/benchmark-runs", response_model=RunStarted, status_code=status.HTTP_202_ACCEPTED)
def start_run(request: Request, settings: SettingsDep, body: RunCreate | None = None) -> RunStarted:
    if settings.run_token:
        check_token(request, settings.run_token, "starting benchmark runs")
    body = body or RunCreate()
    return _runs(request).start(body.profile, body.device, body.label)


@router.get("/benchmark-runs", response_model=RunPage, summary="Benchmark runs, newest first")
def list_runs(
    request: Request,
    limit: Annotated[int, Query(ge=1, le=500, description=LIMIT)] = 20,
    offset: Annotated[int, Query(ge=0, le=MAX_ID, description=OFFSET)] = 0,
) -> RunPage:
    return _runs(request).list(limit, offset)


@router.get("/benchmark-runs/{run_id}", response_model=RunOut)
def get_run(request: Request, run_id: str) -> RunOut:
    return _runs(request).get(run_id)


@router.delete("/benchmark-runs/{run_id}", response_model=RunOut)
def cancel_run(request: Request, settings: SettingsDep, run_id: str) -> RunOut:
    if settings.run_token:
        check_token(request, settings.run_token, "cancelling benchmark runs")
    return _runs(request).cancel(run_id)


@router.get("/workers", response_model=WorkerPage)
def list_workers(
    session: SessionDep,
    settings: SettingsDep,
    limit: Annotated[int, Query(ge=1, le=500, description=LIMIT)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_ID, description=OFFSET)] = 0,
) -> WorkerPage:
    """The benchmark workers and whether each is online, busy or offline."""
    return worker_page(session, settings.run_heartbeat_lapse_s, limit, offset)


def install(app: FastAPI) -> None:
    app.state.runs = Runs(app.state.settings, app.state.session_factory)
    app.include_router(router)

"""JSON API: device reports (upload, list, show) and benchmark runs on the server."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, FastAPI, Path, Query, Request, status

from app.deps import SessionDep, SettingsDep, check_token
from app.errors import PayloadTooLarge
from app.reports import service
from app.reports.jobs import JobManager
from app.reports.schemas import MAX_ID, ReportOut, ReportPage, RunCreate, RunOut

router = APIRouter(prefix="/api/v1", tags=["device reports"])


def _jobs(request: Request) -> JobManager:
    jobs: JobManager = request.app.state.jobs
    return jobs


@router.post(
    "/device-reports",
    response_model=ReportOut,
    status_code=status.HTTP_201_CREATED,
    summary="Store a report written by `gpu-advisor bench`",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    },
)
async def upload_report(request: Request, session: SessionDep, settings: SettingsDep) -> ReportOut:
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
    return service.store_report(session, body, origin="upload")


@router.get("/device-reports", response_model=ReportPage)
def list_reports(
    session: SessionDep,
    gpu_slug: Annotated[str | None, Query(max_length=80)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
) -> ReportPage:
    return service.list_reports(session, gpu_slug=gpu_slug, limit=limit, offset=offset)


@router.get("/device-reports/{report_id}", response_model=ReportOut)
def get_report(
    session: SessionDep, report_id: Annotated[int, Path(ge=1, le=MAX_ID)]
) -> ReportOut:
    return service.get_report(session, report_id)


@router.post("/benchmark-runs", response_model=RunOut, status_code=status.HTTP_202_ACCEPTED)
def start_run(request: Request, body: RunCreate | None = None) -> RunOut:
    body = body or RunCreate()
    return _jobs(request).start(body.profile, body.device)


@router.get("/benchmark-runs", response_model=list[RunOut])
def list_runs(request: Request) -> list[RunOut]:
    return _jobs(request).list()


@router.get("/benchmark-runs/{run_id}", response_model=RunOut)
def get_run(request: Request, run_id: str) -> RunOut:
    return _jobs(request).get(run_id)


@router.delete("/benchmark-runs/{run_id}", response_model=RunOut)
def cancel_run(request: Request, run_id: str) -> RunOut:
    return _jobs(request).cancel(run_id)


def install(app: FastAPI) -> None:
    app.state.jobs = JobManager(app.state.settings, app.state.session_factory)
    app.include_router(router)

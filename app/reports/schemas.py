"""API shapes for device reports and benchmark runs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


def _as_utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes (its DateTime(timezone=True) keeps no offset) and
    # PostgreSQL aware ones; every value stored is UTC, so both leave here as UTC with an
    # offset ("…Z"), as OpenAPI's date-time format requires.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


UtcDatetime = Annotated[datetime, AfterValidator(_as_utc)]

# Report ids are INTEGER columns: 32-bit signed on PostgreSQL (SQLite's are wider); one
# bound for every edge, so a larger id is "not found"/422, never a driver overflow.
MAX_ID = 2**31 - 1

RunStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]


class ReportSummary(BaseModel):
    id: int
    created_at: UtcDatetime
    device_name: str
    backend: str
    gpu_slug: str | None
    profile: str
    origin: str
    headline: dict[str, float] = Field(
        description="Best measured matmul TFLOPS per precision and bandwidth_gbs."
    )


class ReportOut(ReportSummary):
    report: dict[str, Any]
    duplicate: bool = Field(
        default=False,
        description="true when a report with the same content was already stored (by an "
        "earlier upload, under this Idempotency-Key or none): this is that copy, and nothing "
        "new was stored (a re-upload counts as no extra machine)",
    )


class ReportPage(BaseModel):
    total: int = Field(description="items matching the filters, before limit and offset")
    limit: int = Field(description="the most items this page holds, as asked")
    offset: int = Field(description="items skipped before this page, as asked")
    items: list[ReportSummary]


class RunCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    profile: Literal["quick", "standard"] = "quick"
    device: str = Field(default="auto", pattern=r"^(auto|cpu|mps|xpu|cuda(:\d{1,2})?)$")
    label: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="The worker to run on (`gpu-advisor worker --label`); "
        "default: the server's own host name.",
    )


class RunOut(BaseModel):
    id: str
    status: RunStatus
    profile: str
    device: str
    progress: float = Field(description="fraction of the run done, 0 to 1")
    step: str | None
    step_label: str | None = Field(None, description="the step in words, for people")
    error: str | None
    report_id: int | None = Field(
        description="the stored device report's id once the run is done (GET "
        "/api/v1/device-reports/{report_id}); null before"
    )
    label: str | None = Field(description="The worker label the run was sent to.")
    worker: str | None = Field(description="The label of the worker that took it.")
    heartbeat_at: UtcDatetime | None
    cancel_requested: bool
    created_at: UtcDatetime
    started_at: UtcDatetime | None
    finished_at: UtcDatetime | None


class RunStarted(RunOut):
    """POST /api/v1/benchmark-runs: the queued run, and what may keep it waiting."""

    warning: str | None = Field(
        None,
        description="why the run may wait: no worker with its label has ever reported "
        "(it is queued all the same: a worker started later with that label takes it)",
    )


class RunPage(BaseModel):
    total: int = Field(description="items matching the filters, before limit and offset")
    limit: int = Field(description="the most items this page holds, as asked")
    offset: int = Field(description="items skipped before this page, as asked")
    items: list[RunOut] = Field(description="newest first")


WorkerState = Literal["online", "busy", "offline"]


class WorkerOut(BaseModel):
    """A benchmark worker as the queue sees it: online (idle), busy (running a run) or offline
    (no word for longer than the heartbeat lapse)."""

    label: str
    host: str
    backend: str = Field(description="cuda, rocm, mps, xpu, cpu, or unknown")
    device_name: str | None
    state: WorkerState
    cpu_only: bool = Field(description="the worker has no GPU: its runs measure the CPU")
    last_seen: UtcDatetime
    run_id: str | None = Field(description="the run it is on, when busy")


class WorkerPage(BaseModel):
    total: int = Field(description="items matching the filters, before limit and offset")
    limit: int = Field(description="the most items this page holds, as asked")
    offset: int = Field(description="items skipped before this page, as asked")
    items: list[WorkerOut] = Field(description="the most recently seen first")

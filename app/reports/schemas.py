"""API shapes for device reports and benchmark runs."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Report ids are INTEGER columns: 32-bit signed on PostgreSQL (SQLite's are wider); one
# bound for every edge, so a larger id is "not found"/422, never a driver overflow.
MAX_ID = 2**31 - 1

RunStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]


class ReportSummary(BaseModel):
    id: int
    created_at: datetime
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


class ReportPage(BaseModel):
    total: int
    limit: int
    offset: int
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
    progress: float
    step: str | None
    step_label: str | None = Field(None, description="the step in words, for people")
    error: str | None
    report_id: int | None
    label: str | None = Field(description="The worker label the run was sent to.")
    worker: str | None = Field(description="The label of the worker that took it.")
    heartbeat_at: datetime | None
    cancel_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


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
    last_seen: datetime
    run_id: str | None = Field(description="the run it is on, when busy")

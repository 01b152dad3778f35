"""This machine: /device and /device/reports/{id}."""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.datastructures import UploadFile

from app.catalog import service as catalog
from app.deps import SessionDep, SettingsDep
from app.errors import AppError, NotFound
from app.http.guard import short
from app.numbers import sig_figs
from app.reports import service as reports
from app.reports.runs import worker_states
from app.web import charts
from app.web.templating import render

router = APIRouter(include_in_schema=False)


# ---------------------------------------------------------------------------- this machine


def baseline_href(back: str | None, report_id: int) -> str:
    """Where "Use as baseline" goes: the question the user came from, with this report as
    their machine; without one, a new question."""
    pairs = [(k, v) for k, v in parse_qsl(back or "", keep_blank_values=False)
             if k != "device_report_id"]  # fmt: skip
    if not pairs:
        return f"/?device_report_id={report_id}"
    return "/recommendations?" + urlencode([*pairs, ("device_report_id", str(report_id))])


def _device_context(
    request: Request, session: Any, settings: Any, error: str | None
) -> dict[str, Any]:
    page = reports.list_reports(session, limit=100)
    back = request.query_params.get("back")
    return {
        "reports": page,
        "upload_error": error,
        "needs_token": bool(settings.upload_token),
        "workers": worker_states(session, settings.run_heartbeat_lapse_s),
        "baseline": {r.id: baseline_href(back, r.id) for r in page.items},
        "back": back,
    }


@router.get("/device", response_class=HTMLResponse)
def device(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    return render(request, "device.html", _device_context(request, session, settings, None))


@router.post("/device/reports", response_class=HTMLResponse)
async def upload(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The upload form without JavaScript: the same checks and service as the API."""
    error: str | None = None
    try:
        form = await request.form(
            max_files=1, max_fields=4, max_part_size=settings.max_report_bytes
        )
    except Exception:  # a malformed or oversized multipart body is the user's, not a 500
        form = None
        error = (
            "the upload could not be read "
            f"(a report may be at most {settings.max_report_bytes:,} bytes)"
        )
    if form is not None:
        token = str(form.get("token") or "")
        if settings.upload_token and not hmac.compare_digest(token, settings.upload_token):
            error = "this server needs its upload token to store reports"
        else:
            file = form.get("report")
            raw = b""
            if isinstance(file, UploadFile):
                raw = await file.read(settings.max_report_bytes + 1)
            if not raw:
                error = "choose a report file (the JSON that gpu-advisor bench writes)"
            elif len(raw) > settings.max_report_bytes:
                error = f"a report may be at most {settings.max_report_bytes:,} bytes"
            else:
                try:
                    # in a thread: the database work must never block the event loop
                    stored, _ = await run_in_threadpool(
                        reports.store_once,
                        request.app.state.session_factory,
                        raw,
                        "upload",
                        idempotency_key=None,
                        retention=(
                            settings.report_retention_count,
                            settings.report_retention_bytes,
                        ),
                    )
                except AppError as exc:
                    error = exc.message
                else:
                    return RedirectResponse(f"/device/reports/{stored.id}", status_code=303)
    ctx = _device_context(request, session, settings, error)
    return render(request, "device.html", ctx, status_code=422)


@router.get("/device/reports/{report_id}", response_class=HTMLResponse)
def device_report(request: Request, report_id: str, session: SessionDep) -> HTMLResponse:
    # ASCII digits only ('²'.isdigit() is True) and no longer than the largest id, so
    # int() never sees a superscript or a 5,000-digit number.
    if not (report_id.isascii() and report_id.isdigit() and len(report_id) <= 10):
        raise NotFound(f"no device report with id {short(report_id, 40)}", field="id")
    stored = reports.get_report(session, int(report_id))
    from app.bench.report import BenchReport

    try:
        bench: BenchReport | None = BenchReport.model_validate(stored.report)
    except ValidationError:
        bench = None
    gpu = None
    if stored.gpu_slug:
        try:
            gpu = catalog.get_gpu(session, stored.gpu_slug)
        except NotFound:
            gpu = None
    ctx = {
        "stored": stored,
        "bench": bench,
        "gpu": gpu,
        **(_report_charts(bench, gpu) if bench is not None else {}),
    }
    return render(request, "report.html", ctx)


def _report_charts(bench: Any, gpu: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # matmul TFLOPS per precision vs the catalog peak
    rows = []
    if bench.matmul is not None:
        for precision, summary in bench.matmul.by_precision.items():
            fig = summary.best
            peak = fig.peak
            if peak is None and gpu is not None:
                peak = getattr(gpu, f"{precision}_tflops", None)
            rows.append(
                {
                    "label": precision + ("" if summary.native else " (emulated)"),
                    "value": fig.value,
                    "ref": peak,
                }
            )
    # a CPU's figures are GFLOPS: say them so rather than 0.0381 TFLOPS
    top = max((r["value"] or 0 for r in rows), default=0)
    unit, scale = ("GFLOPS", 1e3) if top and top < 1 else ("TFLOPS", 1.0)
    for r in rows:
        r["value"] = r["value"] * scale if r["value"] is not None else None
        r["ref"] = r["ref"] * scale if r["ref"] is not None else None
    out["matmul_unit"] = unit
    out["matmul_chart"] = charts.bar_chart(
        rows, value_name="measured", ref_name="catalog peak", unit=unit, label_w=140
    )
    # throughput vs batch size
    series = []
    if bench.batch_scaling is not None:
        for curve in bench.batch_scaling.curves:
            pts = [
                {
                    "x": p.batch,
                    "y": p.samples_per_s.value,
                    "label": "",
                    # as the pages write figures (sig_figs): ",.4g" wrote 123,456 as 1.235e+05
                    "title": f"batch {p.batch}: {sig_figs(p.samples_per_s.value or 0)} samples/s",
                }
                for p in curve.points
                if p.samples_per_s.value is not None
            ]
            name = f"{curve.workload.replace('_', ' ')} · {curve.mode} · {curve.precision}"
            series.append((name, pts))
    out["batch_chart"] = charts.xy_chart(
        series[:4], x_label="batch size", y_label="samples/s", log_x=True
    )
    out["batch_series"] = [s for s, _ in series[:4]]
    # pinned vs pageable transfer
    tseries: dict[str, list[dict[str, Any]]] = {}
    if bench.transfer is not None:
        for t in bench.transfer.rows:
            if t.figure.value is None:
                continue
            key = f"{t.direction} {t.memory}"
            tseries.setdefault(key, []).append(
                {
                    "x": t.size_bytes / 1e6,
                    "y": t.figure.value,
                    "label": "",
                    "title": f"{key}, {sig_figs(t.size_bytes / 1e6)} MB: "
                    f"{sig_figs(t.figure.value)} GB/s",
                }
            )
    tnames = sorted(tseries)[:4]
    out["transfer_chart"] = charts.xy_chart(
        [(n, sorted(tseries[n], key=lambda p: p["x"])) for n in tnames],
        x_label="transfer size (MB)",
        y_label="GB/s",
        log_x=True,
    )
    out["transfer_series"] = tnames
    # memory bandwidth per kernel
    bw_rows = []
    if bench.memory is not None:
        for b in bench.memory.rows:
            peak = b.figure.peak or (gpu.memory_bandwidth_gbs if gpu is not None else None)
            bw_rows.append({"label": b.kernel, "value": b.figure.value, "ref": peak})
    out["bandwidth_chart"] = charts.bar_chart(
        bw_rows, value_name="measured", ref_name="catalog peak", unit="GB/s", label_w=100
    )
    return out

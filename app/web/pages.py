"""HTML pages. They call the same services as the JSON API and never import SQLAlchemy."""

from __future__ import annotations

import csv
import io
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import markdown
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from markupsafe import Markup
from pydantic import ValidationError

from app.catalog import service as catalog
from app.catalog.repository import SORTABLE, GpuFilter
from app.config import Settings
from app.deps import SessionDep, SettingsDep
from app.errors import AppError, InvalidInput, NotFound, error_body
from app.recommend import orchestrate
from app.recommend import schemas as rs
from app.reports import service as reports
from app.web import charts
from app.web.forms import (
    CATALOG_PRECISIONS,
    CATALOG_SORTS,
    PAGE_SIZE,
    QUESTION_FIELDS,
    SEGMENTS,
    VENDORS,
    QuestionForm,
    field_for_loc,
    field_for_name,
    parse_catalog,
    parse_question,
    parse_slugs,
)
from app.web.templating import make_templates

router = APIRouter(include_in_schema=False)

# Pages load nothing from another host; this header makes the browser enforce it.
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)


def install(app: FastAPI) -> None:
    app.state.templates = make_templates()
    app.include_router(router)


def render(
    request: Request, name: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    templates = request.app.state.templates
    response: HTMLResponse = templates.TemplateResponse(
        request, name, context, status_code=status_code
    )
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    return response


# ---------------------------------------------------------------------------- presets


@dataclass(frozen=True)
class PresetView:
    id: str
    name: str
    description: str
    family: str
    params: float
    defaults: dict[str, Any]
    model: dict[str, Any]


def _presets(settings: Settings) -> list[PresetView]:
    return [
        PresetView(
            id=w.id,
            name=w.name,
            description=w.description,
            family=w.model.family,
            params=w.model.params,
            defaults=dict(w.defaults),
            model=w.model.model_dump(),
        )
        for w in orchestrate.list_workloads(settings).workloads
    ]


def _choices() -> dict[str, list[str]]:
    """Allowed values straight from the request schema, so form and API never drift."""
    literals = {
        "task": rs.Task,
        "family": rs.Family,
        "precision": rs.Precision,
        "optimizer": rs.Optimizer,
        "peft": rs.Peft,
        "framework": rs.Framework,
        "acquisition": rs.Acquisition,
        "objective": rs.Objective,
        "vendors": rs.VendorName,
        "segments": rs.SegmentName,
    }
    return {name: [str(v) for v in typing.get_args(lit)] for name, lit in literals.items()}


def _preset_hints(presets: list[PresetView]) -> dict[str, dict[str, Any]]:
    """What a blank field means under each preset: shown as placeholders."""
    out: dict[str, dict[str, Any]] = {}
    for p in presets:
        hints: dict[str, Any] = {}
        for f in QUESTION_FIELDS:
            if f.path[:2] == ("workload", "model"):
                value = p.model.get(f.path[-1])
            elif f.path[0] == "workload":
                value = p.defaults.get(f.path[-1])
            else:
                continue
            if value is None:
                continue
            if isinstance(value, bool):
                value = "on" if value else "off"
            elif isinstance(value, float) and value.is_integer():
                value = int(value)
            hints[f.name] = value
        out[p.id] = hints
    return out


def _device_reports(session: Any) -> list[Any]:
    try:
        return list(reports.list_reports(session, limit=100).items)
    except AppError:
        return []


def _form_context(
    session: Any, form: QuestionForm, presets: list[PresetView]
) -> dict[str, Any]:
    hints = _preset_hints(presets)
    choices = _choices()
    return {
        "form": form,
        "fields": {f.name: f for f in QUESTION_FIELDS},
        "presets": presets,
        "preset_hints": hints,
        "current_hints": hints.get(str(form.values.get("preset") or ""), {}),
        "choices": choices,
        "device_reports": _device_reports(session),
    }


# ---------------------------------------------------------------------------- the question


@router.get("/", response_class=HTMLResponse)
def index(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    presets = _presets(settings)
    items = list(request.query_params.multi_items())
    form = parse_question(
        items, presets=[p.id for p in presets], choices=_choices(), use_defaults=True
    )
    # The home page shows the question; errors only appear once the user submits.
    form.errors.clear()
    return render(request, "index.html", _form_context(session, form, presets))


class _FormInvalid(Exception):
    def __init__(self, form: QuestionForm) -> None:
        self.form = form


def _answer(
    request: Request, session: Any, settings: Settings
) -> tuple[QuestionForm, list[PresetView], rs.RecommendationResponse]:
    presets = _presets(settings)
    form = parse_question(
        request.query_params.multi_items(), presets=[p.id for p in presets], choices=_choices()
    )
    if not form.ok:
        raise _FormInvalid(form)
    try:
        req = rs.RecommendationRequest.model_validate(form.data)
    except ValidationError as exc:
        for err in exc.errors():
            name = field_for_loc(err.get("loc", ())) or "_form"
            form.add_error(name, str(err.get("msg", "invalid")))
        raise _FormInvalid(form) from exc
    try:
        answer = orchestrate.recommend_for(session, settings, req)
    except (InvalidInput, NotFound) as exc:
        form.add_error(field_for_name(exc.field) or "_form", exc.message)
        raise _FormInvalid(form) from exc
    return form, presets, answer


def _invalid_page(
    request: Request, session: Any, settings: Settings, form: QuestionForm
) -> HTMLResponse:
    ctx = _form_context(session, form, _presets(settings))
    return render(request, "index.html", ctx, status_code=422)


@router.get("/recommendations", response_class=HTMLResponse)
def recommendations(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    try:
        form, presets, answer = _answer(request, session, settings)
    except _FormInvalid as exc:
        return _invalid_page(request, session, settings, exc.form)
    query = form.query()
    ctx = _form_context(session, form, presets)
    ctx.update(
        answer=answer,
        query=query,
        preset=next((p for p in presets if p.id == answer.workload.preset), None),
        price_charts=_price_charts(answer),
        memory_chart=_memory_chart(answer),
        per_dollar=_per_dollar_label(answer),
    )
    return render(request, "recommendations.html", ctx)


def _per_dollar_label(answer: rs.RecommendationResponse) -> str:
    unit = answer.recommendations[0].throughput.unit if answer.recommendations else "samples/s"
    thing = unit.split("/")[0] if "/" in unit else "samples"
    how = "rented" if answer.acquisition == "rent" else "bought"
    return f"{thing} per $ ({how})"


def _price_charts(answer: rs.RecommendationResponse) -> list[tuple[str, charts.Chart]]:
    bases = {"buy": ["buy"], "rent": ["rent"]}.get(answer.acquisition, ["buy", "rent"])
    unit = answer.recommendations[0].throughput.unit if answer.recommendations else ""
    out = []
    for basis in bases:
        points = []
        for row in answer.recommendations:
            unit_price = row.gpu.hourly_usd if basis == "rent" else row.gpu.purchase_usd
            if unit_price is None:
                continue
            points.append(
                {
                    "x": unit_price * row.num_gpus,
                    "y": row.throughput.value,
                    "label": f"{row.rank}",
                    "title": f"#{row.rank} {row.num_gpus}× {row.gpu.name}: "
                    f"{row.throughput.value:,.4g} {row.throughput.unit}",
                    "href": f"#rec-{row.rank}",
                    "emphasis": row.rank == 1,
                }
            )
        if not points:
            continue
        chart = charts.xy_chart(
            [("GPUs", points)],
            x_label="rent, USD per hour (all GPUs)" if basis == "rent"
            else "purchase price, USD (all GPUs)",
            y_label=f"throughput ({unit})",
            log_x=True,
        )
        what = "rental price per hour" if basis == "rent" else "purchase price"
        out.append((f"Throughput vs {what} (numbers are ranks)", chart))
    return out


def _memory_chart(answer: rs.RecommendationResponse) -> charts.BarChart:
    rows = [
        {
            "label": f"#{r.rank} {r.num_gpus}× {r.gpu.name}" if r.num_gpus > 1 else
            f"#{r.rank} {r.gpu.name}",
            "value": r.memory.required_gb,
            "ref": r.memory.available_gb,
        }
        for r in answer.recommendations[:15]
    ]
    return charts.bar_chart(
        rows, value_name="needed per GPU", ref_name="available per GPU", unit="GB", label_w=260
    )


@router.get("/recommendations.json")
def recommendations_json(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    try:
        _, _, answer = _answer(request, session, settings)
    except _FormInvalid as exc:
        return _form_json_error(exc.form)
    return JSONResponse(answer.model_dump(mode="json"))


def _form_json_error(form: QuestionForm) -> JSONResponse:
    errors = [{"field": k, "message": v} for k, v in form.errors.items()]
    first = errors[0]
    return JSONResponse(
        error_body(
            "invalid_input",
            f"{first['field']}: {first['message']}",
            {"field": first["field"], "errors": errors},
        ),
        status_code=422,
    )


CSV_COLUMNS = (
    "rank", "slug", "name", "num_gpus", "fits", "precision", "memory_required_gb",
    "memory_available_gb", "throughput", "throughput_unit", "latency_ms", "time_to_finish_h",
    "bottleneck", "purchase_usd", "hourly_usd", "rent_to_finish_usd", "buy_to_finish_usd",
    "job_cost_usd", "samples_per_usd_rent", "samples_per_usd_buy", "score",
    "throughput_low", "throughput_high", "speedup_vs_baseline",
)


def _csv_cell(value: Any) -> Any:
    # Spreadsheet formula injection: text that starts like a formula is quoted.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return "" if value is None else value


@router.get("/recommendations.csv")
def recommendations_csv(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    try:
        _, _, answer = _answer(request, session, settings)
    except _FormInvalid as exc:
        return _form_json_error(exc.form)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(CSV_COLUMNS)
    for r in answer.recommendations:
        row = (
            r.rank, r.gpu.slug, r.gpu.name, r.num_gpus, r.fits, r.precision,
            r.memory.required_gb, r.memory.available_gb, r.throughput.value, r.throughput.unit,
            r.latency_ms, r.time_to_finish_h, r.bottleneck, r.cost.purchase_usd,
            r.cost.hourly_usd, r.cost.rent_to_finish_usd, r.cost.buy_to_finish_usd,
            r.cost.job_cost_usd, r.cost.samples_per_usd_rent, r.cost.samples_per_usd_buy,
            r.score, r.uncertainty.low, r.uncertainty.high, r.speedup_vs_baseline,
        )
        writer.writerow([_csv_cell(v) for v in row])
    return Response(
        buf.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="gpu-recommendations.csv"'},
    )


# ---------------------------------------------------------------------------- the catalog


CATALOG_COLUMNS: tuple[tuple[str, str, str | None], ...] = (
    # (attribute, header, sort key)
    ("memory_gb", "Memory GB", "memory_gb"),
    ("memory_bandwidth_gbs", "Bandwidth GB/s", "memory_bandwidth_gbs"),
    ("fp32_tflops", "FP32 TFLOPS", "fp32_tflops"),
    ("bf16_tflops", "BF16 TFLOPS", "bf16_tflops"),
    ("fp16_tflops", "FP16 TFLOPS", "fp16_tflops"),
    ("fp8_tflops", "FP8 TFLOPS", "fp8_tflops"),
    ("tdp_w", "Power W", "tdp_w"),
    ("purchase_usd", "Price USD", "purchase_usd"),
)


@router.get("/gpus", response_class=HTMLResponse)
def gpus(request: Request, session: SessionDep) -> HTMLResponse:
    form = parse_catalog(request.query_params.multi_items(), SORTABLE)
    f = GpuFilter(
        vendors=form.vendors,
        segments=form.segments,
        precisions=form.precisions,
        min_memory_gb=form.min_memory_gb,
        max_memory_gb=form.max_memory_gb,
        max_price_usd=form.max_price_usd,
        max_hourly_usd=form.max_hourly_usd,
        q=form.q,
    )
    page = catalog.list_gpus(session, f, sort=form.sort, limit=PAGE_SIZE, offset=form.offset)
    ctx = {
        "form": form,
        "page": page,
        "columns": CATALOG_COLUMNS,
        "sorts": CATALOG_SORTS,
        "vendors": VENDORS,
        "segments": SEGMENTS,
        "precisions": CATALOG_PRECISIONS,
        "page_size": PAGE_SIZE,
    }
    return render(request, "gpus.html", ctx, status_code=422 if form.errors else 200)


SPEC_ROWS: tuple[tuple[str, str, str], ...] = (
    # (field, label, unit)
    ("vendor", "Vendor", ""),
    ("architecture", "Architecture", ""),
    ("segment", "Segment", ""),
    ("release_year", "Released", ""),
    ("memory_gb", "Memory", "GB"),
    ("memory_type", "Memory type", ""),
    ("memory_bandwidth_gbs", "Memory bandwidth", "GB/s"),
    ("fp32_tflops", "FP32", "TFLOPS"),
    ("tf32_tflops", "TF32 (dense tensor)", "TFLOPS"),
    ("fp16_tflops", "FP16 (dense tensor)", "TFLOPS"),
    ("bf16_tflops", "BF16 (dense tensor)", "TFLOPS"),
    ("fp8_tflops", "FP8 (dense tensor)", "TFLOPS"),
    ("int8_tops", "INT8 (dense tensor)", "TOPS"),
    ("tdp_w", "Board power", "W"),
    ("pcie_gen", "PCIe generation", ""),
    ("pcie_lanes", "PCIe lanes", ""),
    ("interconnect", "GPU interconnect", ""),
    ("interconnect_gbs", "Interconnect bandwidth", "GB/s"),
    ("form_factor", "Form factor", ""),
    ("slot_width", "Slot width", "slots"),
    ("compute_capability", "Compute capability / target", ""),
    ("launch_price_usd", "Launch price", "USD"),
)


@router.get("/gpus/{slug}", response_class=HTMLResponse)
def gpu_detail(request: Request, slug: str, session: SessionDep) -> HTMLResponse:
    gpu = catalog.get_gpu(session, slug)
    sources = {s.id: s for s in gpu.sources}
    device_reports = reports.list_reports(session, gpu_slug=slug, limit=50).items
    others = catalog.list_gpus(
        session, GpuFilter(vendors=[gpu.vendor], segments=[gpu.segment]),
        sort="-memory_bandwidth_gbs", limit=4,
    ).items
    similar = [g.slug for g in others if g.slug != slug][:2]
    ctx = {
        "gpu": gpu,
        "spec_rows": SPEC_ROWS,
        "sources": sources,
        "device_reports": device_reports,
        "compare_slugs": ",".join([slug, *similar]),
    }
    return render(request, "gpu.html", ctx)


COMPARE_UNITS = {
    "memory_gb": "GB", "memory_bandwidth_gbs": "GB/s", "fp32_tflops": "TFLOPS",
    "tf32_tflops": "TFLOPS", "fp16_tflops": "TFLOPS", "bf16_tflops": "TFLOPS",
    "fp8_tflops": "TFLOPS", "int8_tops": "TOPS", "tdp_w": "W", "purchase_usd": "USD",
    "cloud_price_usd_per_hour": "USD/h",
}


def _compare_value(gpu: Any, name: str) -> Any:
    if name == "cloud_price_usd_per_hour":
        return gpu.cloud_price.usd_per_hour if gpu.cloud_price else None
    return getattr(gpu, name, None)


@router.get("/compare", response_class=HTMLResponse)
def compare(request: Request, session: SessionDep) -> HTMLResponse:
    slugs = parse_slugs(request.query_params.getlist("slugs"))
    every = catalog.list_gpus(session, GpuFilter(), limit=500).items
    ctx: dict[str, Any] = {"slugs": slugs, "all_gpus": every, "result": None, "error": None}
    status = 200
    if slugs:
        try:
            result = catalog.compare(session, slugs)
        except (InvalidInput, NotFound) as exc:
            ctx["error"] = exc.message
            status = exc.status_code
        else:
            ctx["result"] = result
            ctx["rows"] = [
                (
                    name,
                    COMPARE_UNITS.get(name, ""),
                    [(_compare_value(r.gpu, name), r.ratios.get(name)) for r in result.gpus],
                )
                for name in result.fields
            ]
    return render(request, "compare.html", ctx, status_code=status)


# ---------------------------------------------------------------------------- this machine


@router.get("/device", response_class=HTMLResponse)
def device(request: Request, session: SessionDep) -> HTMLResponse:
    page = reports.list_reports(session, limit=100)
    return render(request, "device.html", {"reports": page})


@router.get("/device/reports/{report_id}", response_class=HTMLResponse)
def device_report(request: Request, report_id: str, session: SessionDep) -> HTMLResponse:
    if not report_id.isdigit() or len(report_id) > 18:
        raise NotFound(f"no device report with id {report_id}", field="id")
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
    out["matmul_chart"] = charts.bar_chart(
        rows, value_name="measured", ref_name="catalog peak", unit="TFLOPS", label_w=140
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
                    "title": f"batch {p.batch}: {p.samples_per_s.value or 0:,.4g} samples/s",
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
                    "title": f"{key}, {t.size_bytes / 1e6:,.4g} MB: {t.figure.value:,.4g} GB/s",
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


# ---------------------------------------------------------------------------- methodology


@router.get("/methodology", response_class=HTMLResponse)
def methodology(request: Request, settings: SettingsDep) -> HTMLResponse:
    path = Path(settings.docs_dir) / "methodology.md"
    if not path.is_file():
        raise NotFound("the methodology document is not installed on this server")
    md = markdown.Markdown(extensions=["tables", "fenced_code", "toc", "sane_lists"])
    # docs/ is ours (reviewed with the code), not user or catalog input.
    html = Markup(md.convert(path.read_text(encoding="utf-8")))
    return render(request, "methodology.html", {"content": html})

"""The question form and its answer: /, /recommendations (HTML, JSON, CSV)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.config import Settings
from app.deps import SessionDep, SettingsDep
from app.domain import cost as costs
from app.errors import AppError, InvalidInput, NotFound, error_body
from app.recommend import orchestrate
from app.recommend import schemas as rs
from app.reports import service as reports
from app.web import charts
from app.web.forms import (
    QuestionForm,
    field_for_name,
    grouped_fields,
    humanize,
    parse_question,
    question_fields,
)
from app.web.serving_charts import serving_charts
from app.web.templating import render

router = APIRouter(include_in_schema=False)


# ---------------------------------------------------------------------------- presets


@dataclass(frozen=True)
class PresetView:
    id: str
    name: str
    description: str
    family: str
    params: float
    task: str
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
            task=str(w.defaults.get("task") or ""),
            defaults=dict(w.defaults),
            model=w.model.model_dump(),
        )
        for w in orchestrate.list_workloads(settings).workloads
    ]


def _preset_hints(presets: list[PresetView]) -> dict[str, dict[str, str]]:
    """What a blank field means under each preset, as people write it: placeholders."""
    out: dict[str, dict[str, str]] = {}
    for p in presets:
        hints: dict[str, str] = {}
        for f in question_fields():
            if f.path[:2] == ("workload", "model"):
                value = p.model.get(f.path[-1])
            elif f.path[0] == "workload" and len(f.path) == 2:
                value = p.defaults.get(f.path[-1])
            else:
                continue
            if value is not None:
                hints[f.name] = f.show(value)
        out[p.id] = hints
    return out


def _device_reports(session: Any) -> list[Any]:
    try:
        return list(reports.list_reports(session, limit=100).items)
    except AppError:
        return []


def _form_context(session: Any, form: QuestionForm, presets: list[PresetView]) -> dict[str, Any]:
    hints = _preset_hints(presets)
    preset_id = str(form.values.get("preset") or "")
    current = next((p for p in presets if p.id == preset_id), None)
    task = str(form.values.get("task") or (current.task if current else "") or "")
    return {
        "form": form,
        "groups": grouped_fields(),
        "presets": presets,
        "preset_hints": hints,
        "preset_tasks": {p.id: p.task for p in presets},
        "current_hints": hints.get(preset_id, {}),
        "current_task": task,
        "device_reports": _device_reports(session),
        "fixed_assumptions": FIXED_ASSUMPTIONS,
    }


# What the engine assumes that the request does not (yet) let you set; shown in the
# assumptions panel so nothing is hidden.
FIXED_ASSUMPTIONS: tuple[tuple[str, str], ...] = (
    (
        "Balanced ranking",
        "score = √(speed score × value score), each relative to the best GPU; value is "
        "work per dollar, or speed alone where a card has no price.",
    ),
    (
        "Owning a card",
        f"work per dollar when buying spreads the price and energy over "
        f"{costs.AMORTISATION_HOURS:,} hours of use (3 years at 40 hours a week).",
    ),
    (
        "Prices",
        "the dated street price for buying and the lowest known on-demand cloud price "
        "for renting, per GPU; both shown with their dates.",
    ),
    ("Power", "each card draws its board power (TDP) while it works; an upper bound."),
)


# ---------------------------------------------------------------------------- the question


@router.get("/", response_class=HTMLResponse)
def index(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    presets = _presets(settings)
    form = parse_question(request.query_params.multi_items(), use_defaults=True)
    # The home page shows the question; errors only appear once the user submits.
    form.errors.clear()
    return render(request, "index.html", _form_context(session, form, presets))


class _FormInvalid(Exception):
    def __init__(self, form: QuestionForm) -> None:
        self.form = form


def _answer(
    request: Request, session: Any, settings: Settings, *, what_if: bool = False
) -> tuple[QuestionForm, list[PresetView], rs.RecommendationResponse]:
    presets = _presets(settings)
    form = parse_question(request.query_params.multi_items(), extra={"what_if": what_if})
    if form.request is None:
        raise _FormInvalid(form)
    try:
        answer = orchestrate.recommend_for(session, settings, form.request)
    except (InvalidInput, NotFound) as exc:
        form.add_error(field_for_name(exc.field) or "_form", humanize(exc.message))
        raise _FormInvalid(form) from exc
    return form, presets, answer


def _invalid_page(
    request: Request, session: Any, settings: Settings, form: QuestionForm
) -> HTMLResponse:
    ctx = _form_context(session, form, _presets(settings))
    return render(request, "index.html", ctx, status_code=422)


@router.get("/recommendations", response_class=HTMLResponse)
def recommendations(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    # What changes the answer re-ranks the catalog about seven times: it is computed when the
    # reader asks for it (a link on the page adds what_if=1), not for every answer.
    what_if = request.query_params.get("what_if") == "1"
    try:
        form, presets, answer = _answer(request, session, settings, what_if=what_if)
    except _FormInvalid as exc:
        return _invalid_page(request, session, settings, exc.form)
    query = form.query()
    ctx = _form_context(session, form, presets)
    ctx.update(
        answer=answer,
        query=query,
        what_if_href="?" + urlencode([*query, ("what_if", "1")]) + "#what-if",
        preset=next((p for p in presets if p.id == answer.workload.preset), None),
        price_charts=_price_charts(answer),
        memory_chart=_memory_chart(answer),
        per_dollar=_per_dollar_label(answer),
        serving_charts=serving_charts(answer),
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
            x_label="rent, USD per hour (all GPUs)"
            if basis == "rent"
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
            "label": f"#{r.rank} {r.num_gpus}× {r.gpu.name}"
            if r.num_gpus > 1
            else f"#{r.rank} {r.gpu.name}",
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
    "rank",
    "slug",
    "name",
    "num_gpus",
    "fits",
    "precision",
    "memory_required_gb",
    "memory_available_gb",
    "throughput",
    "throughput_unit",
    "latency_ms",
    "time_to_finish_h",
    "bottleneck",
    "purchase_usd",
    "hourly_usd",
    "rent_to_finish_usd",
    "buy_to_finish_usd",
    "job_cost_usd",
    "samples_per_usd_rent",
    "samples_per_usd_buy",
    "score",
    "throughput_low",
    "throughput_high",
    "speedup_vs_baseline",
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
            r.rank,
            r.gpu.slug,
            r.gpu.name,
            r.num_gpus,
            r.fits,
            r.precision,
            r.memory.required_gb,
            r.memory.available_gb,
            r.throughput.value,
            r.throughput.unit,
            r.latency_ms,
            r.time_to_finish_h,
            r.bottleneck,
            r.cost.purchase_usd,
            r.cost.hourly_usd,
            r.cost.rent_to_finish_usd,
            r.cost.buy_to_finish_usd,
            r.cost.job_cost_usd,
            r.cost.samples_per_usd_rent,
            r.cost.samples_per_usd_buy,
            r.score,
            r.uncertainty.low,
            r.uncertainty.high,
            r.speedup_vs_baseline,
        )
        writer.writerow([_csv_cell(v) for v in row])
    return Response(
        buf.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="gpu-recommendations.csv"'},
    )

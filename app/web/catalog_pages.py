"""The catalog pages: /gpus, /gpus/{slug}, /compare."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import ValidationError

from app.catalog import service as catalog
from app.catalog.repository import SORTABLE, GpuFilter
from app.config import Settings
from app.deps import SessionDep, SettingsDep
from app.errors import InvalidInput, NotFound
from app.offers import service as offers
from app.recommend import orchestrate
from app.recommend import schemas as rs
from app.reports import service as reports
from app.vocab import FIT_PRECISIONS
from app.web.catalog_form import (
    CATALOG_PRECISIONS,
    CATALOG_SORTS,
    PAGE_SIZE,
    SEGMENTS,
    VENDORS,
    parse_catalog,
    parse_slugs,
)
from app.web.templating import render

router = APIRouter(include_in_schema=False)


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


@dataclass(frozen=True)
class FitRow:
    preset: str
    name: str
    task: str
    params: float
    fits: bool
    throughput: float | None
    unit: str | None
    precision: str | None
    reason: str | None


def _what_fits(
    session: Any, settings: Settings, slug: str
) -> tuple[list[FitRow], list[tuple[str, FitRow | None]]]:
    """Each preset at its own defaults on one of this GPU, and the largest LLM preset that
    fits it for inference per precision — all from the engine (estimate), nothing guessed."""
    rows: list[FitRow] = []
    presets = orchestrate.list_workloads(settings).workloads

    def run(preset: Any, **workload: Any) -> FitRow:
        req = rs.EstimateRequest(
            workload=rs.WorkloadIn(preset=preset.id, **workload), gpu=slug, num_gpus=1
        )
        try:
            est = orchestrate.estimate_for(session, settings, req)
        except (InvalidInput, NotFound) as exc:
            task = str(workload.get("task") or preset.defaults.get("task"))
            return FitRow(
                preset.id,
                preset.name,
                task,
                preset.model.params,
                False,
                None,
                None,
                None,
                exc.message,
            )
        r = est.result
        ok = r is not None and r.fits
        return FitRow(
            preset=preset.id,
            name=preset.name,
            task=est.workload.task,
            params=preset.model.params,
            fits=ok,
            throughput=r.throughput.value if ok and r else None,
            unit=r.throughput.unit if ok and r else None,
            precision=r.precision if r else None,
            reason=None if ok else (est.excluded.reason if est.excluded else "does not fit"),
        )

    rows = [run(p) for p in presets]
    llms = sorted(
        (p for p in presets if p.model.family == "decoder"), key=lambda p: -p.model.params
    )
    largest: list[tuple[str, FitRow | None]] = []
    for precision in FIT_PRECISIONS:
        found = None
        for p in llms:
            row = run(p, task="inference", precision=precision, batch_size=1)
            if row.fits and row.precision == precision:
                found = row
                break
        largest.append((precision, found))
    return rows, largest


@router.get("/gpus/{slug}", response_class=HTMLResponse)
def gpu_detail(
    request: Request,
    slug: str,
    session: SessionDep,
    settings: SettingsDep,
    sort_offers: Annotated[str | None, Query(max_length=40)] = None,
) -> HTMLResponse:
    gpu = catalog.get_gpu(session, slug)
    fit_rows, largest = _what_fits(session, settings, slug)
    cloud_offers, purchase_offers, offers_sort = offers.offers_table(
        session, settings, slug, sort_offers
    )
    sources = {s.id: s for s in gpu.sources}
    device_reports = reports.list_reports(session, gpu_slug=slug, limit=50).items
    others = catalog.list_gpus(
        session,
        GpuFilter(vendors=[gpu.vendor], segments=[gpu.segment]),
        sort="-memory_bandwidth_gbs",
        limit=4,
    ).items
    similar = [g.slug for g in others if g.slug != slug][:2]
    ctx = {
        "gpu": gpu,
        "spec_rows": SPEC_ROWS,
        "sources": sources,
        "device_reports": device_reports,
        "compare_slugs": ",".join([slug, *similar]),
        "fit_rows": fit_rows,
        "largest": largest,
        "cloud_offers": cloud_offers,
        "purchase_offers": purchase_offers,
        "offers_sort": offers_sort,
        "stale_days": settings.offer_stale_days,
    }
    return render(request, "gpu.html", ctx)


# (label, unit, higher is better) for each figure a side-by-side shows.
COMPARE_FIGURES: dict[str, tuple[str, str, bool]] = {
    "memory_gb": ("Memory", "GB", True),
    "memory_bandwidth_gbs": ("Memory bandwidth", "GB/s", True),
    "fp32_tflops": ("FP32", "TFLOPS", True),
    "tf32_tflops": ("TF32 (dense tensor)", "TFLOPS", True),
    "fp16_tflops": ("FP16 (dense tensor)", "TFLOPS", True),
    "bf16_tflops": ("BF16 (dense tensor)", "TFLOPS", True),
    "fp8_tflops": ("FP8 (dense tensor)", "TFLOPS", True),
    "int8_tops": ("INT8 (dense tensor)", "TOPS", True),
    "tdp_w": ("Board power", "W", False),
    "launch_price_usd": ("Launch price", "USD", False),
    "street_price_usd": ("Street price", "USD", False),
    "cloud_price_usd_per_hour": ("Cloud price", "USD per GPU-hour", False),
    "purchase_usd": ("Price used for buying", "USD", False),
    "interconnect_gbs": ("GPU interconnect", "GB/s", True),
}


def _compare_value(gpu: Any, name: str) -> Any:
    if name == "cloud_price_usd_per_hour":
        return gpu.cloud_price.usd_per_hour if gpu.cloud_price else None
    if name == "street_price_usd":
        return gpu.street_price.usd if gpu.street_price else None
    return getattr(gpu, name, None)


def _compare_rows(result: Any) -> list[tuple[str, str, bool, list[tuple[Any, float | None]]]]:
    rows = []
    for name in result.fields:
        label, unit, higher = COMPARE_FIGURES.get(name, (name.replace("_", " "), "", True))
        base = _compare_value(result.gpus[0].gpu, name)
        cells = []
        for r in result.gpus:
            value = _compare_value(r.gpu, name)
            ratio = r.ratios.get(name)
            if ratio is None and value is not None and base:
                ratio = round(value / base, 4)
            cells.append((value, ratio))
        rows.append((label, unit, higher, cells))
    return rows


def _compare_workload(
    session: Any, settings: Settings, slugs: list[str], preset: str, task: str | None
) -> list[Any]:
    """The same job on one configuration of each GPU: fit, throughput, cost, from the engine."""
    out = []
    for slug in slugs:
        req = rs.EstimateRequest(workload=rs.WorkloadIn(preset=preset, task=task), gpu=slug)
        out.append(orchestrate.estimate_for(session, settings, req))
    return out


@router.get("/compare", response_class=HTMLResponse)
def compare(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    slugs = parse_slugs(request.query_params.getlist("slugs"))
    every = catalog.list_gpus(session, GpuFilter(), limit=500).items
    presets = orchestrate.list_workloads(settings).workloads
    preset = request.query_params.get("preset", "").strip()
    task = request.query_params.get("task", "").strip() or None
    ctx: dict[str, Any] = {
        "slugs": slugs,
        "all_gpus": every,
        "result": None,
        "error": None,
        "presets": presets,
        "preset": preset,
        "task": task or "",
        "tasks": [t for t in typing.get_args(rs.Task)],
        "job": None,
        "job_error": None,
    }
    status = 200
    if slugs:
        try:
            result = catalog.compare(session, slugs)
        except (InvalidInput, NotFound) as exc:
            ctx["error"] = exc.message
            status = exc.status_code
        else:
            ctx["result"] = result
            ctx["rows"] = _compare_rows(result)
            if preset:
                try:
                    ctx["job"] = _compare_workload(session, settings, slugs, preset, task)
                except (InvalidInput, NotFound) as exc:
                    ctx["job_error"] = exc.message
                    status = exc.status_code
                except ValidationError:
                    ctx["job_error"] = "choose a task from the list"
                    status = 422
    return render(request, "compare.html", ctx, status_code=status)

"""The catalog pages: /gpus, /gpus/{slug}, /compare."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.catalog import service as catalog
from app.catalog.repository import SORTABLE, GpuFilter
from app.deps import SessionDep
from app.errors import InvalidInput, NotFound
from app.reports import service as reports
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


@router.get("/gpus/{slug}", response_class=HTMLResponse)
def gpu_detail(request: Request, slug: str, session: SessionDep) -> HTMLResponse:
    gpu = catalog.get_gpu(session, slug)
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
    }
    return render(request, "gpu.html", ctx)


COMPARE_UNITS = {
    "memory_gb": "GB",
    "memory_bandwidth_gbs": "GB/s",
    "fp32_tflops": "TFLOPS",
    "tf32_tflops": "TFLOPS",
    "fp16_tflops": "TFLOPS",
    "bf16_tflops": "TFLOPS",
    "fp8_tflops": "TFLOPS",
    "int8_tops": "TOPS",
    "tdp_w": "W",
    "purchase_usd": "USD",
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

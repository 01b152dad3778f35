"""The catalog pages: /gpus, /gpus/{slug}, /compare."""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError

from app.catalog import service as catalog
from app.catalog.near_slugs import closest_slugs
from app.catalog.repository import SORTABLE, GpuFilter
from app.catalog.schemas import GpuOut, GpuPage
from app.config import Settings
from app.deps import SessionDep, SettingsDep
from app.domain.cost import BuyPrice
from app.domain.rent_from import RentFrom
from app.errors import InvalidInput, NotFound
from app.numbers import parse_int
from app.offers import service as offers
from app.recommend import orchestrate
from app.recommend import schemas as rs
from app.reports import service as reports
from app.vocab import FIT_PRECISIONS, PEFTS
from app.web.catalog_form import (
    CATALOG_PRECISIONS,
    CATALOG_SORTS,
    PAGE_SIZE,
    SEGMENTS,
    VENDORS,
    parse_catalog,
    parse_slugs,
)
from app.web.gpu_words import LaunchOnFile, interconnect_said, launch_on_file, on_soc
from app.web.templating import render, url_with

router = APIRouter(include_in_schema=False)


# ---------------------------------------------------------------------------- the catalog


CATALOG_COLUMNS: tuple[tuple[str, str, str | None], ...] = (
    # (attribute, header, sort key)
    ("memory_gb", "Memory GiB", "memory_gb"),
    ("memory_bandwidth_gbs", "Bandwidth GB/s", "memory_bandwidth_gbs"),
    ("fp32_tflops", "FP32 TFLOPS", "fp32_tflops"),
    ("bf16_tflops", "BF16 TFLOPS", "bf16_tflops"),
    ("fp16_tflops", "FP16 TFLOPS", "fp16_tflops"),
    ("fp8_tflops", "FP8 TFLOPS", "fp8_tflops"),
    ("tdp_w", "Power W", "tdp_w"),
    ("purchase_usd", "Buy USD", "purchase_usd"),  # BUY_SORT: the buy price
)


# The page's sort by the offers' price (app/domain/rent_from.py), which the catalog does not
# hold. The quoted per-GPU price the catalog's own `cloud_price_usd_per_hour` sorts by is
# not shown on the page, so an older link sorting by it sorts by what the page shows.
RENT_SORT = "cloud_from"
# The price column shows (and sorts and limits by) what a recommendation pays to buy one
# (app/domain/cost.buy_price: new, else used, a launch price only within three years of
# launch), not the catalog's street-else-launch `purchase_usd`, which would show a 2018
# card at its 2018 list price; the sort keeps that field's name so older links still work.
BUY_SORT = "purchase_usd"
PAGE_SORTABLE = (*SORTABLE, RENT_SORT)
_OLD_RENT_SORT = "cloud_price_usd_per_hour"


def _rent_price(prices: Mapping[str, RentFrom], slug: str) -> float | None:
    p = prices.get(slug)
    return p.usd_per_gpu_hour if p else None


def _buy_price(buys: Mapping[str, BuyPrice], slug: str) -> float | None:
    b = buys.get(slug)
    return b.offer.usd if b is not None and b.offer is not None else None


def _by_price(
    session: Any, f: GpuFilter, price: Callable[[str], float | None], sort: str, offset: int
) -> GpuPage:
    """One page of the filtered catalog ordered by an offer price (``price`` of a slug), GPUs
    without one last (in the catalog's own order).

    Sorted here, not in SQL: the catalog may not know offers (tests/test_architecture.py),
    so its repository cannot order by them, and passing it an order made from offers would
    teach it a concept it should not hold. The whole filtered list is read (the catalog is
    ~100 GPUs; read in pages of the service's maximum should it grow) and ordered before
    paging, so every page and the total agree with the order."""
    items: list[GpuOut] = []
    while True:
        page = catalog.list_gpus(session, f, limit=catalog.MAX_LIMIT, offset=len(items))
        items += page.items
        if not page.items or len(items) >= page.total:
            break
    priced = [g for g in items if price(g.slug) is not None]
    sign = -1.0 if sort.startswith("-") else 1.0
    priced.sort(key=lambda g: (sign * (price(g.slug) or 0.0), g.slug))
    unpriced = [g for g in items if price(g.slug) is None]
    ordered = priced + unpriced
    return GpuPage(
        total=len(ordered),
        limit=PAGE_SIZE,
        offset=offset,
        items=ordered[offset : offset + PAGE_SIZE],
    )


def _within(price: Callable[[str], float | None], slugs: Iterable[str], cap: float) -> set[str]:
    return {s for s in slugs if (v := price(s)) is not None and v <= cap}


@router.get("/gpus", response_class=HTMLResponse)
def gpus(request: Request, session: SessionDep) -> HTMLResponse:
    form = parse_catalog(request.query_params.multi_items(), PAGE_SORTABLE)
    if form.sort and form.sort.lstrip("-+") == _OLD_RENT_SORT:
        form.sort = form.sort.replace(_OLD_RENT_SORT, RENT_SORT)
        form.values["sort"] = form.sort
    prices, buys = offers.catalog_prices(session)
    rent = functools.partial(_rent_price, prices)
    buy = functools.partial(_buy_price, buys)
    # The price limits are on the prices the page shows (the offers'): the cloud price on the
    # launchable offers, the buy price on what a recommendation pays (purchase basis "auto").
    within: set[str] | None = None
    if form.max_hourly_usd is not None:
        within = _within(rent, prices, form.max_hourly_usd)
    if form.max_price_usd is not None:
        cheap = _within(buy, buys, form.max_price_usd)
        within = cheap if within is None else within & cheap
    f = GpuFilter(
        vendors=form.vendors,
        segments=form.segments,
        precisions=form.precisions,
        min_memory_gb=form.min_memory_gb,
        max_memory_gb=form.max_memory_gb,
        slugs=sorted(within) if within is not None else None,
        q=form.q,
    )
    key = form.sort.lstrip("-+") if form.sort else None
    if form.sort and key in (RENT_SORT, BUY_SORT):
        page = _by_price(session, f, rent if key == RENT_SORT else buy, form.sort, form.offset)
    else:
        page = catalog.list_gpus(session, f, sort=form.sort, limit=PAGE_SIZE, offset=form.offset)
    ctx = {
        "form": form,
        "page": page,
        "prices": prices,
        "buys": buys,
        "rent_sort": RENT_SORT,
        "columns": CATALOG_COLUMNS,
        "sorts": CATALOG_SORTS,
        "vendors": VENDORS,
        "segments": SEGMENTS,
        "precisions": CATALOG_PRECISIONS,
        "page_size": PAGE_SIZE,
        "page_url": functools.partial(_page_url, request, tuple(form.errors)),
    }
    return render(request, "gpus.html", ctx, status_code=422 if form.errors else 200)


def _page_url(request: Request, refused: tuple[str, ...], **changes: Any) -> str:
    """A sort or paging link of the list, without what the form refused: the refused query's
    "Next" had kept ?sort=price and led to another 422 page (the list it pages is the one
    shown, which left the refused field out)."""
    return url_with(request, **{**dict.fromkeys(refused), **changes})


SPEC_ROWS: tuple[tuple[str, str, str], ...] = (
    # (field, label, unit)
    ("vendor", "Vendor", ""),
    ("architecture", "Architecture", ""),
    ("segment", "Segment", ""),
    ("release_year", "Released", ""),
    ("memory_gb", "Memory", "GiB"),
    ("memory_type", "Memory type", ""),
    ("visible_memory_mib", "Memory CUDA reports (default mode)", "MiB"),
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
    ("cooling", "Cooling", ""),
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
    # what the figure runs on: an LLM's tokens/s is the runtime's and its prompt's (the GPU
    # page's "Largest LLM preset" line had read 17.6 tokens/s without saying HF Transformers)
    runtime: str | None = None
    prompt_tokens: int | None = None
    # a preset's fine-tuning recipe (Mistral 7B's is QLoRA): "Fine-tuning · runs BF16" on a
    # 24 GiB card had read as full fine-tuning of a 7B model (a new user's walk, 2026-12-06)
    peft: str | None = None


def _what_fits(
    session: Any, settings: Settings, slug: str
) -> tuple[list[FitRow], list[tuple[str, FitRow | None, str]]]:
    """Each preset at its own defaults on one of this GPU, and the largest LLM preset that
    fits it for inference per precision — all from the engine (estimate), nothing guessed."""
    rows: list[FitRow] = []
    presets = orchestrate.list_workloads(settings).workloads
    probe = orchestrate.fit_probe(session, settings, slug)

    def run(preset: Any, **workload: Any) -> FitRow:
        req = rs.EstimateRequest(
            workload=rs.WorkloadIn(preset=preset.id, **workload), gpu=slug, num_gpus=1
        )
        try:
            est = probe(req)
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
            runtime=est.workload.runtime,
            prompt_tokens=est.workload.seq_len,
            peft=est.workload.peft,
        )

    rows = [run(p) for p in presets]
    llms = sorted(
        (p for p in presets if p.model.family == "decoder"), key=lambda p: -p.model.params
    )
    largest: list[tuple[str, FitRow | None, str]] = []
    for precision in FIT_PRECISIONS:
        found = None
        instead: set[str] = set()
        for p in llms:
            row = run(p, task="inference", precision=precision, batch_size=1)
            if row.fits and row.precision == precision:
                found = row
                break
            if row.fits and row.precision:
                instead.add(row.precision.upper())
        # why no preset: on an RTX 3090 every preset asked at FP8 ran at BF16 (no FP8 there),
        # and "none of the presets" had read as if each were too large for the card
        note = ""
        if found is None:
            note = (
                f"no preset runs at {precision.upper()} on this card: asked for it, each ran at "
                f"{' or '.join(sorted(instead))}"
                if instead
                else "no preset fits at batch 1"
            )
        largest.append((precision, found, note))
    return rows, largest


def _gpu_not_found(request: Request, session: Any, slug: str, exc: NotFound) -> HTMLResponse:
    """The 404 page, with the catalog's nearest slugs to click instead."""
    names = {g.slug: g.name for g in catalog.all_specs(session)}
    near = [(s, names[s]) for s in closest_slugs(slug, names)]
    ctx = {"status": 404, "title": "not found", "message": exc.message, "suggestions": near}
    return render(request, "error.html", ctx, status_code=404)


@router.get("/gpus/{slug}", response_class=HTMLResponse, response_model=None)
def gpu_detail(
    request: Request,
    slug: str,
    session: SessionDep,
    settings: SettingsDep,
    sort_offers: Annotated[str | None, Query(max_length=40)] = None,
) -> HTMLResponse | RedirectResponse:
    try:
        gpu = catalog.get_gpu(session, slug)
    except NotFound as exc:
        if slug == "compare":
            # the API compares at /api/v1/gpus/compare: a person who tries the same path here
            # had read "no GPU with slug 'compare'" (a new user's walk, 2026-12-06)
            query = request.url.query
            return RedirectResponse("/compare" + (f"?{query}" if query else ""), status_code=307)
        return _gpu_not_found(request, session, slug, exc)
    fit_rows, largest = _what_fits(session, settings, slug)
    cloud_offers, purchase_offers, offers_sort = offers.offers_table(
        session, settings, slug, sort_offers
    )
    sources = {s.id: s for s in gpu.sources}
    book = offers.gpu_offers(session).get(slug)
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
        # a price quoted elsewhere is no offer (issue 23): said beside the table, as
        # GET /api/v1/gpus/{slug}'s `seen_price` says it, never a row of it
        "seen_price": offers.seen_price(gpu),
        "purchase_offers": purchase_offers,
        "offers_sort": offers_sort,
        "rent": offers.rent_from_by_gpu(session).get(slug),
        "buy": offers.buy_price(session, slug),
        # an empty launch or interconnect field in words that agree with the price bought at
        "launch": launch_on_file(gpu, book.purchase if book else ()),
        "interconnect": interconnect_said(gpu) if on_soc(gpu) and not gpu.interconnect else None,
        "stale_days": settings.offer_stale_days,
    }
    return render(request, "gpu.html", ctx)


# (label, unit, higher is better) for each figure a side-by-side shows.
COMPARE_FIGURES: dict[str, tuple[str, str, bool]] = {
    "memory_gb": ("Memory", "GiB", True),
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
    "rent_from.usd_per_gpu_hour": ("Cloud from", "launchable offers", False),
    "buy_at.usd": ("Price used for buying", "USD", False),
    # the GPU page's words: "GPU interconnect" names the link, this is its bandwidth
    "interconnect_gbs": ("Interconnect bandwidth", "GB/s", True),
}


# The two offer prices (offers.service.COMPARE_PRICES) are shown in the words of the catalog's
# price cells: the instance and date behind the rent price, the basis of the buy price.
_RENT_FIELD, _BUY_FIELD = offers.COMPARE_PRICES.values()


def _compare_value(gpu: Any, name: str) -> Any:
    if name == _RENT_FIELD:
        return gpu.rent_from.usd_per_gpu_hour if gpu.rent_from else None
    if name == _BUY_FIELD:
        return gpu.buy_at.usd if gpu.buy_at else None
    if name == "street_price_usd":
        return gpu.street_price.usd if gpu.street_price else None
    return getattr(gpu, name, None)


# (value, ratio to the first GPU, the rent-from or buy price the cell shows in words, or the
# launch price on file where the catalog's field is empty)
CompareCell = tuple[Any, float | None, RentFrom | BuyPrice | LaunchOnFile | None]


def _compare_rows(
    result: Any,
    prices: Mapping[str, RentFrom],
    buys: Mapping[str, BuyPrice],
    launches: Mapping[str, LaunchOnFile] | None = None,
) -> list[tuple[str, str, bool, list[CompareCell], str]]:
    """(label, unit, higher is better, cells, which offers' price the row is: rent, buy,
    launch or none); the values and ratios are offers.service.compare's, as the API gives
    them. ``launches``: a launch price the purchase offers hold for a GPU whose catalog field
    is empty (gpu_words.launch_on_file), shown in its cell without a ratio (the API has none)."""
    rows = []
    kinds = {_RENT_FIELD: "rent", _BUY_FIELD: "buy", "launch_price_usd": "launch"}
    for name in result.fields:
        label, unit, higher = COMPARE_FIGURES.get(name, (name.replace("_", " "), "", True))
        kind = kinds.get(name, "")
        cells: list[CompareCell] = []
        for r in result.gpus:
            value, ratio = _compare_value(r.gpu, name), r.ratios.get(name)
            shown: RentFrom | BuyPrice | LaunchOnFile | None = None
            if kind == "rent":
                shown = prices.get(r.gpu.slug)
            elif kind == "buy":
                shown = buys.get(r.gpu.slug)
            elif kind == "launch":
                shown = (launches or {}).get(r.gpu.slug)
            cells.append((value, ratio, shown))
        rows.append((label, unit, higher, cells, kind))
    return rows


def _purchase(book: Mapping[str, Any], slug: str) -> tuple[Any, ...]:
    offers_of = book.get(slug)
    return tuple(offers_of.purchase) if offers_of is not None else ()


SERVING_ELSEWHERE = (
    "serving is planned on the question form (Ask), which takes the load and latency targets "
    "it needs; the comparison takes training, fine-tuning or inference"
)


def _compare_workload(
    session: Any,
    settings: Settings,
    slugs: list[str],
    preset: str,
    task: str | None,
    peft: str | None = None,
    sizes: dict[str, int] | None = None,
) -> list[Any]:
    """The same job on one configuration of each GPU: fit, throughput, cost, from the engine
    (``sizes``: the batch size, sequence length and output tokens asked, else the preset's)."""
    out = []
    for slug in slugs:
        work = rs.WorkloadIn(preset=preset, task=task, peft=peft, **(sizes or {}))
        req = rs.EstimateRequest(workload=work, gpu=slug)
        out.append(orchestrate.estimate_for(session, settings, req))
    return out


# The job sizes the comparison takes from a question (the answer page's link carries those
# asked), and their words in an error.
JOB_SIZES = {
    "batch_size": "Batch size",
    "seq_len": "Sequence length",
    "output_tokens": "Output tokens",
}
JOB_SIZE_MAX = {"batch_size": rs.MAX_BATCH_SIZE, "seq_len": rs.MAX_SEQ, "output_tokens": rs.MAX_SEQ}


def _job_sizes(request: Request) -> tuple[dict[str, int], dict[str, str]]:
    """The batch size, sequence length and output tokens asked (blank: the preset's), and what
    is wrong with each bad one, by field; their bounds are the workload's own (rs.WorkloadIn).
    Checked whether or not a preset is chosen: "abc" with no preset had been dropped without a
    word."""
    sizes: dict[str, int] = {}
    errors: dict[str, str] = {}
    for key, words in JOB_SIZES.items():
        raw = request.query_params.get(key, "").strip()
        if not raw:
            continue
        try:
            value = parse_int(raw)  # "2,048" and "2k" read as the question form reads them
        except ValueError:
            errors[key] = f"{words}: give a whole number, not {raw!r}"
            continue
        if not 1 <= value <= JOB_SIZE_MAX[key]:
            errors[key] = f"{words}: give a whole number from 1 to {JOB_SIZE_MAX[key]:,}"
            continue
        sizes[key] = value
    return sizes, errors


def _job_error_field(exc: InvalidInput | NotFound, sizes: dict[str, int]) -> str:
    """The comparison's field an engine refusal belongs to. The prompt past the context is
    the sequence length's where the engine blames output_tokens that were not asked (the
    prompt + the preset's output overflow): the sequence length asked is what the reader
    changed (its 422 had shown under Preset, naming neither)."""
    field = (exc.field or "").removeprefix("workload.")
    if field == "output_tokens" and field not in sizes and "seq_len" in sizes:
        return "seq_len"  # the preset's own output after the prompt asked
    if field in JOB_SIZES:
        return field
    return "preset"


def _size_notes(job: list[Any], sizes: dict[str, int]) -> list[str]:
    """What the engine says, on every GPU, about a size asked: the answer page says
    "Sequence length does not apply to a CNN ...; ignored" for a ResNet-50's 512, which
    /compare had dropped without a word. Only those: the job's other warnings (a market
    price, the QLoRA recipe) are the answer page's, and this page kept its table first."""
    first = job[0].warnings if job else []
    return [
        w for w in first if any(key in w for key in sizes) and all(w in e.warnings for e in job[1:])
    ]


@router.get("/compare", response_class=HTMLResponse)
def compare(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    slugs = parse_slugs(request.query_params.getlist("slugs"))
    every = catalog.list_gpus(session, GpuFilter(), limit=500).items
    presets = orchestrate.list_workloads(settings).workloads
    preset = request.query_params.get("preset", "").strip()
    task = request.query_params.get("task", "").strip() or None
    # the adapters' recipe: without it a QLoRA fine-tune of Llama 3.1 8B, asked on the form
    # and answered on one 16 GiB card, was compared as full fine-tuning ("needs 94.4 GiB")
    peft = request.query_params.get("peft", "").strip() or None
    # the job's size as the question asked it: a batch of 8 asked on the form had been
    # compared at the preset's own batch (a new user's walk, 2026-12-07)
    sizes, field_errors = _job_sizes(request)
    ctx: dict[str, Any] = {
        "slugs": slugs,
        "all_gpus": every,
        "result": None,
        "error": None,
        "presets": presets,
        "preset": preset,
        "task": task or "",
        # serving needs a load and targets, which this form has no fields for: the option
        # had led only to "give the load: concurrent_requests or requests_per_s"
        "tasks": [t for t in typing.get_args(rs.Task) if t != "serving"],
        "peft": peft or "",
        "pefts": PEFTS,
        "sizes": {k: request.query_params.get(k, "").strip() for k in JOB_SIZES},
        "size_words": JOB_SIZES,  # each size's label, the words its errors open with
        "job": None,
        "job_notes": [],
        # each job field's error, shown at its field (the preset's, the task's and PEFT's
        # under Preset, as before)
        "field_errors": field_errors,
    }
    status = 422 if field_errors else 200
    if slugs:
        try:
            result = offers.compare(session, settings, slugs)
        except (InvalidInput, NotFound) as exc:
            ctx["error"] = exc.message
            status = exc.status_code
        else:
            ctx["result"] = result
            rent_prices, buy_prices = offers.catalog_prices(session)
            book = offers.gpu_offers(session)
            launches = {
                r.gpu.slug: found
                for r in result.gpus
                if (found := launch_on_file(r.gpu, _purchase(book, r.gpu.slug)))
            }
            ctx["rows"] = _compare_rows(result, rent_prices, buy_prices, launches)
            ctx["interconnect_said"] = interconnect_said
            if preset and task == "serving":
                field_errors["preset"] = SERVING_ELSEWHERE
                status = 422
            elif preset and not field_errors:
                try:
                    ctx["job"] = job = _compare_workload(
                        session, settings, slugs, preset, task, peft, sizes
                    )
                    ctx["job_notes"] = _size_notes(job, sizes)
                except (InvalidInput, NotFound) as exc:
                    at = _job_error_field(exc, sizes)
                    said = exc.message
                    if at in JOB_SIZES and at not in said:
                        # "prompt + output = ... exceeds" had named no field
                        said = f"{JOB_SIZES[at]}: {said}"
                    field_errors[at] = said
                    status = exc.status_code
                except ValidationError as exc:
                    bad = {str(e["loc"][-1]) for e in exc.errors() if e.get("loc")}
                    what = "a PEFT method" if "peft" in bad else "a task"
                    field_errors["preset"] = f"choose {what} from the list"
                    status = 422
            elif sizes and not preset:
                # a size describes a job, which a preset names: 8 asked with none had been
                # dropped without a word (the specifications still compare)
                names = [JOB_SIZES[k].lower() for k in sizes]
                asked = " and ".join([", ".join(names[:-1]), names[-1]] if names[1:] else names)
                field_errors["preset"] = f"choose a preset to compare its job at the {asked} asked"
                status = 422
    return render(request, "compare.html", ctx, status_code=status)

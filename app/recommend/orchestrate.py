"""Recommendation use cases with their data: the catalog from the database, the rules and
presets from data/, and a device report as calibration and baseline when one is named."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from app.bench.report import BenchReport
from app.catalog import service as catalog
from app.config import Settings
from app.db import Snapshots
from app.domain import compat, fleet, perf
from app.domain.calibration import Calibration, Efficiencies, merge
from app.domain.cost import GpuOffers
from app.domain.gpu import GpuSpec
from app.errors import InvalidInput, NotFound
from app.offers import service as offers
from app.recommend import deploy, repository, service
from app.recommend import schemas as s
from app.recommend.summary import answer_summary
from app.reports import service as reports
from app.shipped import rules as engine_rules
from app.vocab import MEASURED_PRECISIONS, backend_name


def _report_id(value: str | int, field: str) -> int:
    try:
        report_id = int(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            "device_report_id must be a report id (an integer)", field=field
        ) from exc
    return report_id


def measured_device_spec(report: BenchReport, report_id: int) -> GpuSpec | None:
    """A device not in the catalog (a CPU, an unlisted GPU) described by what it measured.

    Its 'peaks' are the measured figures, so the engine's efficiency for it is exactly 1.
    """
    measured = report.summary_measured()
    if "bandwidth_gbs" not in measured or not any(p in measured for p in ("fp32", "bf16", "fp16")):
        return None
    env = report.environment
    memory_bytes = env.device_memory_bytes or env.host_memory_bytes or 0
    return GpuSpec(
        slug=f"device-report-{report_id}",
        name=f"{env.device_name} (your device, measured)",
        vendor="cpu" if env.backend == "cpu" else "measured",
        architecture=env.arch or env.backend,
        segment="measured",
        # GiB, as GpuSpec.memory_gb is (the vendor's "GB"): a 24,105 MiB host is 23.5, not 25
        memory_gb=max(memory_bytes / 2**30, 1.0),
        visible_memory_mib=memory_bytes // 2**20 or None,
        memory_bandwidth_gbs=measured["bandwidth_gbs"],
        fp32_tflops=measured.get("fp32"),
        tf32_tflops=measured.get("tf32"),
        fp16_tflops=measured.get("fp16"),
        bf16_tflops=measured.get("bf16"),
        fp8_tflops=measured.get("fp8"),
        backends=(env.backend,),
    )


@dataclass
class _Device:
    """What a named device report contributes to an answer."""

    calibration: Calibration | None = None
    baseline: GpuSpec | None = None
    notes: list[str] = field(default_factory=list)
    tips: list[str] = field(default_factory=list)


def _device(session: Session, value: str | int, gpus: list[GpuSpec]) -> _Device:
    name = "device_report_id"
    report_id = _report_id(value, name)
    try:
        report, slug = reports.load_bench_report(session, report_id, field=name)
    except NotFound as exc:
        raise InvalidInput(exc.message, field=name) from exc
    source = f"device report {report_id}"
    gpu = next((g for g in gpus if g.slug == slug), None) if slug else None
    tips = list(report.tips)
    notes: list[str] = []
    if gpu is not None and not reports.backend_fits(report.environment.backend, gpu):
        # a run whose backend cannot be this GPU's (a CPU-only torch labelled as an H100) is
        # the device it measured, not an uncalibrated H100 baseline
        notes.append(
            f"{source} ran on {backend_name(report.environment.backend)}, not on {gpu.name}: "
            "compared as "
            "the device it measured"
        )
        gpu = None
    if gpu is not None:
        return _Device(reports.calibration_from(report, gpu, source), gpu, tips=tips)
    own = measured_device_spec(report, report_id)
    if own is None:
        return _Device(notes=[f"{source} has no usable matmul and bandwidth figures; ignored"])
    ones = Efficiencies(
        compute={p: 1.0 for p in MEASURED_PRECISIONS if own.peak_tflops(p)},
        memory=1.0,
    )
    note = (
        f"{source} ({report.environment.device_name}) is not a catalog GPU: it is the baseline "
        "from its own measurements; catalog GPUs keep their published priors"
    )
    return _Device(Calibration(by_slug={own.slug: ones}, source=source), own, [*notes, note], tips)


# The catalog's per-card terms (fleet.Catalog) per database, kept with the catalog snapshot
# and the pooled calibration they were made from: rebuilt when the catalog, a report or the
# data directory (the rules, the efficiency table) changes.
_catalogs: Snapshots[fleet.Catalog] = Snapshots()


def fleet_catalog(
    session: Session,
    settings: Settings,
    stamps: repository.Stamps,
    gpus: list[GpuSpec],
    pooled: Calibration | None,
) -> fleet.Catalog:
    """The per-card terms of ``gpus`` (the catalog as of ``stamps``) under the shipped rules
    and the pooled calibration ``pooled`` (as of ``stamps`` too), from the cache while none of
    them changed."""
    return _catalogs.get(
        session,
        (stamps.catalog, stamps.reports, str(settings.data_dir)),
        lambda: fleet.Catalog(
            tuple(sorted(gpus, key=lambda g: g.slug)),
            engine_rules.load_rules(settings.data_dir),
            pooled,
        ),
    )


def warm(session: Session, settings: Settings) -> None:
    """Loads into their caches what every recommendation reads (the catalog, offers, pooled
    calibration and rules), so that the first request does not pay for them (app.main)."""
    stamps = repository.input_stamps(session)
    gpus = catalog.all_specs(session, stamps.catalog)
    engine_rules.load_rules(settings.data_dir)
    calibration = reports.catalog_calibration(session, gpus, (stamps.catalog, stamps.reports))
    for gpu in gpus:
        # each GPU's GEMM efficiency from the kernel profiles (the carry-over fits every
        # donor's curve): remembered on the calibration, so the first request does not pay it
        perf.efficiencies(gpu, calibration)
    offers.gpu_offers(session, stamps.offers)


def recommend_for(
    session: Session,
    settings: Settings,
    request: s.RecommendationRequest,
    stamps: repository.Stamps | None = None,
) -> s.RecommendationResponse:
    # The catalog, offers and pooled calibration come from caches that one stamp query per
    # request validates (each was a query of its own: a fifth of the request); ``stamps``:
    # the stamps when the caller read them for its own caches too.
    if stamps is None:
        stamps = repository.input_stamps(session)
    gpus = catalog.all_specs(session, stamps.catalog)
    rules = engine_rules.load_rules(settings.data_dir)
    device = (
        _device(session, request.device_report_id, gpus)
        if request.device_report_id is not None
        else _Device()
    )
    # every stored report of a catalog GPU calibrates everyone's answer; a named report wins
    # for its own GPU
    pooled = reports.catalog_calibration(session, gpus, (stamps.catalog, stamps.reports))
    calibration = merge(pooled, device.calibration)
    # the catalog's per-card terms, kept with it; a named report's calibration is this
    # request's own, so its terms are worked out for it alone
    kept = None
    if device.calibration is None:
        kept = fleet_catalog(session, settings, stamps, gpus, pooled)
    stored = offers.gpu_offers(session, stamps.offers)
    service.check_providers(request.constraints, stored)
    response = service.recommend(
        request,
        gpus,
        rules,
        calibration,
        device.baseline,
        data_dir=settings.data_dir,
        offers=stored,
        catalog=kept,
    )
    response.warnings.extend(device.notes)
    if response.baseline is not None:
        response.baseline.tips = device.tips
    rows = list(response.recommendations)
    if response.serving is not None:
        rows += response.serving.closest
    _mark_stale(rows, offers.stale_cutoff(settings))
    _add_deploy(response, settings)
    response.summary = answer_summary(response, compat.setup_notes(rules))
    return response


def _add_deploy(response: s.RecommendationResponse, settings: Settings) -> None:
    """Each serving row's serve command and service file (the runtime's own flags): the one
    rule /estimate shares (deploy.attach)."""
    rows = list(response.recommendations) + (response.serving.closest if response.serving else [])
    deploy.attach(rows, response.workload, settings.data_dir)


def estimate_for(
    session: Session, settings: Settings, request: s.EstimateRequest
) -> s.EstimateResponse:
    return fit_probe(session, settings, request.gpu, relax=True)(request)


def fit_probe(
    session: Session, settings: Settings, slug: str, *, relax: bool = False
) -> Callable[[s.EstimateRequest], s.EstimateResponse]:
    """``estimate_for`` on one GPU for many requests, as a GPU page asks (each preset, then
    the largest LLM per precision): the card, its offers and its pooled calibration read
    once, not once a request, and by default no misfit's ``_fits_with`` variations
    (relax=False), which the page never shows. /gpus/<slug> ran ~85 estimates, each
    re-reading the three and each misfit re-estimating its variations: 1-3 s a page."""
    gpu = catalog.get_spec(session, slug, field="gpu")
    rules = engine_rules.load_rules(settings.data_dir)
    pooled = reports.pooled_calibration(session, [gpu])
    held = offers.gpu_offers(session).get(gpu.slug, GpuOffers())
    cutoff = offers.stale_cutoff(settings)

    def probe(request: s.EstimateRequest) -> s.EstimateResponse:
        response = service.estimate(
            request, gpu, rules, pooled, data_dir=settings.data_dir, offers=held, relax=relax
        )
        if response.result is not None:
            _mark_stale([response.result], cutoff)
        return response

    return probe


def _mark_stale(rows: list[s.Recommendation], cutoff: str) -> None:
    """Each row's rent and buy prices flagged stale by this server's offer_stale_days, as
    GET /api/v1/offers flags them (the rows are built with the default 90 days)."""
    for row in rows:
        for price in (row.cost.rent, row.cost.buy):
            if price is not None:
                price.stale = offers.is_stale(price.as_of, cutoff)


def list_workloads(settings: Settings) -> s.WorkloadList:
    return service.list_workloads(settings.data_dir)


def get_workload(settings: Settings, workload_id: str) -> s.WorkloadPresetOut:
    return service.get_workload(workload_id, settings.data_dir)

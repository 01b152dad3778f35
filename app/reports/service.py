"""Device reports: validate, match to the catalog, store, list; and calibration from them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.bench.report import SCHEMA_VERSION, BenchReport, apply_peaks, impossible_figure
from app.catalog import repository as catalog_repository
from app.catalog import service as catalog
from app.catalog.profiles import shipped_profiles
from app.db import Snapshots, session_scope, write_scope
from app.domain.calibration import (
    Calibration,
    Efficiencies,
    KernelMeasurement,
    Measurement,
    pool,
    pool_kernel_points,
    with_profiles,
)
from app.domain.calibration import pooled_calibration as pooled_calibration_of
from app.domain.gpu import GpuSpec
from app.domain.kernel_profiles import ProfileStore, merge_profiles, shape_key
from app.errors import Conflict, InvalidInput, NotFound, every_problem, invalid_input_from
from app.http.guard import Rejected, screen_json
from app.reports import repository
from app.reports.matching import match_device
from app.reports.models import DeviceReportRow
from app.reports.schemas import ReportOut, ReportPage, ReportSummary
from app.vocab import MEASURED_PRECISIONS

# Per-direction bandwidth of a x16 link after encoding, GB/s (methodology §4).
_PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}


def peaks_for(gpu: GpuSpec) -> dict[str, float]:
    peaks: dict[str, float] = {"bandwidth_gbs": gpu.memory_bandwidth_gbs}
    for precision in MEASURED_PRECISIONS:
        value = gpu.peak_tflops(precision)
        if value is not None:
            peaks[precision] = value
    if gpu.pcie_gen in _PCIE_X16_GBS:
        lanes = gpu.pcie_lanes or 16
        peaks["host_link_gbs"] = _PCIE_X16_GBS[gpu.pcie_gen] * lanes / 16
    return peaks


# Deeper than any report `gpu-advisor bench` writes (about 6 levels), and the guard's default.
MAX_REPORT_DEPTH = 64


def parse_report(raw: bytes) -> BenchReport:
    # The guard screens JSON bodies already; this screens again so that a caller that is not
    # the API (a page's upload form, a script, a future endpoint) can never store a NUL byte or
    # a lone surrogate (the database refuses it: a 500) or recurse past the stack.
    try:
        screen_json(raw, MAX_REPORT_DEPTH)
    except Rejected as exc:
        raise InvalidInput(exc.message, field=exc.field or "body") from exc
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"the report is not valid JSON: {exc}", field="body") from exc
    if not isinstance(data, dict):
        raise InvalidInput("the report must be a JSON object", field="body")
    try:
        return BenchReport.model_validate(data)
    except ValidationError as exc:
        if not any(
            e["type"] == "missing" and len(e["loc"]) == 1 for e in exc.errors(include_url=False)
        ):
            raise invalid_input_from(exc) from exc
        # a top-level part missing: some other JSON file, which the page's upload had answered
        # with its first lack alone ("profile: Field required"); said as the CLI's upload says it
        said = every_problem(exc.errors(include_url=False))
        field = invalid_input_from(exc).field
        raise InvalidInput(f"not a report made by gpu-advisor bench: {said}", field=field) from exc


def backend_fits(backend: str, gpu: GpuSpec) -> bool:
    """Whether a report measured on ``backend`` can have measured ``gpu``: never a CPU run
    (no catalog GPU runs PyTorch's CPU backend), and one of the GPU's own backends where the
    catalog names them (a ROCm run is no NVIDIA card's)."""
    if backend == "cpu":
        return False
    return not gpu.backends or backend in gpu.backends


def backend_mismatch(report: BenchReport, gpu: GpuSpec) -> str | None:
    """Why ``report`` cannot be a measurement of ``gpu``, or None."""
    backend = report.environment.backend
    if backend_fits(backend, gpu):
        return None
    if backend == "cpu":
        return (
            f"environment.backend is 'cpu' but catalog_match.slug names the GPU {gpu.slug} "
            f"({gpu.name}): this run measured the CPU (torch saw no GPU), not that GPU"
        )
    return (
        f"environment.backend is '{backend}' but {gpu.name} ({gpu.slug}) runs "
        f"{' or '.join(gpu.backends)}: this run did not measure that GPU"
    )


def resolve_gpu(report: BenchReport, gpus: list[GpuSpec]) -> tuple[GpuSpec | None, str]:
    """The catalog GPU a report measured: its manual match (refused, naming the field, when
    the catalog lacks it or the run's backend cannot be that GPU's: a CPU run labelled
    ``--gpu h100-sxm`` had been stored and used as a calibrated H100), else a name match on
    the GPU's own backend."""
    by_slug = {g.slug: g for g in gpus}
    if report.catalog_match and report.catalog_match.matched_by == "manual":
        gpu = by_slug.get(report.catalog_match.slug)
        if gpu is None:
            raise InvalidInput(
                f"catalog_match.slug '{report.catalog_match.slug}' is not in the catalog",
                field="catalog_match.slug",
            )
        mismatch = backend_mismatch(report, gpu)
        if mismatch is not None:
            raise InvalidInput(mismatch, field="catalog_match.slug")
        return gpu, "manual"
    env = report.environment
    if env.backend == "cpu":
        return None, "name"
    gib = env.device_memory_bytes / 2**30 if env.device_memory_bytes else None
    gpu = match_device(env.device_name, gib, gpus)
    if gpu is not None and not backend_fits(env.backend, gpu):
        return None, "name"
    return gpu, "name"


def refuse_impossible(report: BenchReport, gpu: GpuSpec) -> None:
    """A figure above the catalog peak of its GPU by more than boost clocks and timing noise
    allow (``PEAK_TOLERANCE``) is not a measurement: the whole report is refused, naming the
    field, so that nothing from a broken timer reaches the pooled profiles."""
    found = impossible_figure(report, peaks_for(gpu))
    if found is not None:
        path, message = found
        raise InvalidInput(f"{path}: {message} ({gpu.name})", field=path)


def content_hash(raw: bytes) -> str:
    """SHA-256 of a report's content, whatever its layout: of the JSON with sorted keys and
    no spaces where the body parses (the file `bench --output` writes is indented, the body
    `bench --upload` posts is not: one report either way), else of the bytes."""
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return hashlib.sha256(raw).hexdigest()
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def stored_copy(session: Session, raw: bytes, key: str) -> ReportOut | None:
    """The report already stored under an idempotency key, if any; a different body under
    the same key is a conflict (the client reused a key by mistake)."""
    row = repository.report_by_key(session, key)
    if row is None:
        return None
    # rows stored before content_hash hashed the raw bytes
    same = {content_hash(raw), hashlib.sha256(raw).hexdigest()}
    if row.content_sha256 and row.content_sha256 not in same:
        raise Conflict(
            "this Idempotency-Key was used for a different report", field="Idempotency-Key"
        )
    return _out(row)


def duplicate_of(session: Session, sha256: str) -> ReportOut | None:
    """The stored report with this content hash (``content_hash``), if any: uploading one
    report again stores nothing new (it had counted as another machine in the pooled
    calibration); the answer says so (``duplicate``)."""
    row = repository.report_by_content(session, sha256)
    if row is None:
        return None
    return _out(row).model_copy(update={"duplicate": True})


def prepare_report(session: Session, raw: bytes, origin: str) -> dict[str, object]:
    """Validate a report and match it to the catalog: the row to store (reads only)."""
    report = parse_report(raw)
    gpu, matched_by = resolve_gpu(report, catalog.all_specs(session))
    if gpu is not None:
        refuse_impossible(report, gpu)
        # Recompute efficiencies against our catalog's peaks, whatever the client sent;
        # this also rejects figures above 1.15 × peak.
        report = apply_peaks(report, peaks_for(gpu), gpu.slug, gpu.name, matched_by)  # type: ignore[arg-type]
    else:
        report = report.model_copy(update={"catalog_match": None})
    return {
        "device_name": report.environment.device_name[:200],
        "backend": report.environment.backend,
        "gpu_slug": gpu.slug if gpu else None,
        "profile": report.profile[:20],
        "schema_version": report.schema_version,
        "origin": origin,
        "size_bytes": len(raw),
        "headline": report.summary_measured(),
        "report": report.model_dump(mode="json"),
        "content_sha256": content_hash(raw),
    }


def insert_report(
    session: Session,
    values: dict[str, object],
    *,
    idempotency_key: str | None = None,
    retention: tuple[int, int] | None = None,
) -> ReportOut:
    row = repository.add_report(session, {**values, "idempotency_key": idempotency_key})
    out = _out(row)
    if retention is not None:
        repository.enforce_retention(session, *retention)
    return out


def store_once(
    factory: sessionmaker[Session],
    raw: bytes,
    origin: str,
    *,
    idempotency_key: str | None,
    retention: tuple[int, int] | None,
) -> tuple[ReportOut, bool]:
    """Store in its own committed transaction (blocking: call from a thread); True when an
    earlier request with the same key had already stored it. The one way a report is stored:
    the API, the upload page and the server's own runs all come here, so each takes the lock
    and looks again below. ``retention`` (count, bytes) drops the oldest reports past either
    bound."""
    with session_scope(factory) as session:
        existing = (
            stored_copy(session, raw, idempotency_key) if idempotency_key is not None else None
        )
        existing = existing or duplicate_of(session, content_hash(raw))
    if existing is not None:
        return existing, True
    # Validation and catalog matching (the costly part) happen before the write lock, so
    # writers hold it only for the insert.
    with session_scope(factory) as session:
        values = prepare_report(session, raw, origin)
    try:
        with write_scope(factory) as session:
            # looked for again under the write lock: two uploads of one report at once had
            # each found no copy before validating, and both stored it
            sha256 = str(values["content_sha256"])
            repository.hold_content(session, sha256)
            existing = (
                stored_copy(session, raw, idempotency_key) if idempotency_key is not None else None
            ) or duplicate_of(session, sha256)
            if existing is None:
                out = insert_report(
                    session, values, idempotency_key=idempotency_key, retention=retention
                )
        if existing is not None:
            return existing, True
        return out, False
    except IntegrityError:
        if idempotency_key is None:
            raise
        # A concurrent retry with the same key committed first: answer with its copy.
        with session_scope(factory) as session:
            existing = stored_copy(session, raw, idempotency_key)
        if existing is None:
            raise
        return existing, True


def delete_report(session: Session, report_id: int) -> None:
    if not repository.delete_report(session, report_id):
        raise NotFound(f"no device report with id {report_id}", field="report_id")


def _summary(row: DeviceReportRow) -> ReportSummary:
    return ReportSummary(
        id=row.id,
        created_at=row.created_at,
        device_name=row.device_name,
        backend=row.backend,
        gpu_slug=row.gpu_slug,
        profile=row.profile,
        origin=row.origin,
        headline=row.headline,
    )


def _out(row: DeviceReportRow) -> ReportOut:
    return ReportOut(**_summary(row).model_dump(), report=row.report)


def list_reports(
    session: Session, *, gpu_slug: str | None = None, limit: int = 50, offset: int = 0
) -> ReportPage:
    total, rows = repository.list_reports(session, gpu_slug=gpu_slug, limit=limit, offset=offset)
    return ReportPage(total=total, limit=limit, offset=offset, items=[_summary(r) for r in rows])


def require_catalog_slug(session: Session, slug: str, field: str) -> None:
    """A filter's slug the catalog lacks is a typo, said as one (it read as "no reports")."""
    if catalog_repository.get_by_slug(session, slug) is None:
        raise InvalidInput(catalog.unknown_gpus(session, [slug]), field=field)


def get_report(session: Session, report_id: int) -> ReportOut:
    row = repository.get_report(session, report_id)
    if row is None:
        raise NotFound(f"no device report with id {report_id}", field="report_id")
    return _out(row)


def load_bench_report(
    session: Session, report_id: int, field: str
) -> tuple[BenchReport, str | None]:
    row = repository.get_report(session, report_id)
    if row is None:
        raise NotFound(f"no device report with id {report_id}", field=field)
    return BenchReport.model_validate(row.report), row.gpu_slug


def pooled_calibration(session: Session, gpus: list[GpuSpec]) -> Calibration | None:
    """Every stored report of a catalog GPU, pooled per (GPU, backend, precision) into
    measured efficiencies (robust median, outliers dropped, count kept; app.domain.calibration)."""
    by_slug = {g.slug: g for g in gpus}
    measurements: list[Measurement] = []
    for found in repository.matched_headlines(session):
        gpu = by_slug.get(found.slug)
        if gpu is None:
            continue
        peaks = peaks_for(gpu)
        figures = {k: v / peaks[k] for k, v in found.headline.items() if peaks.get(k) and v}
        if figures:
            # one machine counts once (its host id, else the report's content hash); noisy
            # headline figures are left out (app.domain.calibration.pool)
            machine = found.host_id or found.content_sha256
            measurements.append(
                Measurement(found.slug, found.backend, figures, machine, found.noisy)
            )
    return calibration_of_reports(measurements, kernel_measurements(session), gpus)


def calibration_of_reports(
    measurements: list[Measurement], kernels: list[KernelMeasurement], gpus: list[GpuSpec]
) -> Calibration | None:
    """The calibration the engine answers ``gpus`` with, from stored reports' headline
    figures and kernel points: pooled measured efficiencies, and the shipped kernel profiles
    with the pooled kernel points merged in. With no report stored (``[]``, ``[]``) it is the
    shipped profiles alone: what a fresh service attaches (benchmarks/accuracy.py scores
    the held-out set with it too)."""
    by_slug = {g.slug: g for g in gpus}
    backends = {g.slug: g.backends[0] for g in gpus if g.backends}
    pooled = pool(measurements, backends)
    calibration = pooled_calibration_of(pooled, gpus, source="pooled device reports")
    # the donors of the carry-over are the profiled GPUs, whichever GPUs were asked about
    _, shipped_gpus = shipped_profiles()
    donors = {**shipped_gpus, **by_slug}
    return with_profiles(calibration, profile_store(kernels, gpus), donors)


# The catalog's pooled calibration per database, rebuilt when a report or the catalog changes.
_pooled: Snapshots[Calibration | None] = Snapshots()


def catalog_calibration(
    session: Session, gpus: list[GpuSpec], stamp: tuple[Any, ...] | None = None
) -> Calibration | None:
    """pooled_calibration for ``gpus`` = the whole catalog, from the cache while neither the
    reports nor the catalog changed; ``stamp``: (catalog stamp, reports stamp) when the
    caller read them in one query."""
    if stamp is None:
        stamp = (catalog_repository.catalog_stamp(session), repository.reports_stamp(session))
    return _pooled.get(session, stamp, lambda: pooled_calibration(session, gpus))


def kernel_measurements(session: Session) -> list[KernelMeasurement]:
    """Every stored report's ok kernel points with an efficiency (the server computed it
    against its own catalog peak when the report was stored)."""
    out: list[KernelMeasurement] = []
    for slug, backend, version, data in repository.matched_kernel_reports(session):
        points = []
        for p in (data.get("kernels") or {}).get("points") or []:
            eff = p.get("efficiency")
            if p.get("status", "ok") == "ok" and isinstance(eff, int | float) and eff > 0:
                shape = shape_key(p.get("shape") or {})
                points.append((str(p["kernel_class"]), str(p["dtype"]), shape, float(eff)))
        if points:
            out.append(KernelMeasurement(slug, backend, version, tuple(points)))
    return out


def kernel_profile_store(session: Session, gpus: list[GpuSpec]) -> ProfileStore:
    """The shipped kernel profiles with every stored report pooled in per GPU model
    (app.domain.calibration.pool_kernel_points); measured points replace published ones of
    the same shape. The engine reads it through kernel_profiles.profile_efficiency."""
    return profile_store(kernel_measurements(session), gpus)


def profile_store(kernels: list[KernelMeasurement], gpus: list[GpuSpec]) -> ProfileStore:
    """kernel_profile_store from these reports' kernel points (none: the shipped profiles)."""
    backends = {g.slug: g.backends[0] for g in gpus if g.backends}
    pooled = pool_kernel_points(kernels, backends, SCHEMA_VERSION)
    shipped, _ = shipped_profiles()
    merged = {}
    for slug in sorted(set(shipped.profiles) | set(pooled)):  # a defined order
        profile = merge_profiles(shipped.profiles.get(slug), pooled.get(slug))
        if profile is not None:
            merged[slug] = profile
    return ProfileStore(merged)


def calibration_from(report: BenchReport, gpu: GpuSpec | None, source: str) -> Calibration | None:
    """Measured efficiencies of a report's catalog GPU, as the engine's calibration; None
    when the report's backend cannot be that GPU's (a CPU run stored as an H100 before
    uploads were checked must not calibrate the H100)."""
    if gpu is None or not backend_fits(report.environment.backend, gpu):
        return None
    eff = report.summary_efficiencies()
    compute = {k: v for k, v in eff.items() if k != "bandwidth_gbs"}
    if not compute and "bandwidth_gbs" not in eff:
        return None
    pinned = pageable = None
    if report.transfer is not None:
        for fit in report.transfer.fits:
            if fit.direction == "h2d" and fit.headline.ok and fit.headline.value:
                if fit.memory == "pinned":
                    pinned = fit.headline.value
                elif fit.memory == "pageable":
                    pageable = fit.headline.value
    return Calibration.from_measurement(
        gpu,
        Efficiencies(
            compute=compute,
            memory=eff.get("bandwidth_gbs"),
            h2d_pinned_gbs=pinned,
            h2d_pageable_gbs=pageable,
        ),
        source=source,
    )

"""Recommendation services: resolve a request into a workload, evaluate every GPU, rank.

Pure apart from reading the preset files; the caller passes GPUs, rules, calibration and the
baseline device, so the same code serves the API, the web pages and the CLI.
"""

from __future__ import annotations

from pathlib import Path

from app.domain import compat, rank
from app.domain import evaluate as ev
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec, memory_breakdown
from app.errors import InvalidInput, NotFound
from app.recommend import schemas as s
from app.recommend import whatif
from app.recommend.presets import DATA_DIR
from app.recommend.rows import build_row, gpu_out, memory_out
from app.recommend.workloads import get_workload, list_workloads, resolve_workload, resolved_out

__all__ = [
    "InvalidInput",
    "NotFound",
    "estimate",
    "get_workload",
    "list_workloads",
    "recommend",
    "resolve_workload",
]


# ---------------------------------------------------------------- one configuration


def _context(
    work: WorkloadSpec,
    cons: s.ConstraintsIn,
    objective: str,
    rules: compat.Rules,
    calibration: Calibration | None,
    apply_filters: bool = True,
) -> ev.Context:
    limits = ev.Limits(
        objective=objective,
        acquisition=cons.acquisition,
        max_purchase_usd=cons.max_purchase_usd,
        max_hourly_usd=cons.max_hourly_usd,
        max_job_cost_usd=cons.max_job_cost_usd,
        electricity_usd_per_kwh=cons.electricity_usd_per_kwh,
        vendors=tuple(cons.vendors) if cons.vendors else None,
        segments=tuple(cons.segments) if cons.segments else None,
        max_gpus=cons.max_gpus,
    )
    return ev.Context(
        work=work,
        rules=rules,
        framework=cons.framework,
        limits=limits,
        calibration=calibration,
        apply_filters=apply_filters,
    )


def _best(gpu: GpuSpec, ctx: ev.Context) -> ev.ConfigResult | ev.Exclusion:
    """Every configuration of ``gpu`` the engine plans, evaluated once; the runnable ones."""
    planned = ev.plan(gpu, ctx)
    if isinstance(planned, ev.Exclusion):
        return planned
    results = [ev.evaluate(c, ctx) for c in planned]
    ok = [r for r in results if r.ok]
    if ok:
        return ok[0]
    first = results[0].exclusion
    assert first is not None
    return first


# ---------------------------------------------------------------- services


def _baseline(
    baseline: GpuSpec | None, ctx: ev.Context
) -> tuple[s.BaselineOut | None, float | None]:
    """The user's own device on the same job, on one card as they own it."""
    if baseline is None:
        return None, None
    calibration = ctx.calibration
    calibrated = calibration is not None and baseline.slug in calibration.by_slug
    source = calibration.source if calibration is not None else None
    res = ev.evaluate(ev.Configuration(baseline, 1), ctx)
    if not res.ok or res.perf is None:
        assert res.exclusion is not None
        note = res.exclusion.reason
        if res.exclusion.code == "does_not_fit" and res.memory is not None:
            note = (
                f"your {baseline.name} cannot hold this job: it needs {res.memory.total:.1f} GB "
                f"and has {res.available_gb:.0f} GB, so no speed-up is computed against it"
            )
        out = s.BaselineOut(
            slug=baseline.slug,
            name=baseline.name,
            throughput=None,
            unit=None,
            calibrated=calibrated,
            source=source,
            note=note,
        )
        return out, None
    out = s.BaselineOut(
        slug=baseline.slug,
        name=baseline.name,
        throughput=res.perf.throughput,
        unit=res.perf.unit,
        calibrated=calibrated,
        source=source,
    )
    return out, res.perf.throughput


def recommend(
    request: s.RecommendationRequest,
    gpus: list[GpuSpec],
    rules: compat.Rules,
    calibration: Calibration | None = None,
    baseline: GpuSpec | None = None,
    data_dir: Path = DATA_DIR,
) -> s.RecommendationResponse:
    """Rank every GPU in ``gpus`` for the request; list the others with the reason."""
    work, warnings = resolve_workload(request.workload, data_dir)
    cons = request.constraints
    if cons.max_job_cost_usd is not None and work.dataset_samples is None:
        warnings.append("max_job_cost_usd needs dataset_samples to price the job; ignored")
    ctx = _context(work, cons, request.objective, rules, calibration)
    cands: list[rank.Candidate] = []
    excluded: list[s.Excluded] = []
    for gpu in sorted(gpus, key=lambda g: g.slug):
        res = _best(gpu, ctx)
        if isinstance(res, ev.Exclusion):
            excluded.append(
                s.Excluded(slug=gpu.slug, name=gpu.name, code=res.code, reason=res.reason)
            )
        else:
            cands.append(rank.Candidate.of(res))
    ordered = rank.rank(cands, request.objective)
    base_ctx = _context(work, cons, "fastest", rules, calibration, apply_filters=False)
    base_out, base_tput = _baseline(baseline, base_ctx)
    rows = [
        build_row(c, i, ordered[0], request.objective, work, base_tput)
        for i, c in enumerate(ordered[: request.limit], start=1)
    ]
    fallbacks = sorted({c.work.precision for c in ordered if c.work.precision != work.precision})
    if fallbacks:
        n_fb = sum(1 for c in ordered if c.work.precision != work.precision)
        warnings.append(
            f"{work.precision} is unsupported on {n_fb} of the ranked GPUs; they are estimated "
            f"at {', '.join(fallbacks)} (see each row's warnings)"
        )
    top_mem = memory_breakdown(work)
    response = s.RecommendationResponse(
        workload=resolved_out(work),
        memory=memory_out(top_mem, None),
        objective=request.objective,
        acquisition=cons.acquisition,
        framework=cons.framework,
        count=len(ordered),
        recommendations=rows,
        excluded=sorted(excluded, key=lambda e: (e.code, e.slug)),
        baseline=base_out,
        warnings=warnings,
    )
    if request.what_if:
        response.what_if = whatif.what_if(
            request,
            response,
            work,
            lambda r: recommend(r, gpus, rules, calibration, baseline, data_dir),
        )
    return response


def estimate(
    request: s.EstimateRequest,
    gpu: GpuSpec,
    rules: compat.Rules,
    calibration: Calibration | None = None,
    data_dir: Path = DATA_DIR,
) -> s.EstimateResponse:
    """One workload on one named GPU, in full detail (budgets and filters do not apply)."""
    work, warnings = resolve_workload(request.workload, data_dir)
    ctx = _context(work, request.constraints, "fastest", rules, calibration, apply_filters=False)
    if request.num_gpus is not None:
        res: ev.ConfigResult | ev.Exclusion = ev.evaluate(
            ev.Configuration(gpu, request.num_gpus), ctx
        )
        if isinstance(res, ev.ConfigResult) and res.exclusion is not None:
            res = res.exclusion
    else:
        res = _best(gpu, ctx)
    if isinstance(res, ev.Exclusion):
        excl = s.Excluded(slug=gpu.slug, name=gpu.name, code=res.code, reason=res.reason)
        return s.EstimateResponse(
            workload=resolved_out(work),
            gpu=gpu_out(gpu),
            result=None,
            excluded=excl,
            warnings=warnings,
        )
    cand = rank.Candidate.of(res)
    rank.rank([cand], "fastest")
    row = build_row(cand, 1, cand, "fastest", work, None)
    return s.EstimateResponse(
        workload=resolved_out(work),
        gpu=gpu_out(gpu),
        result=row,
        warnings=warnings + cand.warnings,
    )

"""Recommendation services: resolve a request into a workload, evaluate every GPU, rank.

Pure apart from reading the preset files; the caller passes GPUs, rules, calibration and the
baseline device, so the same code serves the API, the web pages and the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from app.domain import compat, perf, rank
from app.domain import cost as costs
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec, memory_breakdown
from app.errors import InvalidInput, NotFound
from app.recommend import schemas as s
from app.recommend import whatif
from app.recommend.presets import DATA_DIR
from app.recommend.rows import build_row, gpu_out, memory_out
from app.recommend.workloads import get_workload, list_workloads, resolve_workload, resolved_out

# macOS lets the GPU wire about three quarters of unified memory by default
# (recommendedMaxWorkingSetSize); discrete GPUs expose all of theirs.
UNIFIED_MEMORY_USABLE = 0.75
SINGLE_DEVICE_SEGMENTS = ("soc", "laptop")

__all__ = [
    "InvalidInput",
    "NotFound",
    "estimate",
    "get_workload",
    "list_workloads",
    "recommend",
    "resolve_workload",
]


# ---------------------------------------------------------------- one GPU


@dataclass
class _Excl:
    code: str
    reason: str


def _usable_gb(gpu: GpuSpec) -> float:
    unified = gpu.vendor == "apple" or gpu.segment == "soc"
    return gpu.memory_gb * (UNIFIED_MEMORY_USABLE if unified else 1.0)


def _gpus_needed(
    work: WorkloadSpec, gpu: GpuSpec, backend: str, flash: bool, max_n: int
) -> tuple[int | None, float]:
    avail = _usable_gb(gpu)
    one = memory_breakdown(work, num_gpus=1, backend=backend, flash_attention=flash)
    if one.total <= avail:
        return 1, one.total
    shardable = one.total - one.framework
    room = avail - one.framework
    if room <= 0:
        return None, one.total
    # tensor parallelism splits heads evenly, so real deployments use powers of two
    n = 1 << max(0, math.ceil(math.log2(math.ceil(shardable / room))))
    return (n if n <= max_n else None), one.total


def _time_to_finish(work: WorkloadSpec, p: perf.PerfEstimate) -> float | None:
    if work.dataset_samples is None or p.throughput <= 0:
        return None
    samples = work.dataset_samples * (work.epochs or 1.0)
    per_sample = work.output_tokens if work.is_llm_inference else 1
    per_sample_s = per_sample / p.throughput
    return samples * per_sample_s / 3600.0


def _budget(
    c: costs.CostEstimate, cons: s.ConstraintsIn, objective: str, job: float | None
) -> tuple[str | None, _Excl | None]:
    """Which acquisition modes pass; an exclusion when none does."""
    acq = cons.acquisition
    priced = needs_price = rank.needs_price(objective) or any(
        x is not None for x in (cons.max_purchase_usd, cons.max_hourly_usd, cons.max_job_cost_usd)
    )
    if not needs_price:
        return acq, None
    modes = ["buy", "rent"] if acq == "either" else [acq]
    ok: list[str] = []
    over: list[str] = []
    for mode in modes:
        price = c.purchase_usd if mode == "buy" else c.hourly_usd
        limit = cons.max_purchase_usd if mode == "buy" else cons.max_hourly_usd
        if price is None:
            continue
        if limit is not None and price > limit:
            over.append(f"{'purchase' if mode == 'buy' else 'rent'} ${price:,.2f} > ${limit:,.2f}")
            continue
        if cons.max_job_cost_usd is not None and job is not None:
            mode_job = costs.job_cost(c, mode)
            if mode_job is not None and mode_job > cons.max_job_cost_usd:
                over.append(f"job cost ({mode}) ${mode_job:,.0f} > ${cons.max_job_cost_usd:,.0f}")
                continue
        ok.append(mode)
    if ok:
        return ("either" if len(ok) == 2 else ok[0]), None
    if over:
        return None, _Excl("over_budget", "; ".join(over))
    what = {"buy": "purchase price", "rent": "rental price", "either": "purchase or rental price"}
    del priced
    return None, _Excl("no_price", f"no {what[acq]} known, and the objective or budget needs one")


def _evaluate(
    gpu: GpuSpec,
    work: WorkloadSpec,
    cons: s.ConstraintsIn,
    objective: str,
    rules: compat.Rules,
    calibration: Calibration | None,
    force_n: int | None = None,
    apply_filters: bool = True,
) -> rank.Candidate | _Excl:
    if apply_filters:
        if cons.vendors and gpu.vendor not in cons.vendors:
            return _Excl("filtered_out", f"vendor {gpu.vendor} not in {', '.join(cons.vendors)}")
        if cons.segments and gpu.segment not in cons.segments:
            return _Excl("filtered_out", f"segment {gpu.segment} not in {', '.join(cons.segments)}")
    support = compat.framework_support(gpu, cons.framework, rules)
    if not support.ok or support.backend is None:
        return _Excl("framework_unsupported", support.reason or f"no {cons.framework} support")
    backend = support.backend
    precision, warn = compat.resolve_precision(gpu, work.precision, rules, backend)
    if precision is None:
        return _Excl("precision_unsupported", f"{work.precision} is not supported on {gpu.name}")
    run = work if precision == work.precision else work.with_precision(precision)
    flash = bool(compat.has_feature(gpu, "flash_attention_2", rules, backend))
    single = gpu.segment in SINGLE_DEVICE_SEGMENTS or backend == "mps"
    max_n = 1 if single else cons.max_gpus
    if force_n is not None:
        n: int | None = force_n
        mem = memory_breakdown(run, num_gpus=force_n, backend=backend, flash_attention=flash)
        if mem.total > _usable_gb(gpu):
            return _Excl(
                "does_not_fit",
                f"needs {mem.total:.1f} GB per GPU on {force_n}, has {_usable_gb(gpu):.0f} GB",
            )
    else:
        n, total1 = _gpus_needed(run, gpu, backend, flash, max_n)
        if n is None:
            where = "one GPU" if max_n == 1 else f"{max_n} GPUs"
            return _Excl(
                "does_not_fit",
                f"needs {total1:.1f} GB on one GPU; does not fit in {where} of "
                f"{_usable_gb(gpu):.0f} GB even when sharded",
            )
        mem = memory_breakdown(run, num_gpus=n, backend=backend, flash_attention=flash)
    assert n is not None
    est = perf.estimate(
        gpu,
        run,
        framework=cons.framework,
        num_gpus=n,
        calibration=calibration,
        flash_attention=flash,
    )
    if not math.isfinite(est.throughput) or est.throughput <= 0:
        return _Excl("no_figures", "the catalog has no compute figures to model this GPU")
    hours = _time_to_finish(run, est)
    cost = costs.estimate_cost(
        gpu, est.num_gpus, est.throughput, hours, cons.electricity_usd_per_kwh
    )
    acq, excl = _budget(cost, cons, objective, hours)
    if excl is not None and apply_filters:
        return excl
    derived = (
        any(
            perf.peak_tflops(gpu, p)[1] and not gpu.peak_tflops(p) for p in ("fp16", "bf16", "tf32")
        )
        and precision != "fp32"
    )
    cand = rank.Candidate(
        gpu=gpu,
        work=run,
        memory=mem,
        available_gb=_usable_gb(gpu),
        perf=est,
        cost=cost,
        warnings=[warn] if warn else [],
        derived_peak=derived,
        framework_status=support.status,
        acquisition=acq or cons.acquisition,
    )
    if support.status == "experimental":
        cand.warnings.append(f"{cons.framework} on {backend} is experimental")
    if work.latency_target_ms is not None and est.latency_ms is not None:
        cand.meets_latency = est.latency_ms <= work.latency_target_ms
    return cand


# ---------------------------------------------------------------- services


def _baseline(
    baseline: GpuSpec | None,
    work: WorkloadSpec,
    cons: s.ConstraintsIn,
    rules: compat.Rules,
    calibration: Calibration | None,
) -> tuple[s.BaselineOut | None, float | None]:
    if baseline is None:
        return None, None
    res = _evaluate(baseline, work, cons, "fastest", rules, calibration, apply_filters=False)
    calibrated = calibration is not None and baseline.slug in calibration.by_slug
    source = calibration.source if calibration is not None else None
    if isinstance(res, _Excl):
        # still estimate speed so speed-ups stay meaningful, and say it does not fit
        try:
            est = perf.estimate(baseline, work, framework=cons.framework, calibration=calibration)
        except (ValueError, ZeroDivisionError):
            est = None
        tput = est.throughput if est is not None and math.isfinite(est.throughput) else None
        return (
            s.BaselineOut(
                slug=baseline.slug,
                name=baseline.name,
                throughput=tput,
                unit=est.unit if est is not None else None,
                calibrated=calibrated,
                source=source,
                note=res.reason,
            ),
            tput,
        )
    return (
        s.BaselineOut(
            slug=baseline.slug,
            name=baseline.name,
            throughput=res.perf.throughput,
            unit=res.perf.unit,
            calibrated=calibrated,
            source=source,
            note=None if res.n == 1 else f"needs {res.n} GPUs",
        ),
        res.perf.throughput,
    )


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
    cands: list[rank.Candidate] = []
    excluded: list[s.Excluded] = []
    for gpu in sorted(gpus, key=lambda g: g.slug):
        res = _evaluate(gpu, work, cons, request.objective, rules, calibration)
        if isinstance(res, _Excl):
            excluded.append(
                s.Excluded(slug=gpu.slug, name=gpu.name, code=res.code, reason=res.reason)
            )
        else:
            cands.append(res)
    ordered = rank.rank(cands, request.objective)
    base_out, base_tput = _baseline(baseline, work, cons, rules, calibration)
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
    res = _evaluate(
        gpu,
        work,
        request.constraints,
        "fastest",
        rules,
        calibration,
        force_n=request.num_gpus,
        apply_filters=False,
    )
    if isinstance(res, _Excl):
        excl = s.Excluded(slug=gpu.slug, name=gpu.name, code=res.code, reason=res.reason)
        return s.EstimateResponse(
            workload=resolved_out(work),
            gpu=gpu_out(gpu),
            result=None,
            excluded=excl,
            warnings=warnings,
        )
    rank.rank([res], "fastest")
    row = build_row(res, 1, res, "fastest", work, None)
    return s.EstimateResponse(
        workload=resolved_out(work),
        gpu=gpu_out(gpu),
        result=row,
        warnings=warnings + res.warnings,
    )

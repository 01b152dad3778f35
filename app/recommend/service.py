"""Recommendation services: resolve a request into a workload, evaluate every GPU, rank.

Pure apart from reading the preset files; the caller passes GPUs, rules, calibration and the
baseline device, so the same code serves the API, the web pages and the CLI.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from app.domain import compat, perf, rank
from app.domain import cost as costs
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.domain.workload import ModelSpec, WorkloadSpec, memory_breakdown
from app.errors import InvalidInput, NotFound
from app.recommend import schemas as s
from app.recommend.presets import DATA_DIR, Preset, load_presets

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


# ---------------------------------------------------------------- presets


def _model_out(m: ModelSpec) -> s.ModelOut:
    return s.ModelOut(
        family=m.family,
        params=m.params,
        layers=m.layers,
        hidden_size=m.hidden_size,
        num_heads=m.num_heads,
        num_kv_heads=m.num_kv_heads,
        intermediate_size=m.intermediate_size,
        vocab_size=m.vocab_size,
        max_context=m.max_context,
        gflops_per_sample=m.gflops_per_sample,
        input_size=m.input_size,
        experts=m.experts,
        active_experts=m.active_experts,
        active_params=m.active_params,
        passes_per_sample=m.passes_per_sample,
    )


def _preset_out(p: Preset) -> s.WorkloadPresetOut:
    return s.WorkloadPresetOut(
        id=p.id,
        name=p.name,
        description=p.description,
        model=_model_out(p.model),
        defaults=dict(p.defaults),
        sources=list(p.sources),
        references=dict(p.source_refs),
        notes=p.notes,
    )


def list_workloads(data_dir: Path = DATA_DIR) -> s.WorkloadList:
    items = [_preset_out(p) for p in load_presets(data_dir).values()]
    return s.WorkloadList(workloads=items, count=len(items))


def get_workload(workload_id: str, data_dir: Path = DATA_DIR) -> s.WorkloadPresetOut:
    preset = load_presets(data_dir).get(workload_id)
    if preset is None:
        raise NotFound(f"no workload preset '{workload_id}'", field="id")
    return _preset_out(preset)


# ---------------------------------------------------------------- request → workload


def _merge_model(w: s.WorkloadIn, preset: Preset | None) -> ModelSpec:
    base: dict[str, Any] = {}
    if preset is not None:
        m = preset.model
        base = {f.name: getattr(m, f.name) for f in fields(m)}
    if w.model is not None:
        base.update({k: v for k, v in w.model.model_dump().items() if v is not None})
    if not base.get("family"):
        raise InvalidInput("give a preset or model.family", field="workload.model.family")
    if not base.get("params"):
        raise InvalidInput("give a preset or model.params", field="workload.model.params")
    return ModelSpec(**base)


def _check_model(m: ModelSpec) -> None:
    if m.active_params is not None and m.active_params > m.params:
        raise InvalidInput(
            "active_params cannot exceed params", field="workload.model.active_params"
        )
    if m.num_heads and m.num_kv_heads and m.num_kv_heads > m.num_heads:
        raise InvalidInput(
            "num_kv_heads cannot exceed num_heads", field="workload.model.num_kv_heads"
        )
    if m.hidden_size and m.num_heads and m.hidden_size < m.num_heads:
        raise InvalidInput("hidden_size must be ≥ num_heads", field="workload.model.hidden_size")
    if m.is_transformer and not m.has_shape:
        raise InvalidInput(
            f"{m.family} models need layers and hidden_size", field="workload.model.layers"
        )
    if m.family == "vit" and not m.has_shape and m.gflops_per_sample is None:
        raise InvalidInput(
            "vit models need layers and hidden_size, or gflops_per_sample",
            field="workload.model.gflops_per_sample",
        )
    if m.family in ("cnn", "diffusion", "mlp") and m.gflops_per_sample is None:
        raise InvalidInput(
            f"{m.family} models need gflops_per_sample (forward GFLOPs per sample, 2 × MACs); "
            "this preset has no sourced figure",
            field="workload.model.gflops_per_sample",
        )
    # 2 bytes per parameter must not exceed what 64 of the largest GPUs could ever hold
    if m.params * 0.5 > 64 * 1024e9:
        raise InvalidInput("params is beyond any GPU cluster size", field="workload.model.params")


def resolve_workload(w: s.WorkloadIn, data_dir: Path = DATA_DIR) -> tuple[WorkloadSpec, list[str]]:
    """Apply preset defaults and reject contradictions, naming the field."""
    warnings: list[str] = []
    preset = None
    if w.preset is not None:
        preset = load_presets(data_dir).get(w.preset)
        if preset is None:
            raise InvalidInput(f"unknown workload preset '{w.preset}'", field="workload.preset")
    d = preset.defaults if preset is not None else {}
    model = _merge_model(w, preset)
    _check_model(model)

    task = w.task or d.get("task")
    if task is None:
        raise InvalidInput("task is required without a preset", field="workload.task")
    inference = task == "inference"
    if inference and w.optimizer is not None:
        raise InvalidInput("an optimizer makes no sense for inference", field="workload.optimizer")
    if inference and w.peft not in (None, "none"):
        raise InvalidInput("LoRA/QLoRA are fine-tuning methods", field="workload.peft")
    if inference and w.gradient_checkpointing:
        raise InvalidInput(
            "gradient checkpointing only applies to training",
            field="workload.gradient_checkpointing",
        )
    peft = "none" if inference else (w.peft or d.get("peft") or "none")
    passes = model.passes_per_sample or 1
    if not inference and passes > 1 and model.gflops_per_sample:
        # A diffusion training sample is one UNet pass at a random timestep, not a whole
        # denoising run: per-image figures do not apply.
        model = dataclasses.replace(
            model, gflops_per_sample=model.gflops_per_sample / passes, passes_per_sample=1
        )
        warnings.append(
            f"training uses one network pass per sample: {model.gflops_per_sample:,.0f} "
            f"forward GFLOPs (the preset's figure covers {passes} passes for one generated image)"
        )
    if task == "training" and peft != "none":
        raise InvalidInput(
            "LoRA/QLoRA adapt a pretrained model: use task 'fine-tuning'", field="workload.peft"
        )

    precision = w.precision or d.get("precision") or "bf16"
    if not inference and peft == "none" and precision in ("int8", "int4"):
        raise InvalidInput(
            f"full training in {precision} is not supported; use bf16/fp16, or peft 'qlora'",
            field="workload.precision",
        )
    if peft == "lora" and precision == "int4":
        raise InvalidInput("LoRA on a 4-bit base is QLoRA: set peft 'qlora'", field="workload.peft")
    if peft == "qlora" and precision not in ("bf16", "fp16"):
        warnings.append(f"QLoRA computes in bf16 over a 4-bit base; precision {precision} → bf16")
        precision = "bf16"

    transformer = model.is_transformer
    seq_default = min(model.max_context or 2048, 2048)
    seq_len = int(w.seq_len or d.get("seq_len") or (seq_default if transformer else 1))
    out_tokens = int(w.output_tokens or d.get("output_tokens") or 128)
    if transformer and model.max_context and model.family == "decoder":
        ctx = seq_len + (out_tokens if inference else 0)
        if ctx > model.max_context:
            warnings.append(
                f"context {ctx} exceeds the model's max_context {model.max_context}; "
                "estimated anyway"
            )
    if w.latency_target_ms is not None and not inference:
        warnings.append("latency_target_ms only applies to inference; ignored")
    optimizer = "adamw" if inference else (w.optimizer or d.get("optimizer") or "adamw")
    epochs_default = d.get("epochs") or 1
    work = WorkloadSpec(
        task=task,
        model=model,
        precision=precision,
        batch_size=int(w.batch_size or d.get("batch_size") or 1),
        seq_len=seq_len,
        output_tokens=out_tokens,
        optimizer=optimizer,
        peft=peft,
        gradient_checkpointing=bool(
            w.gradient_checkpointing
            if w.gradient_checkpointing is not None
            else (d.get("gradient_checkpointing") or False) and not inference
        ),
        dataset_samples=w.dataset_samples
        if w.dataset_samples is not None
        else d.get("dataset_samples"),
        epochs=float(w.epochs or epochs_default),
        latency_target_ms=w.latency_target_ms if inference else None,
        lora_rank=w.lora_rank or 16,
        allow_tf32_matmul=bool(w.allow_tf32_matmul),
        preset=preset.id if preset is not None else None,
    )
    return work, warnings


def _resolved_out(work: WorkloadSpec) -> s.ResolvedWorkload:
    m = work.model
    inference = work.task == "inference"
    return s.ResolvedWorkload(
        preset=work.preset,
        task=work.task,
        model=_model_out(m),
        precision=work.precision,
        batch_size=work.batch_size,
        seq_len=work.seq_len if m.is_transformer else None,
        output_tokens=work.output_tokens if work.is_llm_inference else None,
        optimizer=None if inference else work.optimizer,
        peft=work.peft,
        lora_rank=work.lora_rank if work.peft != "none" else None,
        gradient_checkpointing=work.gradient_checkpointing,
        dataset_samples=work.dataset_samples,
        epochs=work.epochs if work.dataset_samples is not None else None,
        latency_target_ms=work.latency_target_ms,
        allow_tf32_matmul=work.allow_tf32_matmul,
    )


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


# ---------------------------------------------------------------- response rows


def _gpu_out(g: GpuSpec) -> s.GpuOut:
    return s.GpuOut(
        slug=g.slug,
        name=g.name,
        vendor=g.vendor,
        architecture=g.architecture,
        segment=g.segment,
        memory_gb=g.memory_gb,
        memory_bandwidth_gbs=g.memory_bandwidth_gbs,
        tdp_w=g.tdp_w,
        compute_capability=g.compute_capability,
        interconnect=g.interconnect,
        purchase_usd=g.purchase_usd,
        hourly_usd=g.hourly_usd,
    )


def _memory_out(mem: object, available: float | None) -> s.MemoryOut:
    from app.domain.workload import MemoryBreakdown

    assert isinstance(mem, MemoryBreakdown)
    return s.MemoryOut(
        required_gb=round(mem.total, 3),
        available_gb=available,
        headroom_gb=None if available is None else round(available - mem.total, 3),
        num_gpus=mem.num_gpus,
        breakdown={k: round(v, 3) for k, v in mem.parts().items()},
        notes=list(mem.notes),
    )


def _provenance(c: rank.Candidate) -> dict[str, str]:
    g = c.gpu
    src = c.perf.efficiency_source
    tput = {
        "measured": "modelled, with efficiencies measured on this GPU model",
        "family": "modelled, with efficiencies measured on the same architecture family",
    }.get(src, "modelled from datasheet figures and published efficiency priors")
    if g.street_price is not None:
        buy = f"published street price ({g.street_price.as_of})"
    elif g.launch_price_usd is not None:
        buy = "published launch price"
    else:
        buy = "unknown"
    rent = (
        f"published on-demand price, {g.cloud_price.provider or 'cloud'} ({g.cloud_price.as_of})"
        if g.cloud_price is not None
        else "unknown"
    )
    return {
        "specs": "published (catalog)",
        "peak_tflops": "derived from fp32 × the architecture's tensor ratio"
        if c.derived_peak
        else "published",
        "memory": "modelled",
        "throughput": tput,
        "purchase_price": buy,
        "hourly_price": rent,
        "energy": "modelled from TDP" if g.tdp_w is not None else "unknown",
    }


def _row(
    c: rank.Candidate,
    position: int,
    leader: rank.Candidate,
    objective: str,
    requested: WorkloadSpec,
    baseline_tput: float | None,
) -> s.Recommendation:
    p, cost = c.perf, c.cost
    lo, hi, basis = rank.uncertainty(c)
    return s.Recommendation(
        rank=position,
        gpu=_gpu_out(c.gpu),
        num_gpus=c.n,
        fits=True,
        precision=c.work.precision,
        framework_status=c.framework_status,
        memory=_memory_out(c.memory, c.available_gb),
        throughput=s.ThroughputOut(
            value=p.throughput,
            unit=p.unit,
            per_gpu=p.throughput / c.n,
            compute_precision=p.compute_precision,
        ),
        latency_ms=p.latency_ms,
        time_to_first_token_ms=p.ttft_ms,
        ms_per_output_token=p.ms_per_token,
        meets_latency_target=c.meets_latency,
        time_to_finish_h=cost.time_to_finish_h,
        bottleneck=p.bottleneck,
        timing=s.TimingOut(
            step_time_s=p.step_time_s,
            compute_s=p.compute_s,
            memory_s=p.memory_s,
            overhead_s=p.overhead_s,
            host_transfer_s=p.host_s,
            interconnect_s=p.comm_s,
            scaling_efficiency=p.scaling_efficiency,
        ),
        cost=s.CostOut(
            purchase_usd=cost.purchase_usd,
            purchase_as_of=cost.purchase_as_of,
            hourly_usd=cost.hourly_usd,
            hourly_as_of=cost.hourly_as_of,
            hourly_provider=cost.hourly_provider,
            power_w=cost.power_w,
            energy_usd_per_hour=cost.energy_usd_per_hour,
            rent_to_finish_usd=cost.rent_to_finish_usd,
            energy_to_finish_usd=cost.energy_to_finish_usd,
            buy_to_finish_usd=cost.buy_to_finish_usd,
            job_cost_usd=costs.job_cost(cost, c.acquisition),
            break_even_hours=cost.break_even_hours,
            samples_per_usd_rent=cost.samples_per_usd_rent,
            samples_per_usd_buy=cost.samples_per_usd_buy,
        ),
        score=c.score,
        uncertainty=s.UncertaintyOut(
            low=p.throughput * lo,
            high=p.throughput * hi,
            factor_low=lo,
            factor_high=hi,
            basis=basis,
        ),
        provenance=_provenance(c),
        explanation=rank.explain(c, position, leader, objective),
        tips=rank.tips(c, requested),
        warnings=list(c.warnings),
        speedup_vs_baseline=(p.throughput / baseline_tput) if baseline_tput else None,
    )


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
        _row(c, i, ordered[0], request.objective, work, base_tput)
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
    return s.RecommendationResponse(
        workload=_resolved_out(work),
        memory=_memory_out(top_mem, None),
        objective=request.objective,
        acquisition=cons.acquisition,
        framework=cons.framework,
        count=len(ordered),
        recommendations=rows,
        excluded=sorted(excluded, key=lambda e: (e.code, e.slug)),
        baseline=base_out,
        warnings=warnings,
    )


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
            workload=_resolved_out(work),
            gpu=_gpu_out(gpu),
            result=None,
            excluded=excl,
            warnings=warnings,
        )
    rank.rank([res], "fastest")
    row = _row(res, 1, res, "fastest", work, None)
    return s.EstimateResponse(
        workload=_resolved_out(work),
        gpu=_gpu_out(gpu),
        result=row,
        warnings=warnings + res.warnings,
    )

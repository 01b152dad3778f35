"""Response rows: a ranked candidate as the API's Recommendation, with explanation,
provenance and tips."""

from __future__ import annotations

import dataclasses

from app.domain import cost as costs
from app.domain import rank
from app.domain.evaluate import SAVER_LABELS
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec
from app.recommend import schemas as s

# ---------------------------------------------------------------- response rows


def gpu_out(g: GpuSpec) -> s.GpuOut:
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


def memory_out(mem: object, available: float | None) -> s.MemoryOut:
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
    on = c.perf.measured_on
    tput = {
        "measured": f"modelled, with efficiencies measured on {on} machine"
        + ("s" if on != 1 else "")
        + " of this GPU model",
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


def build_row(
    c: rank.Candidate,
    position: int,
    leader: rank.Candidate,
    objective: str,
    requested: WorkloadSpec,
    baseline_tput: float | None,
    alternatives: list[rank.Candidate] | None = None,
) -> s.Recommendation:
    alternatives = alternatives or []
    p, cost = c.perf, c.cost
    lo, hi, basis = rank.uncertainty(c)
    return s.Recommendation(
        rank=position,
        gpu=gpu_out(c.gpu),
        num_gpus=c.n,
        memory_savers=[SAVER_LABELS.get(x, x) for x in c.savers],
        micro_batch=c.micro_batch,
        accumulation_steps=c.accumulation_steps,
        fits=True,
        precision=c.work.precision,
        runtime=p.runtime,
        backend=p.backend or None,
        framework_status=c.framework_status,
        memory=memory_out(c.memory, c.available_gb),
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
        # CostOut is CostEstimate's fields plus the cost of the chosen way to acquire.
        cost=s.CostOut(
            **dataclasses.asdict(cost) | {"job_cost_usd": costs.job_cost(cost, c.acquisition)}
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
        alternatives=[alternative_out(a) for a in alternatives],
    )


def alternative_out(c: rank.Candidate) -> s.AlternativeOut:
    return s.AlternativeOut(
        num_gpus=c.n,
        memory_savers=[SAVER_LABELS.get(x, x) for x in c.savers],
        micro_batch=c.micro_batch,
        accumulation_steps=c.accumulation_steps,
        required_gb=round(c.memory.total, 3),
        throughput=c.perf.throughput,
        unit=c.perf.unit,
        scaling_efficiency=c.perf.scaling_efficiency,
        time_to_finish_h=c.cost.time_to_finish_h,
        purchase_usd=c.cost.purchase_usd,
        hourly_usd=c.cost.hourly_usd,
        job_cost_usd=costs.job_cost(c.cost, c.acquisition),
    )

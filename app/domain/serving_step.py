"""Task 'serving' as the engine's plan and evaluate steps.

``evaluate.plan`` and ``evaluate.admit`` hand a serving job here, so serving runs the one
pipeline every task runs (plan → evaluate → price → rank): the same filters (vendors,
segments) and framework gate, its configurations priced from the request's offers by the
same pricing (costs.price_replicas: one replica of N GPUs is priced as inference's N GPUs),
judged by the same budget (evaluate.budget), and ranked by the same ``rank.rank``.

What is serving's own: the runtime that serves each GPU, and the evaluation itself — the
continuous-batching planner (app/domain/serving.py) searching GPUs per replica, replicas and
weight/KV formats for the cheapest shape that carries the load within the targets. A card
whose best shape misses the targets is excluded ("misses_targets") with that shape attached,
which an answer with no row shows as the closest.

Pure: no I/O; the caller resolves the workload (with its efficiency table).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from app.domain import compat, efficiency, perf
from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import serving as sv
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.domain.workload import MemoryBreakdown, ModelSpec, ServingSpec, WorkloadSpec
from app.vocab import FOUR_BIT_PRECISIONS, SINGLE_DEVICE_SEGMENTS

# Where each runtime runs.
RUNTIME_BACKENDS: dict[str, tuple[str, ...]] = {
    # Intel GPUs: source vllm-xpu (data/efficiency.yaml); Gaudi: vllm-gaudi (frameworks.yaml)
    "vllm": ("cuda", "rocm", "xpu", "hpu"),
    "sglang": ("cuda", "rocm"),
    "tensorrt-llm": ("cuda",),
    "llama.cpp": ("cuda", "rocm", "mps", "cpu", "xpu"),
    "mlx": ("mps",),
    "transformers": ("cuda", "rocm", "mps", "cpu", "xpu"),
}

# The serving runtimes are builds for the GPU's PyTorch backend (vLLM, SGLang, TensorRT-LLM,
# Transformers) or build for the same backends (llama.cpp, MLX): the backend is PyTorch's.
_BACKEND_FRAMEWORK = "pytorch"


@dataclass(frozen=True, slots=True)
class Ask:
    """What a serving request pins beyond its workload: the weight precision (its precision,
    or the one its named weight format runs at; None: the planner picks), whether the planner
    may pick 4-bit weights, and the GPUs per replica an estimate fixes."""

    precision: str | None = None
    allow_4bit: bool = False
    group: int | None = None


@dataclass(frozen=True, slots=True)
class Price:
    """One serving configuration's prices: both bases apart, and the hour the request ranks
    by (``basis`` says which; None when unpriced on every basis the request accepts)."""

    pricing: costs.Pricing
    placed: costs.ReplicaChoice | None
    rent_usd_per_hour: float | None
    buy_usd_per_hour: float | None  # owning: purchase less resale over the usage, plus energy
    energy_usd_per_hour: float | None
    usd_per_hour: float | None
    basis: str | None  # rent | buy

    def narrowed(self, acquisition: str) -> Price:
        """The ranking hour once a budget leaves only one way to acquire."""
        if acquisition == "rent":
            hour = self.rent_usd_per_hour
        elif acquisition == "buy":
            hour = self.buy_usd_per_hour
        else:
            return self
        return dataclasses.replace(
            self, usd_per_hour=hour, basis=acquisition if hour is not None else None
        )


@dataclass(frozen=True, slots=True)
class Served:
    """What the serving evaluation found on one card: the shape it is ranked (or, missing
    the targets, shown) with, its runtime and prices, and the cheapest shape at each other
    tensor-parallel size (the row's alternatives)."""

    result: sv.ServingResult
    runtime: sv.RuntimeProfile
    price: Price
    meets: bool
    misses: tuple[str, ...]
    others: tuple[tuple[sv.ServingResult, Price], ...]
    warnings: tuple[str, ...]

    @property
    def speed(self) -> float:
        """What 'fastest' ranks a serving shape by, and the speed 'balanced' mixes with the
        value (larger is better): the tokens per second each request sees, 1 ÷ the
        inter-token latency at the load (every shape ranked carries the same load within the
        targets); balanced at weight w orders as ITL^w × ($/h)^(1−w). Between equal scores
        the first token decides (rank.columns)."""
        itl = self.result.itl_ms
        return 1e3 / itl if itl else 0.0

    @property
    def hourly(self) -> float | None:
        """An hour of the load (a service has no job): what 'cheapest' ranks by; its inverse
        is the value, hours of the load per dollar."""
        return self.price.usd_per_hour


def load_of(spec: ServingSpec) -> sv.ServingLoad:
    extra = (spec.prompt_tokens_spread or 0) + (spec.output_tokens_spread or 0)
    return sv.ServingLoad(
        prompt_tokens=spec.prompt_tokens,
        output_tokens=spec.output_tokens,
        concurrent_requests=spec.concurrent_requests,
        requests_per_s=spec.requests_per_s,
        kv_extra_tokens=extra,
    )


def targets_of(spec: ServingSpec) -> sv.ServingTargets:
    return sv.ServingTargets(spec.ttft_ms_target, spec.itl_ms_target, spec.target_percentile)


def serving_weights(
    half: str, published: str, fp8_native: bool, allow_4bit: bool
) -> tuple[str, ...]:
    """The weight precisions the serving planner may choose from when the request pins none:
    the published weights (``half``, and fp8 where the model publishes fp8 and the card runs it
    natively), 4-bit formats only when allowed."""
    out: tuple[str, ...] = (half,)
    if published == "fp8" and fp8_native:
        out += ("fp8",)
    if allow_4bit:
        out += FOUR_BIT_PRECISIONS
    return out


def runtime_profile(work: WorkloadSpec, gpu: GpuSpec, backend: str, name: str) -> sv.RuntimeProfile:
    """The serving runtime from the one efficiency table (data/efficiency.yaml), with the
    decode and prefill rows it has on this GPU (the ones LLM inference reads)."""
    table = work.efficiency
    if table is None:
        raise ValueError("a serving job needs its efficiency table (resolve_workload sets it)")
    decode = table.profile(gpu, backend, name, work.precision, "decode")
    prefill = table.profile(gpu, backend, name, work.precision, "prefill")
    return sv.runtime_profile(table, name, decode, prefill)


def efficiencies_for(
    gpu: GpuSpec, calibration: Calibration | None
) -> tuple[float, dict[str, float]]:
    """Achieved-vs-peak bandwidth, and whole-model matmul efficiency by datapath: the engine's
    GEMM priors (or a device report's measurements) × MODEL_UTILISATION (perf.llm_efficiency,
    as LLM inference reads them)."""
    eff = perf.efficiencies(gpu, calibration)
    return eff.memory, perf.llm_efficiency(eff)


def runtime_for(
    gpu: GpuSpec, backend: str, work: WorkloadSpec, rules: compat.Rules
) -> tuple[str | None, str | None]:
    """(the runtime that serves this GPU, a caveat); (None, why) when none does. The request's
    runtime, else the backend's default; the `runtime:<name>` rules (data/frameworks.yaml) say
    where each runs: a default the GPU's architecture lacks (vLLM below compute capability 7.0
    or on a Radeon outside its gfx list) falls back to llama.cpp, which builds for every
    backend; an experimental one is kept with the caveat."""
    runtime = work.runtime if work.runtime_given else sv.DEFAULT_RUNTIME.get(backend, "llama.cpp")
    if backend not in RUNTIME_BACKENDS[runtime]:
        return None, f"{runtime} does not run on {backend}"
    st = compat.feature_status(gpu, f"runtime:{runtime}", rules, backend)
    if st is None or st.status == "supported":
        return runtime, None
    why = f"{runtime} on {gpu.name} ({backend}) is {st.status}" + (
        f": {st.note}" if st.note else ""
    )
    if st.status == "experimental":
        return runtime, why
    if gpu.compute_capability is None:
        return runtime, None  # an unlisted architecture (B100's) is no evidence it lacks one
    if work.runtime_given or runtime == "llama.cpp":
        return None, why
    fallback = "llama.cpp"
    st = compat.feature_status(gpu, f"runtime:{fallback}", rules, backend)
    if backend not in RUNTIME_BACKENDS[fallback] or (st is not None and st.status != "supported"):
        return None, why
    return fallback, f"{why}; served with {fallback} instead"


@dataclass(frozen=True, slots=True)
class _Software:
    backend: str
    runtime: str
    caveat: str | None


def _software(gpu: GpuSpec, ctx: ev.Context) -> _Software | ev.Exclusion:
    """The card's software for the job: the framework the request asks (the gate every task
    passes), the backend the serving runtimes build for, and the runtime that serves it."""
    key = ("serving software", gpu.slug)
    hit: _Software | ev.Exclusion | None = ctx.memo.get(key)
    if hit is not None:
        return hit
    out: _Software | ev.Exclusion
    asked = compat.framework_support(gpu, ctx.framework, ctx.rules)
    support = compat.framework_support(gpu, _BACKEND_FRAMEWORK, ctx.rules)
    if not asked.ok:
        out = ev.Exclusion("framework_unsupported", asked.reason or f"no {ctx.framework} support")
    elif not support.ok or support.backend is None:
        out = ev.Exclusion("framework_unsupported", support.reason or "no PyTorch support")
    else:
        runtime, caveat = runtime_for(gpu, support.backend, ctx.work, ctx.rules)
        if runtime is None:
            out = ev.Exclusion("runtime_unsupported", caveat or "no serving runtime")
        else:
            out = _Software(support.backend, runtime, caveat)
    ctx.memo[key] = out
    return out


def plan(gpu: GpuSpec, ctx: ev.Context) -> list[ev.Configuration] | ev.Exclusion:
    """The card's one serving configuration (its runtime on the card; the planner searches
    its shapes when it is evaluated), or why the card cannot serve: the request's filters and
    software gate, as every task's ``evaluate.plan`` applies them."""
    if ctx.apply_filters:
        excl = ev.filtered_out(gpu, ctx.limits)
        if excl is not None:
            return excl
    sw = _software(gpu, ctx)
    if isinstance(sw, ev.Exclusion):
        return sw
    return [ev.Configuration(gpu, ctx.limits.exact_gpus or 1, runtime=sw.runtime)]


def price(gpu: GpuSpec, group: int, replicas: int, ctx: ev.Context) -> Price:
    """``replicas`` × ``group`` GPUs priced from the request's offers (every GPU unpriced when
    none are loaded), as the request accepts them (providers, tiers, spot; the usage a purchase
    is spread over), and the hour it ranks by under the request's acquisition."""
    key = ("serving price", gpu.slug, group, replicas)
    hit: Price | None = ctx.memo.get(key)
    if hit is not None:
        return hit
    offers = (ctx.offers or {}).get(gpu.slug, _NO_OFFERS)
    pricing, placed = costs.price_replicas(
        offers, group, replicas, ctx.rental, ctx.usage, ctx.purchase_basis
    )
    n = group * replicas
    energy = (
        gpu.tdp_w * n / 1000.0 * ctx.usage.electricity_usd_per_kwh
        if gpu.tdp_w is not None
        else None
    )
    rent = pricing.rent.usd_per_hour if pricing.rent is not None else None
    owned = pricing.purchase_usd
    buy = costs.owned_usd_per_hour(owned, energy, ctx.usage) if owned is not None else None
    acquisition = ctx.limits.acquisition
    options = []
    if acquisition in ("rent", "either") and rent is not None:
        options.append((rent, "rent"))
    if acquisition in ("buy", "either") and buy is not None:
        options.append((buy, "buy"))
    hourly, basis = min(options) if options else (None, None)
    out = Price(pricing, placed, rent, buy, energy, hourly, basis)
    ctx.memo[key] = out
    return out


_NO_OFFERS = costs.GpuOffers()


def cost_of(gpu: GpuSpec, result: sv.ServingResult, priced: Price) -> costs.CostEstimate:
    """The configuration's CostEstimate from its offers (per hour: a service has no job)."""
    return costs.estimate_cost(
        gpu,
        result.total_gpus,
        result.output_tokens_per_s or 0.0,
        None,
        priced.pricing.usage.electricity_usd_per_kwh,
        pricing=priced.pricing,
    )


def _options(
    gpu: GpuSpec, ctx: ev.Context, runtime: sv.RuntimeProfile, backend: str
) -> sv.PlanOptions:
    work, ask, rules = ctx.work, ctx.serving, ctx.rules
    half = "bf16" if compat.precision_supported(gpu, "bf16", rules, backend) else "fp16"
    pinned = ask.precision
    if pinned is not None:
        weights: tuple[str, ...] = (
            half if pinned in ("bf16", "fp16") and pinned != half else pinned,
        )
    else:
        weights = serving_weights(
            half,
            work.precision,
            compat.precision_supported(gpu, "fp8", rules, backend),
            ask.allow_4bit,
        )
    assert work.serving is not None
    kv_asked = work.serving.kv_cache_precision
    kvs: tuple[str, ...] = (kv_asked,) if kv_asked is not None else (half, "fp8")
    if kv_asked in ("bf16", "fp16") and kv_asked != half:
        kvs = (half,)
    mem_eff, comp = efficiencies_for(gpu, ctx.calibration)
    single = gpu.segment in SINGLE_DEVICE_SEGMENTS or backend == "mps"
    # weight formats the runtime's kernels lack here (`<runtime>-weights:<precision>` rules)
    barred = []
    for wp in weights:
        st = compat.feature_status(gpu, f"{runtime.name}-weights:{wp}", rules, backend)
        if st is not None and st.status == "unsupported":
            barred.append((wp, f"{runtime.name} on {backend}: {st.note or 'unsupported'}"))

    def hourly(group: int, replicas: int) -> float | None:
        return price(gpu, group, replicas, ctx).usd_per_hour

    return sv.PlanOptions(
        runtime=runtime,
        weight_precisions=weights,
        kv_precisions=kvs,
        max_gpus=ctx.limits.max_gpus,
        usable_gb=efficiency.usable_gb(gpu),
        memory_efficiency=mem_eff,
        compute_efficiency=comp,
        single_device=single,
        tp_sizes=(ask.group,) if ask.group is not None else None,
        exact_gpus=ctx.limits.exact_gpus if ctx.apply_filters else None,
        price=hourly,
        barred_weights=tuple(barred),
    )


def evaluate(config: ev.Configuration, ctx: ev.Context) -> ev.ConfigResult:
    """The serving planner as the evaluate step: the cheapest shape of the card that carries
    the load within the targets, priced, judged by the request's budget; the closest miss,
    excluded as "misses_targets", when no shape meets the targets."""
    gpu, work = config.gpu, ctx.work
    assert work.serving is not None
    sw = _software(gpu, ctx)
    if isinstance(sw, ev.Exclusion):
        return ev.ConfigResult(config, sw)
    profile = runtime_profile(work, gpu, sw.backend, sw.runtime)
    targets = targets_of(work.serving)
    found = sv.plan(
        gpu, work.model, load_of(work.serving), targets, _options(gpu, ctx, profile, sw.backend)
    )
    res = found.best or found.closest
    if res is None:
        reason = found.reason or "cannot serve this model"
        code = (
            "does_not_fit"
            if found.reason and "fp" not in found.reason[:4]
            else "precision_unsupported"
        )
        return ev.ConfigResult(config, ev.Exclusion(code, reason), backend=sw.backend)
    c = res.config
    priced = price(gpu, c.gpus_per_replica, c.replicas, ctx)
    warnings = [f"not tried: {x}" for x in found.skipped] if ctx.serving.precision else []
    if sw.caveat is not None:
        warnings.append(sw.caveat)
    others = tuple(
        (o, price(gpu, o.config.gpus_per_replica, o.config.replicas, ctx)) for o in found.others
    )
    served = Served(
        res, profile, priced, found.best is not None, found.misses, others, tuple(warnings)
    )
    shaped = dataclasses.replace(config, num_gpus=res.total_gpus, runtime=sw.runtime)
    cost = cost_of(gpu, res, priced)
    if found.best is None:
        what = "; ".join(found.misses) or "cannot carry the load"
        shape = f"{c.replicas}×{c.gpus_per_replica}, {c.weight_precision}"
        miss = ev.Exclusion(
            "misses_targets", f"best within {ctx.limits.max_gpus} GPUs ({shape}): {what}"
        )
        return ev.ConfigResult(shaped, miss, backend=sw.backend, cost=cost, serving=served)
    # budgets and cost objectives on the configuration's own offers, as for every task: rent =
    # its instances per hour, buy = its cards
    acq, excl = ev.budget(cost, ctx.limits, priced.pricing.rent_reason, priced.pricing.buy_reason)
    if ctx.apply_filters and excl is not None:
        return ev.ConfigResult(shaped, excl, backend=sw.backend)
    if acq is not None and acq != ctx.limits.acquisition:
        served = dataclasses.replace(served, price=priced.narrowed(acq))
    return ev.ConfigResult(
        shaped,
        None,
        work=work,
        backend=sw.backend,
        memory=_memory(res),
        available_gb=efficiency.usable_gb(gpu),
        perf=_perf(res, profile, sw.backend),
        cost=cost,
        acquisition=acq or ctx.limits.acquisition,
        warnings=tuple(warnings),
        pricing=priced.pricing,
        serving=served,
    )


def _memory(r: sv.ServingResult) -> MemoryBreakdown:
    """Per GPU of one replica: the weights, the runtime's KV pool, workspace and framework."""
    return MemoryBreakdown(
        weights=r.weights_gb_per_gpu,
        kv_cache=r.kv_pool_gb_per_gpu,
        workspace=r.activations_gb_per_gpu,
        framework=r.framework_gb_per_gpu,
        num_gpus=r.config.gpus_per_replica,
    )


def _perf(r: sv.ServingResult, rt: sv.RuntimeProfile, backend: str) -> perf.PerfEstimate:
    """The shape at the load as the ranking reads an estimate: output tokens per second over
    every GPU of every replica, one step an inter-token latency."""
    itl = r.itl_ms or math.inf
    return perf.PerfEstimate(
        throughput=r.output_tokens_per_s or 0.0,
        unit="output tokens/s",
        step_time_s=itl / 1e3,
        bottleneck=r.bottleneck,
        compute_s=0.0,
        memory_s=0.0,
        overhead_s=rt.step_overhead_s,
        host_s=0.0,
        comm_s=0.0,
        num_gpus=r.total_gpus,
        scaling_efficiency=1.0,
        compute_precision=r.compute_precision,
        efficiency_source="prior",
        ttft_ms=r.ttft_ms,
        ms_per_token=r.itl_ms,
        runtime=rt.name,
        backend=backend,
    )


def closest_first(missed: list[ev.ConfigResult], spec: ServingSpec) -> list[ev.ConfigResult]:
    """The cards' near misses ("misses_targets" results), the nearest first (the worst ratio
    to a target), fewer GPUs first among equals."""
    targets = targets_of(spec)

    def key(r: ev.ConfigResult) -> tuple[float, int]:
        assert r.serving is not None
        return sv._miss_size(r.serving.result, targets), r.serving.result.total_gpus

    return sorted((r for r in missed if r.serving is not None), key=key)


def with_curve(gpu: GpuSpec, served: Served, ctx: ev.Context) -> Served:
    """The same shape evaluated again with its throughput-latency curve (the rows shown)."""
    assert ctx.work.serving is not None
    mem_eff, comp = efficiencies_for(gpu, ctx.calibration)
    res = sv.evaluate(
        gpu,
        ctx.work.model,
        served.result.config,
        load_of(ctx.work.serving),
        runtime=served.runtime,
        usable_gb=efficiency.usable_gb(gpu),
        memory_efficiency=mem_eff,
        compute_efficiency=comp,
        with_curve=True,
    )
    return dataclasses.replace(served, result=res)


def one_request_meets(gpu: GpuSpec, served: Served, spec: ServingSpec, model: ModelSpec) -> bool:
    """Would more replicas help: does one request per replica meet the targets?"""
    c = served.result.config
    light = dataclasses.replace(
        load_of(spec), concurrent_requests=float(c.replicas), requests_per_s=None
    )
    mem_eff, comp = efficiencies_for(gpu, None)
    res = sv.evaluate(
        gpu,
        model,
        c,
        light,
        runtime=served.runtime,
        usable_gb=efficiency.usable_gb(gpu),
        memory_efficiency=mem_eff,
        compute_efficiency=comp,
    )
    return sv.meets(res, targets_of(spec))[0]

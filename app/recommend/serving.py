"""Task 'serving': plan every GPU with the pure serving model and shape the response.

The engine arithmetic lives in app/domain/serving.py; this module picks what to try on each
GPU (runtime, precisions, GPU counts), applies the request's filters and budgets, orders the
rows by the objective and says plainly when no configuration meets the targets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.domain import bands, compat, efficiency, perf, rank
from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import serving as sv
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.domain.units import vram
from app.domain.workload import ModelSpec, ServingSpec, WorkloadSpec
from app.recommend import quality
from app.recommend import schemas as s
from app.recommend.rows import (
    chosen_offer_out,
    gpu_out,
    offer_lines,
    priced_parts,
    spot_warning,
)
from app.recommend.workloads import resolved_out
from app.shipped.rules import load_efficiency
from app.vocab import SINGLE_DEVICE_SEGMENTS

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
CURVES_FOR = 5  # rows that get a throughput-latency curve


@dataclass(frozen=True)
class _Priced:
    """One serving configuration's prices: both bases apart, and the hour the request ranks
    by (``basis`` says which; None when unpriced on every basis the request accepts)."""

    pricing: costs.Pricing
    placed: costs.ReplicaChoice | None
    rent_usd_per_hour: float | None
    buy_usd_per_hour: float | None  # owning: purchase less resale over the usage, plus energy
    energy_usd_per_hour: float | None
    usd_per_hour: float | None
    basis: str | None  # rent | buy


@dataclass(frozen=True)
class _Pricer:
    """Prices serving configurations of one GPU from its offers, as the request constrains
    them (providers, tiers, spot; the usage a purchase is spread over; rent, buy or either)."""

    gpu: GpuSpec
    offers: costs.GpuOffers
    policy: costs.RentalPolicy
    usage: costs.Usage
    acquisition: str
    purchase_basis: str = "auto"
    memo: dict[tuple[int, int], _Priced] = field(default_factory=dict, compare=False)

    def energy(self, n: int) -> float | None:
        if self.gpu.tdp_w is None:
            return None
        return self.gpu.tdp_w * n / 1000.0 * self.usage.electricity_usd_per_kwh

    def __call__(self, tp: int, replicas: int) -> _Priced:
        hit = self.memo.get((tp, replicas))
        if hit is not None:
            return hit
        pricing, placed = costs.price_replicas(
            self.offers, tp, replicas, self.policy, self.usage, self.purchase_basis
        )
        n = tp * replicas
        energy = self.energy(n)
        rent = pricing.rent.usd_per_hour if pricing.rent is not None else None
        owned = pricing.purchase_usd
        buy = costs.owned_usd_per_hour(owned, energy, self.usage) if owned is not None else None
        options = []
        if self.acquisition in ("rent", "either") and rent is not None:
            options.append((rent, "rent"))
        if self.acquisition in ("buy", "either") and buy is not None:
            options.append((buy, "buy"))
        hourly, basis = min(options) if options else (None, None)
        out = _Priced(pricing, placed, rent, buy, energy, hourly, basis)
        self.memo[tp, replicas] = out
        return out

    def hourly(self, tp: int, replicas: int) -> float | None:
        return self(tp, replicas).usd_per_hour


@dataclass
class _Row:
    gpu: GpuSpec
    result: sv.ServingResult
    runtime: sv.RuntimeProfile
    priced: _Priced
    meets: bool
    misses: list[str]
    metric: float
    warnings: list[str]
    others: list[tuple[sv.ServingResult, _Priced]] = field(default_factory=list)
    acquisition: str = "either"

    @property
    def usd_per_hour(self) -> float | None:
        return self.priced.usd_per_hour


def _usable_gb(gpu: GpuSpec) -> float:
    """The one usable-memory rule (efficiency.usable_gb: vendors' GB are GiB, unified memory
    wired at ~3/4); the serving runtime's own share (gpu_memory_utilization) is applied by the
    serving model's memory plan, not here."""
    return efficiency.usable_gb(gpu)


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


def _load_words(spec: ServingSpec) -> str:
    who = (
        f"{spec.concurrent_requests:,.0f} concurrent requests"
        if spec.concurrent_requests is not None
        else f"{spec.requests_per_s:,.2f} requests/s"
    )
    return f"{who}, {spec.prompt_tokens:,} prompt + {spec.output_tokens:,} output tokens"


def _target_words(spec: ServingSpec) -> str:
    parts = []
    if spec.ttft_ms_target is not None:
        default = " (default)" if spec.ttft_target_default else ""
        parts.append(f"TTFT ≤ {spec.ttft_ms_target:,.0f} ms{default}")
    if spec.itl_ms_target is not None:
        default = " (default)" if spec.itl_target_default else ""
        parts.append(f"ITL ≤ {spec.itl_ms_target:,.0f} ms{default}")
    if not parts:
        return "no latency targets"
    words = " and ".join(parts) + f" at {spec.target_percentile}"
    if spec.ttft_target_default or spec.itl_target_default:
        # MLPerf's limits hold at p99; say so rather than imply this check is as strict
        words += (
            " (defaults from MLPerf Inference's Llama 2 70B server scenario, which holds them "
            "at p99; set ttft_ms_target / itl_ms_target for your own)"
        )
    return words


def asked_precision(w: s.WorkloadIn) -> str | None:
    """The weight precision the request pins: its precision, else the one its named weight
    format runs at (quality.SERVING_FORMATS)."""
    if w.precision is not None:
        return w.precision
    return quality.SERVING_FORMATS.get(w.quantization or "none")


def _options(
    gpu: GpuSpec,
    work: WorkloadSpec,
    explicit_precision: str | None,
    runtime: sv.RuntimeProfile,
    backend: str,
    rules: compat.Rules,
    calibration: Calibration | None,
    max_gpus: int,
    tp: int | None,
    pricer: _Pricer | None = None,
    *,
    exact_gpus: int | None = None,
    allow_4bit: bool = False,
) -> sv.PlanOptions:
    half = "bf16" if compat.precision_supported(gpu, "bf16", rules, backend) else "fp16"
    if explicit_precision is not None:
        weights: tuple[str, ...] = (
            half
            if explicit_precision in ("bf16", "fp16") and explicit_precision != half
            else explicit_precision,
        )
    else:
        weights = quality.serving_weights(
            half, work.precision, compat.precision_supported(gpu, "fp8", rules, backend), allow_4bit
        )
    assert work.serving is not None
    kv_asked = work.serving.kv_cache_precision
    kvs: tuple[str, ...] = (kv_asked,) if kv_asked is not None else (half, "fp8")
    if kv_asked in ("bf16", "fp16") and kv_asked != half:
        kvs = (half,)
    mem_eff, comp = efficiencies_for(gpu, calibration)
    single = gpu.segment in SINGLE_DEVICE_SEGMENTS or backend == "mps"
    # weight formats the runtime's kernels lack here (`<runtime>-weights:<precision>` rules)
    barred = []
    for wp in weights:
        st = compat.feature_status(gpu, f"{runtime.name}-weights:{wp}", rules, backend)
        if st is not None and st.status == "unsupported":
            barred.append((wp, f"{runtime.name} on {backend}: {st.note or 'unsupported'}"))
    return sv.PlanOptions(
        runtime=runtime,
        weight_precisions=weights,
        kv_precisions=kvs,
        max_gpus=max_gpus,
        usable_gb=_usable_gb(gpu),
        memory_efficiency=mem_eff,
        compute_efficiency=comp,
        single_device=single,
        tp_sizes=(tp,) if tp is not None else None,
        exact_gpus=exact_gpus,
        price=pricer.hourly if pricer is not None else None,
        barred_weights=tuple(barred),
    )


def runtime_profile(work: WorkloadSpec, gpu: GpuSpec, backend: str, name: str) -> sv.RuntimeProfile:
    """The serving runtime from the one efficiency table (data/efficiency.yaml), with the
    decode and prefill rows it has on this GPU (the ones LLM inference reads)."""
    table = work.efficiency if work.efficiency is not None else load_efficiency()
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


def _per_million(
    result: sv.ServingResult, usd_per_hour: float | None
) -> tuple[float | None, float | None]:
    """$ per million output and input tokens: the hour's cost split by GPU time share
    (prompts take ``prefill_share`` of it)."""
    if usd_per_hour is None or not result.output_tokens_per_s or not result.input_tokens_per_s:
        return None, None
    share = min(max(result.prefill_share, 0.0), 1.0)
    out = usd_per_hour * (1.0 - share) / (result.output_tokens_per_s * 3600.0) * 1e6
    inp = usd_per_hour * share / (result.input_tokens_per_s * 3600.0) * 1e6
    return out, inp


def _metric(row: _Row, objective: str, speed_weight: float = rank.DEFAULT_SPEED_WEIGHT) -> float:
    """Smaller is better. Balanced: ITL^w × ($/h)^(1−w), the ranking's speed weight w
    (½ orders as $/h × ITL)."""
    r = row.result
    itl = r.itl_ms or 1e9
    if objective == "fastest":
        return itl + (r.ttft_ms or 0.0) / max(1, r.config.replicas * 1000)
    # unpriced rows (ranked only under objectives that do not need a price) come after every
    # priced one, fastest first
    cost = row.usd_per_hour if row.usd_per_hour is not None else 1e12
    if objective == "balanced":
        if row.usd_per_hour is None:
            return 1e12 * (1.0 + itl)
        return itl**speed_weight * cost ** (1.0 - speed_weight)
    return cost


def _weight_format(precision: str, rt: sv.RuntimeProfile) -> str:
    bits = rt.bits(precision)
    if bits is not None and rt.int4_format:
        return f"GGUF {rt.int4_format.upper()} ({bits:g} bits per weight)"
    return sv.WEIGHT_FORMAT[precision]


def _serving_out(row: _Row, with_curve: bool) -> s.ServingOut:
    r = row.result
    c = r.config
    rt = row.runtime
    out_m, in_m = _per_million(r, row.usd_per_hour)
    return s.ServingOut(
        replicas=c.replicas,
        gpus_per_replica=c.gpus_per_replica,
        tensor_parallel=c.gpus_per_replica if rt.multi_gpu == "tensor" else 1,
        multi_gpu=rt.multi_gpu if c.gpus_per_replica > 1 else "none",
        runtime=c.runtime,
        runtime_version=rt.version,
        weight_precision=c.weight_precision,
        weight_format=_weight_format(c.weight_precision, rt),
        kv_cache_precision=c.kv_precision,
        max_concurrency=r.max_concurrency * c.replicas,
        ttft_ms=r.ttft_ms,
        ttft_p95_ms=r.ttft_p95_ms,
        itl_ms=r.itl_ms,
        itl_p95_ms=r.itl_p95_ms,
        output_tokens_per_s=r.output_tokens_per_s,
        input_tokens_per_s=r.input_tokens_per_s,
        requests_per_s=r.requests_per_s,
        max_output_tokens_per_s=r.max_output_tokens_per_s,
        usd_per_hour=row.usd_per_hour,
        price_basis=row.priced.basis,
        usd_per_million_output_tokens=out_m,
        usd_per_million_input_tokens=in_m,
        usd_per_million_output_tokens_blended=costs.usd_per_million_tokens(
            row.usd_per_hour, r.output_tokens_per_s
        ),
        meets_slo=row.meets,
        misses=row.misses,
        kv_cache_gb_per_request=r.kv_gb_per_request,
        curve=[
            s.CurvePointOut(
                concurrency=p.concurrency,
                itl_ms=p.itl_ms,
                ttft_ms=p.ttft_ms,
                output_tokens_per_s=p.output_tokens_per_s * c.replicas,
            )
            for p in r.curve
        ]
        if with_curve
        else [],
    )


def _explain(row: _Row, spec: ServingSpec) -> list[str]:
    r = row.result
    c = r.config
    rt = row.runtime
    split = (
        f" (tensor parallel {c.gpus_per_replica})"
        if rt.multi_gpu == "tensor"
        else " (whole layers per GPU, a token through them in turn: their memory adds up, "
        "not their speed)"
    )
    shape = (
        f"{c.replicas} replica{'s' if c.replicas > 1 else ''} × {c.gpus_per_replica} GPU"
        f"{'s' if c.gpus_per_replica > 1 else ''}" + (split if c.gpus_per_replica > 1 else "")
    )
    lines = [
        f"{shape}, {c.weight_precision} weights, {c.kv_precision} KV cache, {c.runtime} "
        f"{rt.version}.",
        f"At {_load_words(spec)}: first token in ~{r.ttft_ms:,.0f} ms, then one token every "
        f"~{r.itl_ms:,.1f} ms; {r.output_tokens_per_s:,.0f} output tokens/s "
        f"(up to {r.max_output_tokens_per_s:,.0f} at saturation)."
        if r.ttft_ms is not None and r.itl_ms is not None and r.output_tokens_per_s
        else f"Cannot carry {_load_words(spec)}.",
        f"The KV cache holds {r.max_concurrency * c.replicas:,} requests at once "
        f"({vram(r.kv_gb_per_request):.2f} GB each); each step is bound by {r.bottleneck}.",
    ]
    out_m, in_m = _per_million(r, row.usd_per_hour)
    if out_m is not None and in_m is not None:
        basis = (
            "renting the offer below"
            if row.priced.basis == "rent"
            else f"owning the cards over {row.priced.pricing.usage.hours:,.0f} h of use"
        )
        whole = costs.usd_per_million_tokens(row.usd_per_hour, r.output_tokens_per_s)
        lines.append(
            f"${whole or 0:,.2f} per million output tokens: the whole hour ÷ the output tokens "
            f"it produces at this load ({basis}). Split by GPU time between decode and "
            f"prompts: ${out_m:,.2f} per million output and ${in_m:,.2f} per million input "
            "tokens."
        )
    placed = row.priced.placed
    if placed is not None and placed.per_instance > 1:
        lines.append(
            f"Up to {placed.per_instance} replicas share one {placed.choice.offer.gpus}-GPU "
            "instance; a tensor-parallel group never spans instances."
        )
    return lines + offer_lines(row.priced.pricing, placed.note if placed is not None else None)


def _tips(row: _Row, spec: ServingSpec) -> list[str]:
    r = row.result
    c = r.config
    tips: list[str] = []
    if c.kv_precision != "fp8" and sv.supports_kv(row.gpu, "fp8") is None:
        tips.append(
            "An fp8 KV cache (--kv-cache-dtype fp8) halves the cache and doubles the "
            "requests one replica can hold."
        )
    if r.prefill_share > 0.5:
        tips.append(
            "Prompts take most of the GPU time: prefix caching of shared system "
            "prompts (on by default in vLLM V1 and SGLang) would cut TTFT and cost; it "
            "is not modelled here."
        )
    if (
        c.gpus_per_replica > 1
        and c.replicas == 1
        and r.max_concurrency > 4 * (spec.concurrent_requests or 0)
    ):
        # the planner tried the smaller groups: they missed the targets or cost more
        tips.append(
            f"The cache holds far more requests than the load: the {c.gpus_per_replica}-GPU "
            "group is there for the latency targets (or the instance's price), not for memory; "
            "the alternatives show the other group sizes and what they cost."
        )
    return tips


def _recommendation(
    row: _Row,
    position: int,
    spec: ServingSpec,
    with_curve: bool,
    framework_status: str,
    table: efficiency.EfficiencyTable | None = None,
) -> s.Recommendation:
    r = row.result
    c = r.config
    n = r.total_gpus
    gpu = row.gpu
    tput = r.output_tokens_per_s or 0.0
    running = min(float(r.max_concurrency), (spec.concurrent_requests or 0.0) / c.replicas)
    if spec.requests_per_s is not None and r.requests_per_s:
        running = min(
            float(r.max_concurrency), tput / c.replicas / max(1e-9, 1000.0 / (r.itl_ms or 1.0))
        )
    kv_used = running * r.kv_gb_per_request / c.gpus_per_replica
    mem = s.MemoryOut(
        required_gb=round(
            r.weights_gb_per_gpu + r.activations_gb_per_gpu + r.framework_gb_per_gpu + kv_used, 3
        ),
        available_gb=_usable_gb(gpu),
        headroom_gb=None,
        num_gpus=c.gpus_per_replica,
        breakdown={
            "weights": round(r.weights_gb_per_gpu, 3),
            "kv_cache": round(kv_used, 3),
            "workspace": round(r.activations_gb_per_gpu, 3),
            "framework": round(r.framework_gb_per_gpu, 3),
        },
        notes=[
            f"per GPU; the runtime reserves {vram(r.kv_pool_gb_per_gpu):.1f} GB for the KV cache"
        ],
    )
    mem.headroom_gb = round((mem.available_gb or 0) - mem.required_gb, 3)
    priced = row.priced
    cost = _cost(gpu, r, priced)
    rent_h = priced.rent_usd_per_hour
    extra, rent_out, buy_out = priced_parts(
        priced.pricing,
        cost,
        _per_million(r, rent_h),
        priced.placed.note if priced.placed is not None else None,
        blended=costs.usd_per_million_tokens(rent_h, r.output_tokens_per_s),
    )
    itl_s = (r.itl_ms or 0.0) / 1e3
    latency = (
        (r.ttft_ms or 0.0) + (spec.output_tokens - 1) * (r.itl_ms or 0.0)
        if r.ttft_ms is not None
        else None
    )
    lo, hi, basis = _band(row, table if table is not None else load_efficiency())
    bottleneck = (
        r.bottleneck
        if r.bottleneck in ("compute", "interconnect", "kernel launches", "host overhead")
        else "memory bandwidth"
    )
    return s.Recommendation(
        rank=position,
        gpu=gpu_out(gpu),
        num_gpus=n,
        fits=True,
        precision=c.weight_precision,
        runtime=row.runtime.name,
        framework_status=framework_status,
        memory=mem,
        throughput=s.ThroughputOut(
            value=tput,
            unit="output tokens/s",
            per_gpu=tput / n,
            compute_precision=r.compute_precision,
        ),
        latency_ms=latency,
        time_to_first_token_ms=r.ttft_ms,
        ms_per_output_token=r.itl_ms,
        meets_latency_target=row.meets,
        time_to_finish_h=None,
        bottleneck=bottleneck,
        timing=s.TimingOut(
            step_time_s=itl_s,
            compute_s=0.0,
            memory_s=0.0,
            overhead_s=row.runtime.step_overhead_s,
            host_transfer_s=0.0,
            interconnect_s=0.0,
            scaling_efficiency=1.0,
        ),
        cost=s.CostOut(
            **dataclasses.asdict(cost) | {"job_cost_usd": None, "rent": rent_out, "buy": buy_out}
        ),
        score=row.metric,
        uncertainty=s.UncertaintyOut(
            low=tput * lo,
            high=tput * hi,
            factor_low=lo,
            factor_high=hi,
            basis=basis,
        ),
        provenance={
            "specs": "published (catalog)",
            "throughput": "modelled: continuous batching on datasheet bandwidth and compute "
            "with published efficiency priors",
            "memory": "modelled",
            "hourly_price": _price_words(priced),
        },
        explanation=_explain(row, spec),
        tips=_tips(row, spec),
        warnings=list(row.warnings)
        + list(r.notes)
        + [w for w in (spot_warning(row.priced.pricing, False),) if w],
        serving=_serving_out(row, with_curve),
        alternatives=[_alternative(gpu, res, p) for res, p in row.others],
        **extra,
    )


def _band(row: _Row, table: efficiency.EfficiencyTable) -> tuple[float, float, str]:
    """The serving regime's calibrated band (benchmarks/accuracy.py: published TensorRT-LLM
    saturation and vLLM load points, each GPU and each model held out), widened where the row's
    runtime or architecture is not in that set. Its MoE and fp4 rows are in the calibration,
    so neither adds a stated allowance here."""
    x = bands.BandInputs(
        regime="serving",
        vendor=row.gpu.vendor,
        architecture=row.gpu.architecture,
        runtime=row.runtime.name,
        efficiency_source="prior",
    )
    return bands.band(x, table)


def _cost(gpu: GpuSpec, result: sv.ServingResult, priced: _Priced) -> costs.CostEstimate:
    """The configuration's CostEstimate from its offers (per hour: a service has no job)."""
    return costs.estimate_cost(
        gpu,
        result.total_gpus,
        result.output_tokens_per_s or 0.0,
        None,
        priced.pricing.usage.electricity_usd_per_kwh,
        pricing=priced.pricing,
    )


def _price_words(priced: _Priced) -> str:
    rent = priced.pricing.rent
    if priced.basis == "rent" and rent is not None:
        o = rent.offer
        return f"rented: {o.provider} {o.instance_type} ({o.tier}, {o.as_of}; {o.source})"
    buy = priced.pricing.buy
    if priced.basis == "buy" and buy is not None:
        return (
            f"bought: {buy.condition} price ({buy.as_of}) less resale over "
            f"{priced.pricing.usage.hours:,.0f} h of use, plus energy at TDP"
        )
    return "unknown"


def _alternative(gpu: GpuSpec, res: sv.ServingResult, priced: _Priced) -> s.AlternativeOut:
    """Another shape of the same GPU that meets the targets, with the instance it rents."""
    c = res.config
    rent = priced.pricing.rent
    per_gpu = res.weights_gb_per_gpu + res.activations_gb_per_gpu + res.framework_gb_per_gpu
    return s.AlternativeOut(
        num_gpus=res.total_gpus,
        replicas=c.replicas,
        gpus_per_replica=c.gpus_per_replica,
        precision=c.weight_precision,
        required_gb=round(per_gpu + res.kv_pool_gb_per_gpu, 3),
        throughput=res.output_tokens_per_s or 0.0,
        unit="output tokens/s",
        scaling_efficiency=1.0,
        purchase_usd=priced.pricing.purchase_usd,
        hourly_usd=priced.rent_usd_per_hour,
        offer=chosen_offer_out(rent, priced.placed.note if priced.placed else None)
        if rent is not None
        else None,
        price_known=priced.pricing.price_known,
    )


@dataclass
class _Outcome:
    rows: list[_Row]
    closest: list[_Row]
    excluded: list[s.Excluded]


@dataclass(frozen=True)
class Prices:
    """What prices a serving answer: every GPU's offers (None: none loaded, every GPU
    unpriced), the offers the user accepts and the usage a purchase is spread over."""

    offers: Mapping[str, costs.GpuOffers] | None = None
    policy: costs.RentalPolicy = field(default_factory=costs.RentalPolicy)
    usage: costs.Usage = field(default_factory=costs.Usage)
    purchase_basis: str = "auto"

    def pricer(self, gpu: GpuSpec, acquisition: str) -> _Pricer:
        mine = (self.offers or {}).get(gpu.slug, costs.GpuOffers())
        return _Pricer(gpu, mine, self.policy, self.usage, acquisition, self.purchase_basis)


def _narrowed(priced: _Priced, acquisition: str) -> _Priced:
    """The ranking hour once a budget leaves only one way to acquire."""
    if acquisition == "rent":
        return dataclasses.replace(
            priced,
            usd_per_hour=priced.rent_usd_per_hour,
            basis="rent" if priced.rent_usd_per_hour is not None else None,
        )
    if acquisition == "buy":
        return dataclasses.replace(
            priced,
            usd_per_hour=priced.buy_usd_per_hour,
            basis="buy" if priced.buy_usd_per_hour is not None else None,
        )
    return priced


def _limits(cons: s.ConstraintsIn, objective: str) -> ev.Limits:
    return ev.Limits(
        objective=objective,
        acquisition=cons.acquisition,
        max_purchase_usd=cons.max_purchase_usd,
        max_hourly_usd=cons.max_hourly_usd,
        electricity_usd_per_kwh=cons.electricity_usd_per_kwh,
    )


def _plan_all(
    gpus: list[GpuSpec],
    work: WorkloadSpec,
    request_precision: str | None,
    cons: s.ConstraintsIn,
    objective: str,
    rules: compat.Rules,
    calibration: Calibration | None,
    apply_filters: bool = True,
    tp: int | None = None,
    prices: Prices = Prices(),
    speed_weight: float = rank.DEFAULT_SPEED_WEIGHT,
    weight_format: str | None = None,
) -> _Outcome:
    assert work.serving is not None
    spec = work.serving
    load, targets = load_of(spec), targets_of(spec)
    rows: list[_Row] = []
    closest: list[_Row] = []
    excluded: list[s.Excluded] = []
    limits = _limits(cons, objective)

    def out(gpu: GpuSpec, code: str, reason: str) -> None:
        excluded.append(s.Excluded(slug=gpu.slug, name=gpu.name, code=code, reason=reason))

    for gpu in sorted(gpus, key=lambda g: g.slug):
        if apply_filters:
            if cons.vendors and gpu.vendor not in cons.vendors:
                out(gpu, "filtered_out", f"vendor {gpu.vendor} not in {', '.join(cons.vendors)}")
                continue
            if cons.segments and gpu.segment not in cons.segments:
                out(gpu, "filtered_out", f"segment {gpu.segment} not in {', '.join(cons.segments)}")
                continue
        support = compat.framework_support(gpu, "pytorch", rules)
        if not support.ok or support.backend is None:
            out(gpu, "framework_unsupported", support.reason or "no PyTorch support")
            continue
        backend = support.backend
        runtime, caveat = _runtime_for(gpu, backend, work, rules)
        if caveat is not None and runtime is None:
            out(gpu, "runtime_unsupported", caveat)
            continue
        assert runtime is not None
        profile = runtime_profile(work, gpu, backend, runtime)
        pricer = prices.pricer(gpu, cons.acquisition)
        opts = _options(
            gpu,
            work,
            request_precision,
            profile,
            backend,
            rules,
            calibration,
            cons.max_gpus,
            tp,
            pricer,
            exact_gpus=cons.num_gpus if apply_filters else None,
            allow_4bit=bool(cons.allow_4bit),
        )
        plan = sv.plan(gpu, work.model, load, targets, opts)
        res = plan.best or plan.closest
        if res is None:
            out(
                gpu,
                "does_not_fit"
                if plan.reason and "fp" not in plan.reason[:4]
                else "precision_unsupported",
                plan.reason or "cannot serve this model",
            )
            continue
        priced = pricer(res.config.gpus_per_replica, res.config.replicas)
        warnings = [f"not tried: {x}" for x in plan.skipped] if request_precision else []
        if caveat is not None:
            warnings.append(caveat)
        said = quality.cost_note(res.config.weight_precision, weight_format)
        if said is not None:
            warnings.append(said)
        row = _Row(
            gpu,
            res,
            profile,
            priced,
            plan.best is not None,
            list(plan.misses),
            0.0,
            warnings,
            [(o, pricer(o.config.gpus_per_replica, o.config.replicas)) for o in plan.others],
            cons.acquisition,
        )
        if plan.best is None:
            row.metric = _metric(row, objective, speed_weight)
            what = "; ".join(plan.misses) or "cannot carry the load"
            c = res.config
            shape = f"{c.replicas}×{c.gpus_per_replica}, {c.weight_precision}"
            out(
                gpu,
                "misses_targets",
                f"best within {cons.max_gpus} GPUs ({shape}): {what}",
            )
            closest.append(row)
            continue
        # budgets and cost objectives on the configuration's own offers (evaluate.budget, as
        # for training and inference): rent = its instances per hour, buy = its cards
        acq, excl = ev.budget(
            _cost(gpu, res, priced),
            limits,
            priced.pricing.rent_reason,
            priced.pricing.buy_reason,
        )
        if apply_filters and excl is not None:
            out(gpu, excl.code, excl.reason)
            continue
        if acq is not None and acq != cons.acquisition:
            row.priced = _narrowed(priced, acq)
            row.acquisition = acq
        row.metric = _metric(row, objective, speed_weight)
        rows.append(row)
    rows.sort(key=lambda r: (r.metric, r.gpu.slug))
    closest.sort(key=lambda r: (sv._miss_size(r.result, targets), r.result.total_gpus))
    return _Outcome(rows, closest, excluded)


def _runtime_for(
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


def _with_curve(
    row: _Row,
    work: WorkloadSpec,
    cons: s.ConstraintsIn,
    rules: compat.Rules,
    calibration: Calibration | None,
) -> _Row:
    assert work.serving is not None
    mem_eff, comp = efficiencies_for(row.gpu, calibration)
    res = sv.evaluate(
        row.gpu,
        work.model,
        row.result.config,
        load_of(work.serving),
        runtime=row.runtime,
        usable_gb=_usable_gb(row.gpu),
        memory_efficiency=mem_eff,
        compute_efficiency=comp,
        with_curve=True,
    )
    return dataclasses.replace(row, result=res)


def _one_request_meets(row: _Row, model: ModelSpec, spec: ServingSpec) -> bool:
    """Would more replicas help: does one request per replica meet the targets?"""
    c = row.result.config
    light = dataclasses.replace(
        load_of(spec), concurrent_requests=float(c.replicas), requests_per_s=None
    )
    mem_eff, comp = efficiencies_for(row.gpu, None)
    res = sv.evaluate(
        row.gpu,
        model,
        c,
        light,
        runtime=row.runtime,
        usable_gb=_usable_gb(row.gpu),
        memory_efficiency=mem_eff,
        compute_efficiency=comp,
    )
    return sv.meets(res, targets_of(spec))[0]


# A first token later than this is a queue, not a latency target worth suggesting.
QUEUE_WAIT_MS = 60_000.0


def _requests(n: int) -> str:
    return f"{n:,} request{'s' if n != 1 else ''}"


def _default_note(default: bool) -> str:
    return " (the default is MLPerf's; set your own)" if default else ""


def _relax(closest: list[_Row], model: ModelSpec, spec: ServingSpec, max_gpus: int) -> list[str]:
    done = [r for r in closest if r.result.ttft_ms is not None and r.result.itl_ms is not None]
    tips: list[str] = []
    p95 = spec.target_percentile == "p95"
    if done and spec.itl_ms_target is not None:
        best = min(done, key=lambda r: (r.result.itl_p95_ms if p95 else r.result.itl_ms) or 1e9)
        itl = (best.result.itl_p95_ms if p95 else best.result.itl_ms) or 0.0
        if itl > spec.itl_ms_target:
            tips.append(
                f"raise the ITL target{_default_note(spec.itl_target_default)} to about "
                f"{itl:,.0f} ms (the fastest: {best.gpu.name}, {best.result.config.replicas}×"
                f"{best.result.config.gpus_per_replica})"
            )
    if done and spec.ttft_ms_target is not None:
        best = min(done, key=lambda r: (r.result.ttft_p95_ms if p95 else r.result.ttft_ms) or 1e9)
        ttft = (best.result.ttft_p95_ms if p95 else best.result.ttft_ms) or 0.0
        c = best.result.config
        if ttft > QUEUE_WAIT_MS and best.result.saturated:
            # nobody waits minutes for a first token: the requests beyond the slots queue
            tips.append(
                f"even the fastest ({best.gpu.name}, {c.replicas}×{c.gpus_per_replica}) runs "
                f"only {_requests(best.result.max_concurrency * c.replicas)} at once and the "
                f"rest queue for a slot (first token after ~{ttft / 1000:,.0f} s)"
            )
        elif ttft > spec.ttft_ms_target:
            tips.append(
                f"raise the TTFT target{_default_note(spec.ttft_target_default)} to about "
                f"{ttft:,.0f} ms (the fastest: {best.gpu.name}), or shorten prompts"
            )
    if any(
        r.result.total_gpus >= max_gpus and _one_request_meets(r, model, spec) for r in closest[:3]
    ):
        tips.append(f"allow more than {max_gpus} GPUs (constraints.max_gpus) for more replicas")
    if spec.concurrent_requests is not None:
        tips.append("serve fewer concurrent requests per deployment, or shorter outputs")
    if not closest:
        tips.append(
            "pick a smaller model, or a quantised one (precision fp8/int4/fp4, or "
            "constraints.allow_4bit to let the planner choose 4-bit weights, at a quality cost)"
        )
    return tips


def recommend(
    request: s.RecommendationRequest,
    work: WorkloadSpec,
    warnings: list[str],
    gpus: list[GpuSpec],
    rules: compat.Rules,
    calibration: Calibration | None = None,
    prices: Prices = Prices(),
) -> s.RecommendationResponse:
    """Rank GPUs by the cheapest configuration that serves the load within the targets, each
    priced from its offers (``prices``)."""
    assert work.serving is not None
    spec = work.serving
    cons = request.constraints
    outcome = _plan_all(
        gpus,
        work,
        asked_precision(request.workload),
        cons,
        request.objective,
        rules,
        calibration,
        prices=prices,
        speed_weight=request.speed_weight,
        weight_format=request.workload.quantization,
    )
    top = outcome.rows[: request.limit]
    top = [
        _with_curve(r, work, cons, rules, calibration) if i < CURVES_FOR else r
        for i, r in enumerate(top)
    ]
    recs = [
        _recommendation(r, i, spec, i <= CURVES_FOR, "supported", work.efficiency)
        for i, r in enumerate(top, start=1)
    ]
    targets = _target_words(spec)
    if recs:
        lead = top[0].result.config
        message = (
            f"{len(outcome.rows)} GPU type{'s' if len(outcome.rows) != 1 else ''} carry "
            f"{_load_words(spec)} within {targets}; the top pick is {top[0].gpu.name}, "
            f"{lead.replicas} × {lead.gpus_per_replica} GPU."
        )
        summary = s.ServingSummaryOut(met=True, message=message, load=_load_words(spec))
    else:
        near = [_with_curve(r, work, cons, rules, calibration) for r in outcome.closest[:3]]
        why = (
            f"closest: {near[0].gpu.name} {near[0].result.config.replicas}×"
            f"{near[0].result.config.gpus_per_replica} ({'; '.join(near[0].misses)})"
            if near
            else "no GPU in the catalog can even hold the model within the limits"
        )
        message = (
            f"No configuration within {cons.max_gpus} GPUs meets {targets} at "
            f"{_load_words(spec)} — {why}."
        )
        summary = s.ServingSummaryOut(
            met=False,
            message=message,
            load=_load_words(spec),
            relax=_relax(outcome.closest, work.model, spec, cons.max_gpus),
            closest=[
                _recommendation(r, i, spec, True, "supported", work.efficiency)
                for i, r in enumerate(near, start=1)
            ],
        )
    mem = s.MemoryOut(
        required_gb=round(sv.weight_bytes(work.model, "bf16") / 1e9, 3),
        available_gb=None,
        headroom_gb=None,
        num_gpus=1,
        breakdown={"weights": round(sv.weight_bytes(work.model, "bf16") / 1e9, 3)},
        notes=["bf16 weights of the whole model; each row shows its own per-GPU split"],
    )
    return s.RecommendationResponse(
        workload=resolved_out(work),
        memory=mem,
        objective=request.objective,
        acquisition=cons.acquisition,
        framework=cons.framework,
        count=len(outcome.rows),
        counts=s.CountsOut(
            ranked=len(outcome.rows),
            excluded=len(outcome.excluded),
            unpriced=sum(1 for r in outcome.rows if not r.priced.pricing.price_known),
        ),
        recommendations=recs,
        excluded=sorted(outcome.excluded, key=lambda e: (e.code, e.slug)),
        baseline=None,
        warnings=warnings,
        serving=summary,
    )


def estimate(
    request: s.EstimateRequest,
    work: WorkloadSpec,
    warnings: list[str],
    gpu: GpuSpec,
    rules: compat.Rules,
    calibration: Calibration | None = None,
    prices: Prices = Prices(),
) -> s.EstimateResponse:
    """One GPU: the cheapest configuration with ``num_gpus`` GPUs per replica (any when
    unset); budgets and filters do not apply."""
    assert work.serving is not None
    outcome = _plan_all(
        [gpu],
        work,
        asked_precision(request.workload),
        request.constraints,
        "cheapest",
        rules,
        calibration,
        apply_filters=False,
        tp=request.num_gpus,
        prices=prices,
        weight_format=request.workload.quantization,
    )
    rows = outcome.rows or outcome.closest
    if not rows:
        excl = outcome.excluded[0] if outcome.excluded else None
        return s.EstimateResponse(
            workload=resolved_out(work),
            gpu=gpu_out(gpu),
            result=None,
            excluded=excl,
            warnings=warnings,
        )
    row = _with_curve(rows[0], work, request.constraints, rules, calibration)
    rec = _recommendation(row, 1, work.serving, True, "supported", work.efficiency)
    return s.EstimateResponse(
        workload=resolved_out(work), gpu=gpu_out(gpu), result=rec, warnings=warnings + rec.warnings
    )

"""Task 'serving' as the engine's plan and evaluate steps.

``evaluate.plan`` and ``evaluate.admit`` hand a serving job here, so serving runs the one
pipeline every task runs (plan → evaluate → price → rank): the same filters (vendors,
segments) and framework gate; each card's serving shapes planned as configurations (GPUs per
replica × replicas × weight and KV formats, its GPU count replicas × GPUs per replica, within
``max_gpus`` or exactly ``num_gpus``); each priced by the same pricing (the request's offers:
costs.price_replicas, one replica of N GPUs priced as inference's N GPUs; else the catalog's
per-GPU prices), judged by the same budget (evaluate.budget), and ranked by the same
``rank.rank`` after ``rank.best_per_card`` picks each card's shape by the objective.

What is serving's own: the runtime that serves each GPU, and the evaluation itself — the
continuous-batching solve (app/domain/serving.py) of one shape at the load, judged against the
latency targets. A shape that misses them is excluded ("misses_targets") with what it reached
attached; a card none of whose shapes meets them is shown, in an answer with no row, by its
closest (``card_exclusion``).

Pure: no I/O; the caller resolves the workload (with its efficiency table).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from app.domain import compat, efficiency, llm_step, perf, topology
from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import serving as sv
from app.domain import serving_encoder as se
from app.domain import serving_encoder_step as encoder_step
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.domain.workload import MemoryBreakdown, ModelSpec, ServingSpec, WorkloadSpec
from app.vocab import (
    FOUR_BIT_PRECISIONS,
    QUANTIZATION_PRECISION,
    SINGLE_DEVICE_SEGMENTS,
    backend_name,
    framework_name,
    runtime_name,
)

# The serving runtimes are builds for the GPU's PyTorch backend (vLLM, SGLang, TensorRT-LLM,
# Transformers) or build for the same backends (llama.cpp, MLX): the backend is PyTorch's.
_BACKEND_FRAMEWORK = "pytorch"


@dataclass(frozen=True, slots=True)
class Ask:
    """What a serving request pins beyond its workload: the weight precision (its precision,
    or the one its named weight format runs at; None: the planner picks), whether the planner
    may pick 4-bit weights, and the GPUs in all an estimate fixes (its ``num_gpus``: replicas
    × GPUs per replica, as ``constraints.num_gpus`` means for every request)."""

    precision: str | None = None
    allow_4bit: bool = False
    group: int | None = None


@dataclass(frozen=True, slots=True)
class Price:
    """One serving configuration's prices: both bases apart, and the hour the request ranks
    by (``basis`` says which; None when unpriced on every basis the request accepts)."""

    pricing: costs.Pricing | None  # the offers chosen; None: the catalog's prices
    placed: costs.ReplicaChoice | None
    rent_usd_per_hour: float | None
    buy_usd_per_hour: float | None  # owning: purchase less resale over the usage, plus energy
    energy_usd_per_hour: float | None
    usd_per_hour: float | None
    basis: str | None  # rent | buy
    usage: costs.Usage  # the usage a purchase is spread over
    purchase_usd: float | None  # every card the shape uses

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
    """What the serving evaluation found for one shape of a card: the shape at the load, its
    runtime and prices, and whether it meets the targets (missing them, it is shown only as a
    card's closest)."""

    result: sv.ServingResult
    runtime: sv.RuntimeProfile
    price: Price
    meets: bool
    misses: tuple[str, ...]
    warnings: tuple[str, ...]
    # what the shape's GEMM efficiency rests on, in words, where a kernel profile priced it
    # ("" = the prior; ``perf.llm_basis``)
    gemm_basis: str = ""
    # A rate load's output tokens per second (requests/s × output tokens): what every shape
    # that carries it produces, the same float for each (the solve's own figure, rate ÷
    # replicas × replicas, may differ in the last bit and would break ties at one price by
    # rounding noise). None under a concurrency load, where each shape's own rate counts.
    load_output_tokens_per_s: float | None = None
    users: float | None = None  # a concurrency load's requests at once (None: a rate load)
    # what a bought row must say of the hardware (compat.purchase_caveats: cooling, the host,
    # the card-alone price, the wall's power), as every task's rows say it; () unless it buys
    caveats: tuple[str, ...] = ()
    # the format the weights run as where the job or a rule names one (Options.weights_run_as:
    # plain int4 under Transformers on a Mac is bitsandbytes NF4), None where neither does
    weights_run_as: str | None = None
    # an encoder's shape: the batcher's own result (serving_encoder_step; ``result`` carries
    # its latency as ``ttft_ms`` and its embeddings per second as ``output_tokens_per_s``)
    encoder: se.EncoderResult | None = None

    @property
    def speed(self) -> float:
        """What 'fastest' ranks a serving shape by, and the speed 'balanced' mixes with the
        value (larger is better): the tokens per second each request sees, 1 ÷ the
        inter-token latency at the load (every shape ranked carries the same load within the
        targets); balanced at weight w orders as ITL^w × ($/h)^(1−w) (rank.serving_columns).
        Between equal scores the first token decides (rank.columns). Where concurrent
        requests exceed what the shape runs at once, the rest wait for a slot, and 1 ÷ ITL is
        what the running few see: each user gets the output rate ÷ the users (a 2-slot shape
        for 64 users read 16 ms a token while each waited 8 minutes for its first)."""
        r = self.result
        if self.encoder is not None:
            # one forward pass a request: its latency is what each client sees
            return 1e3 / r.ttft_ms if r.ttft_ms else 0.0
        if r.saturated and self.users and r.output_tokens_per_s:
            return r.output_tokens_per_s / self.users
        itl = r.itl_ms
        return 1e3 / itl if itl else 0.0

    @property
    def idle_replicas(self) -> int:
        """Replicas with no request to run: those beyond a concurrency load's users (a closed
        loop's client holds one replica at a time; ``sv.evaluate`` counts them delivering no
        tokens), planned only where the request fixes the GPU count. 0 under a rate load,
        whose arrivals every replica shares."""
        if self.users is None:
            return 0
        return max(0, self.result.config.replicas - math.ceil(self.users))

    @property
    def hourly(self) -> float | None:
        """An hour of the load (a service has no job): what 'cheapest' ranks by, the least
        money that carries the load."""
        return self.price.usd_per_hour

    @property
    def output_tokens_per_s(self) -> float | None:
        """The output tokens per second the shape produces at the load (all replicas; None:
        it cannot carry the load)."""
        own = self.result.output_tokens_per_s
        if own is None or self.load_output_tokens_per_s is None:
            return own
        return self.load_output_tokens_per_s

    @property
    def value(self) -> float | None:
        """What 'best_value' ranks by: output tokens per dollar, the hour's output tokens ÷
        its cost (the inverse of the row's ``usd_per_million_output_tokens_blended``, ÷ 10⁶),
        on the basis the hour is priced (renting, or owning: purchase less resale over the
        hours of use, plus energy). Under
        a concurrency load a faster shape produces more tokens in the same hour, so the value
        and the $/h can disagree; under a rate load every shape that meets the targets
        produces the same tokens, so the value orders as 1 ÷ $/h. None: unpriced, or no
        tokens (the load is not carried)."""
        hour, rate = self.hourly, self.output_tokens_per_s
        if not hour or not rate or rate <= 0:
            return None
        return rate * 3600.0 / hour


# GPUs per replica the tensor-parallel runtimes are planned at: heads split evenly; 8 is one
# NVLink/NVSwitch node
TP_SIZES = (1, 2, 4, 8)
# A replica too big for one node: tensor parallel over each node's 8 GPUs, the layers split
# across 2 or 4 nodes as pipeline stages (vLLM --pipeline-parallel-size, SGLang --pp-size,
# TensorRT-LLM --pp_size; how DeepSeek-V3/R1 in FP8 is served on H100s, ~700 GB of weights
# over 2 nodes of 8). Tried only where no shape inside one node holds the model: the stages
# do not shorten a token (llm_step.span), so replicas of a node each serve better.
NODE_SPANS = (16, 32)


@dataclass(frozen=True, slots=True)
class Options:
    """What every serving shape of one card is planned and solved with (``_options`` builds
    it from the request): the runtime, the formats to try, the GPU counts allowed, and the
    memory and efficiencies the solve reads."""

    runtime: sv.RuntimeProfile
    weight_precisions: tuple[str, ...]
    kv_precisions: tuple[str, ...]
    max_gpus: int
    usable_gb: float
    memory_efficiency: float
    compute_efficiency: dict[str, float]  # by compute precision (bf16, fp8, fp4, ...)
    single_device: bool = False
    exact_gpus: int | None = None  # the request's "exactly N GPUs" (constraints.num_gpus)
    # weight formats the runtime lacks on this GPU's backend, with why (the compat rules)
    barred_weights: tuple[tuple[str, str], ...] = ()
    # a replica may span nodes (NODE_SPANS): a tensor-parallel server runtime on datacenter
    # GPUs, which rent and sell as 8-GPU servers joined by a fabric
    across_nodes: bool = False
    # weight formats the runtime runs here only experimentally, with the caveat (compat rules)
    weight_caveats: tuple[tuple[str, str], ...] = ()
    # what a row says of its weight precision here, its status unchanged, as an inference
    # row's precision caveat is (compat.precision_caveat: bf16 under MLX on a Mac)
    weight_notes: tuple[tuple[str, str], ...] = ()
    # the format each weight precision runs as where the job or a rule names one
    # (compat.weights_run_as): the format whose quality cost a row states
    weights_run_as: tuple[tuple[str, str], ...] = ()


def usable_formats(
    gpu: GpuSpec, options: Options, model: ModelSpec | None = None
) -> tuple[list[str], list[str], list[str]]:
    """(weight formats, KV formats) the GPU and runtime can serve ``model`` in, and each weight
    format skipped with why."""
    skipped: list[str] = []
    weights = []
    barred = dict(options.barred_weights)
    for wp in options.weight_precisions:
        why = barred.get(wp) or sv.supports_weights(gpu, wp, options.runtime, model)
        if why:
            skipped.append(f"{wp}: {why}")
        else:
            weights.append(wp)
    kvs = [kv for kv in options.kv_precisions if sv.supports_kv(gpu, kv, options.runtime) is None]
    return weights, kvs, skipped


def shapes(options: Options) -> list[tuple[int, range]]:
    """(GPUs per replica, the replica counts to try) the options allow: every tensor-parallel
    size up to the most GPUs (one GPU for a runtime that spans none, or a card that runs as
    one device), or exactly ``exact_gpus`` in all (the request's "exactly N GPUs", honoured as
    for every other task)."""
    one_gpu = options.single_device or options.runtime.multi_gpu == "none"
    tps = [1] if one_gpu else [t for t in TP_SIZES if t <= options.max_gpus]
    exact = options.exact_gpus
    if exact is not None and options.single_device and exact > 1:
        return []  # one device: no count but 1
    if exact is not None:
        if exact > options.max_gpus:
            return []
        return [(tp, range(exact // tp, exact // tp + 1)) for tp in tps if exact % tp == 0]
    if options.single_device:
        return [(tp, range(1, 2)) for tp in tps]
    return [(tp, range(1, max(1, options.max_gpus // tp) + 1)) for tp in tps]


def node_shapes(options: Options) -> list[tuple[int, range]]:
    """The replica shapes across nodes (NODE_SPANS) the options allow, as ``shapes`` gives
    them: one replica each (a replica that needs several nodes already spans every GPU a
    serving answer plans for one model), or the exact count asked."""
    if not options.across_nodes:
        return []
    exact = options.exact_gpus
    if exact is not None:
        return [(n, range(exact // n, exact // n + 1)) for n in NODE_SPANS if exact % n == 0]
    return [(n, range(1, options.max_gpus // n + 1)) for n in NODE_SPANS if n <= options.max_gpus]


def miss_size(result: sv.ServingResult, targets: sv.ServingTargets) -> float:
    """How far outside the targets, as the worst ratio (1 = on target; inf: it cannot carry
    the load), a rate load's share of capacity over the share plans are sized to among them."""
    if result.ttft_ms is None or (result.itl_ms is None and targets.itl_ms is not None):
        return math.inf  # (an encoder's result has no inter-token latency, nor its target)
    p95 = targets.percentile == "p95"
    ratios = [1.0]
    ttft = result.ttft_p95_ms if p95 else result.ttft_ms
    itl = result.itl_p95_ms if p95 else result.itl_ms
    if targets.ttft_ms and ttft is not None:
        ratios.append(ttft / targets.ttft_ms)
    if targets.itl_ms and itl is not None:
        ratios.append(itl / targets.itl_ms)
    if result.load_share is not None:
        ratios.append(result.load_share / sv.NEAR_CAPACITY)  # sv.meets' sizing margin
    return max(ratios)


def load_of(spec: ServingSpec) -> sv.ServingLoad:
    extra = (spec.prompt_tokens_spread or 0) + (spec.output_tokens_spread or 0)
    return sv.ServingLoad(
        prompt_tokens=spec.prompt_tokens,
        output_tokens=spec.output_tokens,
        concurrent_requests=spec.concurrent_requests,
        requests_per_s=spec.requests_per_s,
        kv_extra_tokens=extra,
        slot_tokens=spec.context_tokens or 0,
    )


def targets_of(spec: ServingSpec) -> sv.ServingTargets:
    return sv.ServingTargets(spec.ttft_ms_target, spec.itl_ms_target, spec.target_percentile)


def serving_weights(
    half: str, published: str, fp8_native: bool, allow_4bit: bool
) -> tuple[str, ...]:
    """The weight precisions the serving planner may choose from when the request pins none:
    the published weights (``half``, fp8 where the model publishes fp8 and the card runs it
    natively, fp4 where the model is published in a 4-bit float format, gpt-oss's MXFP4, which
    a runtime without FP4 kernels reads as weight-only), 4-bit formats only when allowed."""
    out: tuple[str, ...] = (half,)
    if published == "fp8" and fp8_native:
        out += ("fp8",)
    if published == "fp4":
        out += ("fp4",)
    if allow_4bit:
        out += FOUR_BIT_PRECISIONS
    return out


def runtime_profile(work: WorkloadSpec, gpu: GpuSpec, backend: str, name: str) -> sv.RuntimeProfile:
    """The serving runtime from the one efficiency table (data/efficiency.yaml), with the
    decode and prefill rows it has on this GPU (the ones LLM inference reads)."""
    table = work.efficiency
    if table is None:
        raise ValueError("a serving job needs its efficiency table (resolve_workload sets it)")
    spec = table.serving.get(name)
    fmt = reads(work, spec.int4_reads if spec is not None else ())
    bits = table.bits_per_weight.get(fmt) if fmt is not None else None
    # a release read on the runtime's 4-bit path runs its int4 kernels' efficiency rows
    precision = "int4" if fmt is not None and bits is not None else work.precision
    decode = table.profile(gpu, backend, name, precision, "decode")
    prefill = table.profile(gpu, backend, name, precision, "prefill")
    rt = sv.runtime_profile(table, name, decode, prefill)
    if fmt is not None and bits is not None:
        return rt.reading(fmt, bits)
    released = work.released_format
    own = table.bits_per_weight.get(released or "")
    if own is not None and QUANTIZATION_PRECISION.get(released or "") == work.precision:
        # the published weights at their own format's bits (gpt-oss's MXFP4: 4.25, not NVFP4's
        # 4.5), as inference sizes the release it names (workloads._as_released)
        return replace(rt, named_format=(work.precision, str(released), own))
    return rt


def reads(work: WorkloadSpec, int4_reads: tuple[str, ...]) -> str | None:
    """The named format a runtime that reads ``int4_reads`` on its own 4-bit path takes this
    job's weights in (llama.cpp on a model's MXFP4 release, data/efficiency.yaml int4_reads):
    the one the job names, else the model's release where the job runs its published weights
    (serving_weights), else None."""
    named = work.quantization if work.quantization != "none" else None
    if named is not None:
        return named if named in int4_reads else None
    released = work.released_format
    published = QUANTIZATION_PRECISION.get(released or "")
    if released in int4_reads and published == work.precision:
        return released
    return None


def efficiencies_for(
    gpu: GpuSpec, calibration: Calibration | None
) -> tuple[float, dict[str, float]]:
    """Achieved-vs-peak bandwidth, and whole-model matmul efficiency by datapath: the GPU's
    best-shape GEMM efficiency (a device report's measurements, else its kernel profile, else
    the vendor prior) × MODEL_UTILISATION (perf.llm_efficiency, as LLM inference reads them)."""
    eff = perf.efficiencies(gpu, calibration)
    return eff.memory, perf.llm_efficiency(eff)


def runtime_for(
    gpu: GpuSpec, backend: str, work: WorkloadSpec, rules: compat.Rules
) -> tuple[str | None, str | None]:
    """(the runtime that serves this GPU, a caveat); (None, why) when none does. The request's
    runtime, else the backend's default; the `runtime:<name>` rules (data/frameworks.yaml) say
    where each runs, as they do for inference (evaluate._runtime_gate): a default the GPU's
    architecture lacks (vLLM below compute capability 7.0 or on a Radeon outside its gfx list)
    falls back to llama.cpp, which builds for every GPU backend; an experimental one is kept
    with the caveat. An encoder's embedding server likewise: TEI where no server is named,
    infinity where TEI's image list lacks the card (serving_encoder.FALLBACK_RUNTIME)."""
    if encoder_step.is_encoder_job(work):
        # an embedding server: the one asked or TEI (workloads sets it), infinity where TEI
        # cannot run; each read under its hardware rules' name (vllm-pooling is vLLM)
        runtime, fallback = work.runtime, se.FALLBACK_RUNTIME
    else:
        fallback = "llama.cpp"
        runtime = work.runtime if work.runtime_given else sv.DEFAULT_RUNTIME.get(backend, fallback)
    st = compat.runtime_status(gpu, _rules_name(runtime), rules, backend)
    if st is None or st.status == "supported":
        # a supported runtime's stated condition (TEI's Hopper image) is said, not ranked down
        return runtime, st.caveat if st is not None and st.caveat else None
    # in the forms' words ("vLLM on … (ROCm)"): the ids stay in the row's fields
    why = (
        f"{runtime_name(runtime)} on {gpu.name} ({backend_name(backend, runtime)}) "
        f"is {st.status}" + (f": {st.note}" if st.note else "")
    )
    if st.status == "experimental":
        return runtime, why
    if work.runtime_given or runtime == fallback:
        return None, why
    st = compat.runtime_status(gpu, _rules_name(fallback), rules, backend)
    if st is not None and st.status != "supported":
        return None, why
    return fallback, f"{why}; served with {fallback} instead"


def _rules_name(runtime: str) -> str:
    """The name a runtime's hardware rules go under: an embedding server's own
    (serving_encoder.EncoderRuntime.rules_name), a decoder runtime's name."""
    enc = se.RUNTIMES.get(runtime)
    return enc.rules_name if enc is not None else runtime


@dataclass(frozen=True, slots=True)
class _Software:
    backend: str
    runtime: str
    caveat: str | None
    # "experimental" where the rules call the framework asked or the runtime that serves it
    # experimental on this card (vLLM on Intel XPU): such rows rank after supported software,
    # as every task's do (rank.rank)
    status: str = "supported"
    # what the framework rule says where the runtime runs its programs (compat.framework_words:
    # PyTorch's Prototype XPU support under Transformers, not under llama.cpp)
    framework_warnings: tuple[str, ...] = ()


def software(gpu: GpuSpec, ctx: ev.Context) -> _Software | ev.Exclusion:
    """The card's software for the job: the framework the request asks (the gate every task
    passes), the backend the serving runtimes build for, and the runtime that serves it (a
    decoder's or an encoder's, ``runtime_for``)."""
    key = ("serving software", gpu.slug)
    hit: _Software | ev.Exclusion | None = ctx.memo.get(key)
    if hit is not None:
        return hit
    out: _Software | ev.Exclusion
    asked = compat.framework_support(gpu, ctx.framework, ctx.rules)
    support = compat.framework_support(gpu, _BACKEND_FRAMEWORK, ctx.rules)
    if not asked.ok:
        out = ev.Exclusion(
            "framework_unsupported", asked.reason or f"no {framework_name(ctx.framework)} support"
        )
    elif not support.ok or support.backend is None:
        out = ev.Exclusion("framework_unsupported", support.reason or "no PyTorch support")
    else:
        runtime, caveat = runtime_for(gpu, support.backend, ctx.work, ctx.rules)
        if runtime is None:
            out = ev.Exclusion("runtime_unsupported", caveat or "no serving runtime")
        else:
            st = compat.runtime_status(gpu, runtime, ctx.rules, support.backend)
            # the framework's status counts only where the runtime runs its programs: a
            # llama.cpp row on an Intel GPU had ranked as experimental, saying no reason, for
            # PyTorch's Prototype label
            asked_status, said = compat.framework_words(asked, ctx.framework, runtime)
            backend_status, said_too = compat.framework_words(support, _BACKEND_FRAMEWORK, runtime)
            experimental = "experimental" in (
                asked_status,
                backend_status,
                st.status if st is not None else "",
            )
            out = _Software(
                support.backend,
                runtime,
                caveat,
                "experimental" if experimental else "supported",
                tuple(dict.fromkeys(said + said_too)),
            )
    ctx.memo[key] = out
    return out


def plan(gpu: GpuSpec, ctx: ev.Context) -> list[ev.Configuration] | ev.Exclusion:
    """The card's serving shapes, one configuration each (GPUs per replica × replicas ×
    weight format × KV format, its GPU count replicas × GPUs per replica), or why the card
    cannot serve: the request's filters and software gate, as every task's ``evaluate.plan``
    applies them, then the shapes the runtime and the card allow within ``max_gpus`` (exactly
    ``num_gpus`` when the request fixes it) whose replica holds one request beside its weights.
    Replicas beyond the concurrent requests would sit idle: they are not planned. An encoder's
    shapes are serving_encoder_step's."""
    if encoder_step.is_encoder_job(ctx.work):
        return encoder_step.plan(gpu, ctx)
    if ctx.apply_filters:
        excl = ev.filtered_out(gpu, ctx.limits)
        if excl is not None:
            return excl
    card = _card(gpu, ctx)
    if isinstance(card, ev.Exclusion):
        return card
    weights, kvs, skipped = usable_formats(gpu, card.options, ctx.work.model)
    if not kvs:  # the KV cache format asked for (fp8 on an A100) is the card's gap
        gaps = [
            sv.supports_kv(gpu, kv, card.options.runtime) or kv for kv in card.options.kv_precisions
        ]
        return _unserved("; ".join(gaps))
    if not weights:
        return _unserved("; ".join(skipped))
    sizes = shapes(card.options)
    if not sizes:
        n = card.options.exact_gpus
        return _unserved(
            f"{gpu.name} runs as one device; {n} GPUs were asked for"
            if card.options.single_device
            else f"no configuration of {card.profile.name} spans exactly {n} GPUs "
            f"(at most {card.options.max_gpus})"
        )
    model = ctx.work.model
    split = [(tp, llm_step.replica_split_error(model, card.profile.decode, tp)) for tp, _ in sizes]
    sizes = [size for size, (_, why) in zip(sizes, split, strict=True) if why is None]
    if not sizes:
        tp, why = split[-1]
        return ev.Exclusion(
            "runtime_unsupported",
            f"{card.profile.name} cannot split the model over {tp} GPUs: {why}",
        )
    out, unfit = _fitting(gpu, ctx, card, sizes, (weights, kvs))
    if not out:
        across = [
            size
            for size in node_shapes(card.options)
            if llm_step.replica_split_error(model, card.profile.decode, size[0]) is None
        ]
        if across:
            out, unfit_across = _fitting(gpu, ctx, card, across, (weights, kvs))
            unfit = unfit_across or unfit
            sizes = sizes + across
    if not out:
        why = unfit or "does not fit"
        note = _exact_note(why, sizes, card.options.exact_gpus)
        if note != why or card.options.across_nodes:
            note = f"{note} ({_spans_words(card.options.across_nodes)})"
        more = _beyond_max_gpus(gpu, ctx, card, (weights, kvs))
        if more is not None:
            # the request's ceiling, not the card, is what leaves it out: said first, as the
            # lever to pull (the memory miss within it after), and kept for the answer's advice
            ctx.memo[(MORE_GPUS, gpu.slug)] = more
            within = f"within {card.options.max_gpus} GPUs: {note}"
            return ev.Exclusion("filtered_out", f"{_more_gpus_words(card, more)}; {within}")
        return _unserved(note)
    return out


# ctx.memo's key of a card that holds the model only on more GPUs a replica than the request's
# max_gpus allows (``_beyond_max_gpus``): the answer's advice names the count (more_gpus)
MORE_GPUS = "serving needs more gpus"


def _beyond_max_gpus(
    gpu: GpuSpec, ctx: ev.Context, card: _CardParts, formats: tuple[list[str], list[str]]
) -> int | None:
    """The fewest GPUs a replica spans beyond the request's max_gpus (a tensor-parallel size,
    or a span across servers where the card may) whose replica holds one request; None where
    none does, or the request fixes its GPU count (that count is the miss, ``_exact_note``)."""
    o = card.options
    if o.exact_gpus is not None or o.single_device or o.runtime.multi_gpu == "none":
        return None
    beyond = [n for n in TP_SIZES if n > o.max_gpus]
    if o.across_nodes:
        beyond += [n for n in NODE_SPANS if n > o.max_gpus]
    model = ctx.work.model
    assert ctx.work.serving is not None
    itl = ctx.work.serving.itl_ms_target
    for n in beyond:
        if llm_step.replica_split_error(model, card.profile.decode, n) is not None:
            continue
        fits = _fitting(gpu, ctx, card, [(n, range(1, 2))], formats)[0]
        # a span whose every decode step outlasts the ITL target at the card's full bandwidth
        # is no lever: 16 T4s had been offered for a 70B at ITL <= 5 ms, the answer's only advice
        floors = (decode_floor_ms(gpu, model, c.precision or ctx.work.precision, n) for c in fits)
        if fits and (itl is None or min(floors) <= itl):
            return n
    return None


def decode_floor_ms(gpu: GpuSpec, model: ModelSpec, precision: str, n: int) -> float:
    """The least time between output tokens a replica of ``n`` ``gpu`` can reach with
    ``precision`` weights: each decode step reads at least the weights a token passes through
    (an MoE's active ones; the input embedding is read a row at a time, so it is left out) once,
    at the cards' full memory bandwidth. A bound below any estimate, no efficiency in it."""
    if not model.params or not gpu.memory_bandwidth_gbs:
        return 0.0
    embedding = (model.vocab_size or 0) * (model.hidden_size or 0)
    read = max(0.0, model.params_per_token - embedding) / model.params
    bytes_read = sv.weight_bytes(model, precision) * read
    return bytes_read / (n * gpu.memory_bandwidth_gbs * 1e9) * 1e3


def _more_gpus_words(card: _CardParts, n: int) -> str:
    tp, stages = llm_step.span(card.profile.decode, n)
    how = f" (tensor parallel {tp} in each of {stages} servers)" if stages > 1 else ""
    most = card.options.max_gpus
    return (
        f"needs {n} GPUs per replica{how}, more than constraints.max_gpus ({most}) allows: "
        f"raise constraints.max_gpus to {n} to plan it"
    )


def more_gpus(ctx: ev.Context) -> dict[str, int]:
    """The cards left out by the request's max_gpus alone, by slug: the GPUs a replica of each
    needs (``plan`` found them)."""
    out: dict[str, int] = {}
    for key, n in ctx.memo.items():
        if isinstance(key, tuple) and len(key) == 2 and key[0] == MORE_GPUS:
            out[str(key[1])] = int(n)
    return out


# Published FP8 checkpoints of mixture-of-experts models store their weights in 128 × 128
# blocks, one scale each (Qwen3-*-FP8 and DeepSeek-V3/R1: "weight_block_size": [128, 128] in
# their config.json): tensor parallelism must cut each expert's intermediate dimension on a
# block boundary. vLLM refuses it otherwise ("output_size ... is not divisible by weight
# quantization block_n = 128": vllm-project/vllm issues #17569, #25292), e.g. Qwen3-235B-A22B
# (1,536 per expert) at TP8 and Qwen3-30B-A3B (768) at TP4 and TP8.
FP8_BLOCK = 128


def fp8_block_error(model: ModelSpec, weights: str, tp: int) -> str | None:
    """Why ``tp`` GPUs cannot split a block-quantised FP8 MoE checkpoint's experts (None: they
    can, or the shape is not one)."""
    inter = model.intermediate_size or 0
    if weights != "fp8" or tp <= 1 or (model.experts or 0) <= 1 or not inter:
        return None
    if (inter // tp) % FP8_BLOCK == 0 and inter % tp == 0:
        return None
    return (
        f"its FP8 checkpoint's {FP8_BLOCK}-wide weight blocks do not split over {tp} GPUs "
        f"(each expert's {inter} intermediate columns ÷ {tp}); expert parallelism, which "
        "keeps experts whole, is not modelled"
    )


def _fitting(
    gpu: GpuSpec,
    ctx: ev.Context,
    card: _CardParts,
    sizes: list[tuple[int, range]],
    formats: tuple[list[str], list[str]],
) -> tuple[list[ev.Configuration], str | None]:
    """The configurations of ``sizes`` × the weight and KV ``formats`` whose replica holds one
    request beside its weights, and why the closest shape that does not fit misses."""
    assert ctx.work.serving is not None
    load = load_of(ctx.work.serving)
    most = math.ceil(load.concurrent_requests) if load.concurrent_requests else None
    out: list[ev.Configuration] = []
    unfit: str | None = None
    first: tuple[int, str] | None = None
    weights, kvs = formats
    for tp, counts in sizes:
        for wp in weights:
            for kv in kvs:
                one = sv.ServingConfig(tp, 1, wp, kv, card.profile.name)
                why = fp8_block_error(ctx.work.model, wp, llm_step.span(card.profile.decode, tp)[0])
                # at the --max-num-seqs the plan would deploy (sv.planned_runtime): a default
                # sampler peak that crowds out the pool is not the runtime's last word
                if why is None:
                    usable = card.options.usable_gb
                    rt = sv.planned_runtime(gpu, ctx.work.model, one, load, card.profile, usable)
                    why = sv.unfit(gpu, ctx.work.model, one, load, rt, usable)
                if why is not None:
                    # the last shape tried is the closest miss (the most GPUs per replica, the
                    # fewest bits): the first, one GPU at 16 bits, once stood for them all;
                    # where it had the first's GPUs and weights, the reason alone says it
                    first = first or (tp, wp)
                    per = f"{tp} GPU{'s' if tp > 1 else ''} per replica"
                    unfit = (
                        why
                        if (tp, wp) == first
                        else f"{why} (closest shape tried: {per}, {wp} weights)"
                    )
                    continue
                out += [
                    ev.Configuration(
                        gpu,
                        tp * r,
                        precision=wp,
                        runtime=card.profile.name,
                        shape=dataclasses.replace(one, replicas=r),
                    )
                    for r in counts
                    if most is None or r <= max(most, counts.start)
                ]
    return out, unfit


def _exact_note(why: str, sizes: list[tuple[int, range]], exact: int | None) -> str:
    """The memory miss, and how an exact GPU count was cut into replicas when no replica spans
    them all: 3 GPUs asked are three 1-GPU replicas, not a 3-GPU one that would hold a 70B."""
    tp = sizes[-1][0]
    if exact is None or tp >= exact:
        return why
    return f"{why}; {exact} GPUs run as {exact // tp} replicas of {tp}"


def _spans_words(across: bool) -> str:
    inside = f"{', '.join(map(str, TP_SIZES[:-1]))} or {TP_SIZES[-1]} GPUs"
    if not across:
        return f"a replica spans {inside}"
    nodes = " or ".join(map(str, NODE_SPANS))
    return f"a replica spans {inside} in one server, or {nodes} across servers"


def _weight_only_words(gpu: GpuSpec, weights: str) -> str | None:
    """ "FP8" or "FP4" where a shape's weights run through weight-only kernels on ``gpu``
    (supports_weights let them in without the tensor cores), as inference's gate says it."""
    if weights == "fp8" and not gpu.fp8_tflops:
        return "FP8"
    if weights == "fp4" and not llm_step.native_fp4(gpu):
        return "FP4"
    return None


def _unserved(reason: str) -> ev.Exclusion:
    """Why no shape of a card runs: a weight or KV format the card lacks, else memory."""
    code = "precision_unsupported" if "fp" in reason[:4] else "does_not_fit"
    return ev.Exclusion(code, reason)


@dataclass(frozen=True, slots=True)
class _CardParts:
    """What every serving shape of one card shares: its software, the runtime's profile on
    it and the planner's options (formats, efficiencies, usable memory)."""

    software: _Software
    profile: sv.RuntimeProfile
    options: Options
    skipped: tuple[str, ...]


def _card(gpu: GpuSpec, ctx: ev.Context) -> _CardParts | ev.Exclusion:
    key = ("serving card", gpu.slug)
    hit: _CardParts | ev.Exclusion | None = ctx.memo.get(key)
    if hit is not None:
        return hit
    sw = software(gpu, ctx)
    out: _CardParts | ev.Exclusion
    if isinstance(sw, ev.Exclusion):
        out = sw
    else:
        profile = runtime_profile(ctx.work, gpu, sw.backend, sw.runtime)
        options = _options(gpu, ctx, profile, sw.backend)
        out = _CardParts(
            sw, profile, options, tuple(usable_formats(gpu, options, ctx.work.model)[2])
        )
    ctx.memo[key] = out
    return out


def price(gpu: GpuSpec, group: int, replicas: int, ctx: ev.Context) -> Price:
    """``replicas`` × ``group`` GPUs priced from the request's offers, as the request accepts
    them (providers, tiers, spot; the usage a purchase is spread over), or, with no offers
    loaded, from the catalog's per-GPU prices × N as every task is (evaluate._costs); and the
    hour it ranks by under the request's acquisition."""
    key = ("serving price", gpu.slug, group, replicas)
    hit: Price | None = ctx.memo.get(key)
    if hit is not None:
        return hit
    n = group * replicas
    pricing: costs.Pricing | None = None
    placed: costs.ReplicaChoice | None = None
    if ctx.offers is not None:
        offers = ctx.offers.get(gpu.slug, _NO_OFFERS)
        pricing, placed = costs.price_replicas(
            offers, group, replicas, ctx.rental, ctx.usage, ctx.purchase_basis,
            topology.node_size(gpu), ev.host_need(ctx),
        )  # fmt: skip
    owned, rent = costs.prices(gpu, n, pricing)
    energy = (
        gpu.tdp_w * n / 1000.0 * ctx.usage.electricity_usd_per_kwh
        if gpu.tdp_w is not None
        else None
    )
    buy = costs.owned_usd_per_hour(owned, energy, ctx.usage) if owned is not None else None
    acquisition = ctx.limits.acquisition
    options = []
    if acquisition in ("rent", "either") and rent is not None:
        options.append((rent, "rent"))
    if acquisition in ("buy", "either") and buy is not None:
        options.append((buy, "buy"))
    hourly, basis = min(options) if options else (None, None)
    out = Price(pricing, placed, rent, buy, energy, hourly, basis, ctx.usage, owned)
    ctx.memo[key] = out
    return out


_NO_OFFERS = costs.GpuOffers()


def cost_of(gpu: GpuSpec, result: sv.ServingResult, priced: Price) -> costs.CostEstimate:
    """The configuration's CostEstimate from its offers, else the catalog (per hour: a
    service has no job)."""
    return costs.estimate_cost(
        gpu,
        result.total_gpus,
        result.output_tokens_per_s or 0.0,
        None,
        priced.usage.electricity_usd_per_kwh,
        pricing=priced.pricing,
        usage=priced.usage,
    )


def _options(gpu: GpuSpec, ctx: ev.Context, runtime: sv.RuntimeProfile, backend: str) -> Options:
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
    if runtime.int4_format is not None and runtime.format_bits("int4") is not None:
        # the format this runtime reads on its own 4-bit path (MXFP4 under llama.cpp or MLX):
        # the job's 4-bit float weights run there, as int4, not on FP4 tensor cores
        weights = tuple(dict.fromkeys("int4" if w == work.precision else w for w in weights))
    assert work.serving is not None
    kv_asked = work.serving.kv_cache_precision
    # the servers' default cache keeps the model's dtype (vLLM's and SGLang's
    # --kv-cache-dtype auto): an 8-bit cache, a quality trade, only where asked (the row's tip
    # says what it would hold)
    kvs: tuple[str, ...] = (kv_asked,) if kv_asked is not None else (half,)
    if kv_asked in ("bf16", "fp16") and kv_asked != half:
        kvs = (half,)
    mem_eff, comp = efficiencies_for(gpu, ctx.calibration)
    single = gpu.segment in SINGLE_DEVICE_SEGMENTS or backend == "mps"
    # weight formats the runtime's kernels lack here (the rules inference reads too)
    barred, caveats, run_as, notes = [], [], [], []
    for wp in weights:
        # what an inference row at this precision under this runtime says of it (MLX's own
        # bf16, not PyTorch MPS's macOS floor): a serving row had said nothing of either
        if (note := compat.precision_caveat(gpu, wp, rules, backend, runtime.name)) is not None:
            notes.append((wp, note))
        fmt = ev.weights_format(work, wp)  # AWQ, GPTQ: their own rules
        st = compat.weights_status(gpu, runtime.name, wp, rules, backend, fmt)
        if st is not None and st.status == "unsupported":
            on = f"{runtime_name(runtime.name)} on {backend_name(backend, runtime.name)}"
            barred.append((wp, f"{on}: {st.note or 'unsupported'}"))
        elif (said := ev.weights_words(gpu, runtime.name, wp, st)) is not None and said[1]:
            # an experimental kernel path (bitsandbytes NF4 on Metal) said and ranked as an
            # inference row on the same card says and ranks it
            caveats.append((wp, said[1]))
        # the format the weights run as (plain int4 under Transformers on a Mac: NF4), whose
        # quality cost the row states (the one rule the inference rows read)
        if (named := compat.weights_run_as(gpu, runtime.name, wp, rules, backend, fmt)) is not None:
            run_as.append((wp, named))
    return Options(
        runtime=runtime,
        weight_precisions=weights,
        kv_precisions=kvs,
        max_gpus=max(ctx.limits.max_gpus, ask.group or 0),
        usable_gb=efficiency.usable_gb(gpu),
        memory_efficiency=mem_eff,
        compute_efficiency=comp,
        single_device=single,
        across_nodes=(
            not single
            and gpu.segment == "datacenter"
            and runtime.multi_gpu == "tensor"
            and runtime.decode.span == "tensor"
        ),
        exact_gpus=(
            ask.group
            if ask.group is not None
            else ctx.limits.exact_gpus
            if ctx.apply_filters
            else None
        ),
        barred_weights=tuple(barred),
        weight_caveats=tuple(caveats),
        weights_run_as=tuple(run_as),
        weight_notes=tuple(notes),
    )


def shape_words(c: sv.ServingConfig) -> str:
    return f"{c.replicas}×{c.gpus_per_replica}, {c.weight_precision}"


def _shape(config: ev.Configuration) -> sv.ServingConfig:
    """The serving shape ``plan`` set on ``config``."""
    if config.shape is None:
        raise ValueError("a serving configuration needs its shape (serving_step.plan sets it)")
    return config.shape


def shape_terms(config: ev.Configuration, ctx: ev.Context) -> sv.ShapeTerms | None:
    """What every replica count of ``config``'s shape shares under the request's load
    (sv.ShapeTerms: the runtime at the --max-num-seqs the plan deploys, its memory, step
    function and saturation); None where the card cannot serve."""
    gpu, work, shape = config.gpu, ctx.work, _shape(config)
    assert work.serving is not None
    card = _card(gpu, ctx)
    if isinstance(card, ev.Exclusion):
        return None
    o = card.options
    load = load_of(work.serving)
    # the runtime at the --max-num-seqs the plan deploys: its memory plan, the rows' capacity
    # and the deploy command's flag are one figure (sv.planned_runtime); the same for every
    # replica count (a replica's memory does not depend on how many there are)
    runtime = sv.planned_runtime(gpu, work.model, shape, load, card.profile, o.usable_gb)
    return sv.ShapeTerms(
        gpu, work.model, shape, load, runtime, o.usable_gb, o.memory_efficiency,
        o.compute_efficiency,
    )  # fmt: skip


def evaluate(
    config: ev.Configuration, ctx: ev.Context, terms: sv.ShapeTerms | None = None
) -> ev.ConfigResult:
    """One serving shape as the evaluate step: the continuous-batching solve at the load,
    judged against the targets — a shape that misses them is excluded as "misses_targets" with
    what it reached attached (``card_exclusion`` picks a card's closest, which an answer with
    no row shows whatever its price) —, then priced and judged by the request's budget.
    ``terms``: its shape's (``shape_terms``), where the caller evaluates several replica
    counts of it."""
    if encoder_step.is_encoder_job(ctx.work):
        return encoder_step.evaluate(config, ctx)
    gpu, work, shape = config.gpu, ctx.work, _shape(config)
    assert work.serving is not None
    card = _card(gpu, ctx)
    if isinstance(card, ev.Exclusion):
        return ev.ConfigResult(config, card)
    backend, o = card.software.backend, card.options
    priced = price(gpu, shape.gpus_per_replica, shape.replicas, ctx)
    reasons = (
        (priced.pricing.rent_reason, priced.pricing.buy_reason)
        if priced.pricing is not None
        else (None, None)
    )
    load = load_of(work.serving)
    if terms is None:
        terms = shape_terms(config, ctx)
        assert terms is not None
    # the runtime at the --max-num-seqs the plan deploys (``shape_terms``)
    runtime = terms.runtime
    res = sv.evaluate(
        gpu,
        work.model,
        shape,
        load,
        runtime=runtime,
        usable_gb=o.usable_gb,
        memory_efficiency=o.memory_efficiency,
        compute_efficiency=o.compute_efficiency,
        saturation=False,
        terms=terms,
    )
    if not res.fits:
        code = "no_figures" if res.no_figures else "does_not_fit"
        return ev.ConfigResult(config, ev.Exclusion(code, res.reason or ""), backend=backend)
    ok, misses = sv.meets(res, targets_of(work.serving))
    warnings = [f"not tried: {x}" for x in card.skipped] if ctx.serving.precision else []
    only = _weight_only_words(gpu, shape.weight_precision)
    if only is not None:
        warnings.append(llm_step.weight_only_note(gpu, only, card.profile.name))
    if card.software.caveat is not None:
        warnings.append(card.software.caveat)
    warnings.extend(card.software.framework_warnings)
    weights_note = dict(o.weight_notes).get(shape.weight_precision)
    if weights_note is not None:
        warnings.append(weights_note)
    weights_caveat = dict(o.weight_caveats).get(shape.weight_precision)
    if weights_caveat is not None:
        warnings.append(weights_caveat)
    status = "experimental" if weights_caveat is not None else card.software.status
    basis = perf.llm_basis(perf.efficiencies(gpu, ctx.calibration), res.compute_precision)
    spec = work.serving
    asked = (
        spec.requests_per_s * max(1, spec.output_tokens)
        if spec.requests_per_s is not None
        else None
    )
    served = Served(
        res, runtime, priced, ok, tuple(misses), tuple(warnings), basis, asked,
        spec.concurrent_requests,
        weights_run_as=dict(o.weights_run_as).get(shape.weight_precision),
    )  # fmt: skip
    return settle(
        config,
        ctx,
        shape,
        served,
        reasons,
        backend,
        status,
        lambda: (work, _memory(res), o.usable_gb, _perf(res, runtime, backend, basis)),
    )


def settle(
    config: ev.Configuration,
    ctx: ev.Context,
    shape: sv.ServingConfig,
    served: Served,
    reasons: tuple[str | None, str | None],
    backend: str,
    status: str,
    shown: Callable[[], tuple[WorkloadSpec, MemoryBreakdown, float, perf.PerfEstimate]],
) -> ev.ConfigResult:
    """A served shape priced and judged as every task's row is: a miss of the targets
    excluded with what it reached, then the budget, the way it left out, the purchase and
    laptop caveats. One tail for a decoder's shapes and an encoder's (serving_encoder_step);
    ``shown``: the row's job, memory, usable GiB and estimate, worked out only for a shape
    that is kept."""
    gpu = config.gpu
    priced = served.price
    cost = cost_of(gpu, served.result, priced)
    if not served.meets:
        what = "; ".join(served.misses) or "cannot carry the load"
        miss = ev.Exclusion("misses_targets", f"{shape_words(shape)}: {what}")
        return ev.ConfigResult(
            config, miss, backend=backend, cost=cost, serving=served, framework_status=status
        )
    acq, excl = ev.budget(cost, ctx.limits, *reasons, gpus=config.num_gpus)
    if ctx.apply_filters and excl is not None:
        return ev.ConfigResult(config, excl, backend=backend)
    if acq is not None and acq != ctx.limits.acquisition:
        served = dataclasses.replace(served, price=priced.narrowed(acq))
    acquired = acq or ctx.limits.acquisition
    pricing = priced.pricing
    # a way in the budget took out is shown with its price but not offered (evaluate.finish)
    out = ev.left_out(cost, ctx.limits, acquired, config.num_gpus) if acq is not None else None
    if out is not None:
        cost, pricing = ev.without_left_out(cost, pricing, out)
        # the row's offers and verdict are read from the served price (app/recommend/serving)
        served = dataclasses.replace(
            served, price=dataclasses.replace(served.price, pricing=pricing)
        )
    modes = ev.acquisition_modes(cost, acquired)
    caveats = compat.purchase_caveats(
        gpu, config.num_gpus, *modes, pricing.buy if pricing is not None else None
    )
    laptop = compat.laptop_caveat(gpu)  # bought or not: its maker's power limit
    warnings = served.warnings + caveats + ((laptop,) if laptop is not None else ())
    served = dataclasses.replace(served, caveats=caveats)
    work, memory, available_gb, estimate = shown()
    return ev.ConfigResult(
        config,
        None,
        work=work,
        backend=backend,
        memory=memory,
        available_gb=available_gb,
        perf=estimate,
        cost=cost,
        acquisition=acquired,
        warnings=warnings,
        pricing=pricing,
        serving=served,
        framework_status=status,
    )


def evaluate_card(
    planned: list[ev.Configuration],
    ctx: ev.Context,
    *,
    every: bool = True,
    known: Mapping[int, ev.ConfigResult] | None = None,
) -> list[ev.ConfigResult]:
    """A card's planned shapes evaluated: every one (``every``: each is an answer's row under
    ``group_by: config``), or those an objective can pick for the card's row
    (rank.serving_pick). ``known``: results the caller has, by index into ``planned``.

    For one group size and formats, more replicas cost no less per hour (instances are whole)
    and decode no slower (each carries less of the load). So cheapest and balanced pick the
    fewest replicas that meet the targets, or, at the same price, more; fastest the most the
    budget allows. Best value (output tokens per dollar) also solves the dearer counts that
    cost less per replica than the fewest that meet: a replica's output rate does not grow as
    its share of the load shrinks (fewer requests batched per step; a rate load's tokens are
    the load's), so r replicas produce at most r ÷ r₀ times what r₀ do, and only a lower
    price per replica (a larger instance cheaper per GPU) can buy more tokens per dollar (under
    a concurrency load: a rate load's tokens are the same at every count). The
    replica counts in between, picked by no objective, are skipped (they are only
    alternatives). A group none of whose counts meets the targets is evaluated whole (the
    card's closest miss is among them)."""
    known = known or {}
    if encoder_step.is_encoder_job(ctx.work):
        # an encoder's replica counts are one cheap solve each: all evaluated
        return [known.get(i) or encoder_step.evaluate(c, ctx) for i, c in enumerate(planned)]
    # each shape's terms once for all its replica counts (``shape_terms``)
    shared: dict[tuple[object, ...], sv.ShapeTerms | None] = {}

    def run(c: ev.Configuration) -> ev.ConfigResult:
        assert c.shape is not None
        sh = c.shape
        key = (sh.gpus_per_replica, sh.weight_precision, sh.kv_precision, sh.runtime)
        if key not in shared:
            shared[key] = shape_terms(c, ctx)
        return evaluate(c, ctx, shared[key])

    if every:
        return [known.get(i) or run(c) for i, c in enumerate(planned)]
    # a rate load's tokens are the same for every count: its best value is its cheapest
    serving = ctx.work.serving
    by_value = ctx.limits.objective == "best_value" and (
        serving is None or serving.requests_per_s is None
    )
    groups: dict[tuple[object, ...], list[int]] = {}
    hours: list[Price] = []
    for i, c in enumerate(planned):
        assert c.shape is not None
        sh = c.shape
        groups.setdefault((sh.gpus_per_replica, sh.weight_precision, sh.kv_precision), []).append(i)
        hours.append(price(c.gpu, sh.gpus_per_replica, sh.replicas, ctx))
    out: list[ev.ConfigResult | None] = [None] * len(planned)
    for idxs in groups.values():
        top = _most_within_budget(idxs, [hours[i] for i in idxs], ctx)
        base: float | None = None
        per_replica = math.inf  # the fewest that meet: $/h per replica
        met = False
        for i in idxs:
            priced = hours[i]
            hour = priced.usd_per_hour
            if (
                met
                and (base is None or hour != base)
                and i != top
                and not (
                    by_value and hour is not None and hour / _replicas(planned[i]) < per_replica
                )
            ):
                continue  # dearer than the fewest that meet (unpriced: no price to tie)
            r = out[i] = known.get(i) or run(planned[i])
            if met:
                continue
            if r.exclusion is not None and r.exclusion.code in costs.PRICE_EXCLUSIONS:
                break  # it met the targets; every larger count costs no less
            # a count that meets the targets with requests waiting for a slot is not the
            # fewest that carry the load: more replicas may hold them all (rank.serving_pick)
            if r.ok and not (r.serving is not None and r.serving.result.saturated):
                met, base = True, hour
                if hour is not None:
                    per_replica = hour / _replicas(planned[i])
    return [r for r in out if r is not None]


def _replicas(c: ev.Configuration) -> int:
    assert c.shape is not None
    return c.shape.replicas


def _most_within_budget(idxs: list[int], hours: list[Price], ctx: ev.Context) -> int:
    """The most replicas of a group whose price alone passes the request's budget (the last
    count when none does or no budget is set): the fastest the budget allows."""
    if not (ctx.apply_filters and ctx.limits.needs_price):
        return idxs[-1]
    for i, p in zip(reversed(idxs), reversed(hours), strict=True):
        reasons = (p.pricing.rent_reason, p.pricing.buy_reason) if p.pricing else (None, None)
        if (
            ev.budget(ev.PriceOnly(p.purchase_usd, p.rent_usd_per_hour), ctx.limits, *reasons)[1]
            is None
        ):
            return i
    return idxs[-1]


def card_exclusion(
    results: list[ev.ConfigResult], ctx: ev.Context
) -> tuple[ev.Exclusion, ev.ConfigResult | None]:
    """Why no shape of a card serves the load, and, when it is the targets, the card's
    closest miss (an answer with no row shows it). A price that rules out a shape that meets
    the targets is the reason (the fewest GPUs' first, as every task says it); else
    the closest miss (``closest_first``: the nearest the targets, or, where none carries the
    load, the most capacity per GPU), with how many replicas of it would carry the load; else
    the fewest GPUs' reason."""
    priced_out = [r for r in results if r.exclusion and r.exclusion.code in costs.PRICE_EXCLUSIONS]
    missed = [r for r in results if r.serving is not None and not r.ok]
    if missed and not priced_out:
        assert ctx.work.serving is not None
        near = closest_first(missed, ctx.work.serving)[0]
        assert near.serving is not None
        c = near.serving.result.config
        what = "; ".join(near.serving.misses) or "cannot carry the load"
        if math.isinf(miss_size(near.serving.result, targets_of(ctx.work.serving))):
            # every such card's words are the same; its shape and reach are its detail
            why = ev.Exclusion(
                "misses_targets",
                f"best within {ctx.limits.max_gpus} GPUs: {what}",
                f"closest: {shape_words(c)}{_scale_out(near, ctx)}",
            )
            return why, dataclasses.replace(near, exclusion=why)
        why = ev.Exclusion(
            "misses_targets", f"best within {ctx.limits.max_gpus} GPUs ({shape_words(c)}): {what}"
        )
        return why, dataclasses.replace(near, exclusion=why)
    first = min(priced_out or results, key=lambda r: r.num_gpus).exclusion
    assert first is not None
    return first, None


def _memory(r: sv.ServingResult) -> MemoryBreakdown:
    """Per GPU of one replica: the weights, the runtime's KV pool, workspace and framework."""
    return MemoryBreakdown(
        weights=r.weights_gb_per_gpu,
        kv_cache=r.kv_pool_gb_per_gpu,
        workspace=r.activations_gb_per_gpu,
        framework=r.framework_gb_per_gpu,
        num_gpus=r.config.gpus_per_replica,
    )


def _perf(
    r: sv.ServingResult, rt: sv.RuntimeProfile, backend: str, basis: str = ""
) -> perf.PerfEstimate:
    """The shape at the load as the ranking reads an estimate: output tokens per second over
    every GPU of every replica, one step an inter-token latency; ``basis``: what its GEMM
    efficiency rests on (``perf.llm_basis``)."""
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
        efficiency_basis=basis,
        ttft_ms=r.ttft_ms,
        ms_per_token=r.itl_ms,
        runtime=rt.name,
        backend=backend,
    )


def closest_first(missed: list[ev.ConfigResult], spec: ServingSpec) -> list[ev.ConfigResult]:
    """The cards' near misses ("misses_targets" results), the nearest first (the worst ratio
    to a target), fewer GPUs first among equals. Shapes that cannot carry the load have no
    ratio: the most output tokens/s at saturation per GPU first (the shape whose replicas
    carry it on the fewest GPUs: a 16-bit 70B model's TP2 pair of H100s keeps ~11 GB of KV
    after its 141 GB of weights, a TP4 group over ten times that), then the most GPUs (the most
    capacity)."""
    targets = targets_of(spec)

    def key(r: ev.ConfigResult) -> tuple[float, float, int]:
        assert r.serving is not None
        res = r.serving.result
        size = miss_size(res, targets)
        if math.isinf(size):
            # 6 significant digits: replicas of one shape share a per-GPU rate but for the
            # solve's last bits, which must not break the tie the GPU count breaks
            per_gpu = float(f"{res.max_output_tokens_per_s / max(1, res.total_gpus):.6g}")
            return size, -per_gpu, -res.total_gpus
        return size, 0.0, res.total_gpus

    return sorted((r for r in missed if r.serving is not None), key=key)


def replicas_needed(res: sv.ServingResult, spec: ServingSpec) -> int | None:
    """How many replicas of ``res``'s shape carry the asked arrival rate within the share of
    capacity plans are sized to (sv.replicas_for); None for a closed loop of clients or a shape
    with no capacity."""
    rps = spec.requests_per_s
    if rps is None or res.max_output_tokens_per_s <= 0.0 or spec.output_tokens <= 0:
        return None
    per_replica = res.max_output_tokens_per_s / spec.output_tokens / max(1, res.config.replicas)
    return sv.replicas_for(rps, per_replica)


def _scale_out(near: ev.ConfigResult, ctx: ev.Context) -> str:
    """For a rate load no shape within max_gpus carries: how far the closest gets, how many
    replicas of it carry the load within the share of capacity plans are sized to
    (sv.NEAR_CAPACITY), and, where one request per replica meets the targets (more replicas
    would help), the max_gpus that lets the planner try them."""
    spec = ctx.work.serving
    assert near.serving is not None and spec is not None
    res = near.serving.result
    rps, c = spec.requests_per_s, res.config
    full = replicas_needed(res, spec)
    if rps is None or full is None:
        return ""
    reach = res.max_output_tokens_per_s / spec.output_tokens  # requests/s at saturation
    g = c.gpus_per_replica
    said = (
        f" ({reach:.3g} of {rps:g} requests/s at saturation; {full} replicas of {g} "
        f"GPU{'s' if g > 1 else ''} carry it at {100 * sv.NEAR_CAPACITY:.0f} % of theirs, "
        f"{full * g} GPUs"
    )
    if full * g > ctx.limits.max_gpus and one_request_meets(
        near.config.gpu, near.serving, spec, ctx.work.model
    ):
        said += f": raise constraints.max_gpus to {full * g} or more"
    return said + ")"


def with_curve(gpu: GpuSpec, served: Served, ctx: ev.Context, curve: bool = True) -> Served:
    """The same shape evaluated again with its throughput at saturation and (``curve``) its
    throughput-latency curve, for the rows shown (the ranking compares shapes at the load)."""
    assert ctx.work.serving is not None
    if served.encoder is not None:
        # an encoder's shape is priced at the load already: only its curve is added
        return encoder_step.with_curve(gpu, served, ctx) if curve else served
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
        with_curve=curve,
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

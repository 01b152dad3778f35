"""One evaluation per configuration.

A *configuration* is one way to run the job: a GPU model × a count × (optionally) an offer
that prices it × the precision asked for × a runtime. ``evaluate`` turns one configuration
and the request's shared context into one result: memory per GPU, time, cost,
software support, scaling, and, when the configuration cannot run the job, the reason.

Everything here is pure and cheap; the recommend service builds one ``Context`` per request,
asks ``plan`` which configurations of each GPU are worth evaluating, and calls ``evaluate``
once for each of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, NamedTuple

from app.domain import (
    compat,
    efficiency,
    llm_step,
    megatron,
    perf,
    pipeline_offload,
    serving_step,
    topology,
)
from app.domain import cost as costs
from app.domain.calibration import Calibration
from app.domain.figures import duration, limit_duration
from app.domain.gpu import GpuSpec, Price
from app.domain.megatron import MegatronLayout
from app.domain.parallelism import cpu_offload
from app.domain.serving import ServingConfig
from app.domain.units import gib, vram
from app.domain.workload import (
    FLUX_FP16_NOTE,
    MemoryBreakdown,
    WorkloadSpec,
    fp16_clipped,
    memory_breakdown,
    on_backend,
    pipeline_frozen_params,
)
from app.vocab import (
    FORMAT_ONLY_PRECISIONS,
    MOST_GPUS,
    SINGLE_DEVICE_SEGMENTS,
    TORCH_PROGRAM_RUNTIMES,
    backend_name,
    framework_name,
    runtime_name,
)

# tensor/data parallel groups in practice are powers of two, up to the most GPUs a job may
# ask for (vocab.MOST_GPUS: 1, 2, 4, … 512)
COUNTS = tuple(1 << i for i in range(MOST_GPUS.bit_length()))

# Memory savers, in the order a practitioner reaches for them, with what each costs:
# activation checkpointing recomputes the forward in backward (~33 % more compute: one extra
# forward of three passes; Chen et al. 2016), bitsandbytes 8-bit AdamW keeps 2 bytes of state per
# parameter instead of 8 at no measurable speed cost (Dettmers et al. 2022), and a smaller
# micro-batch with gradient accumulation keeps the global batch (the maths is the same) at the
# price of smaller kernels and more per-step overhead, which the roofline already counts.
# A diffusion fine-tune may also cache its text encoders' outputs and its latents once and free
# those frozen modules (``cache_encodings``): the update is the same, and the trainers people run
# for SDXL and FLUX LoRAs do it (kohya-ss sd-scripts' docs/flux_train_network.md: its example
# command passes --cache_text_encoder_outputs --cache_latents, its settings go down to 8 GB
# cards; SimpleTuner's FLUX quickstart caches text embeds and latents and fits a rank-16 NF4 LoRA
# in a bit more than 9 GB); it costs the text encoders' training and per-step caption or crop
# augmentation, so it is tried after checkpointing, only where the job needs it.
SAVERS = ("checkpointing", "cache_encodings", "adam8bit", "micro_batch")
SAVER_LABELS = {
    "checkpointing": "gradient checkpointing",
    "cache_encodings": "cached text-encoder outputs and latents",
    "adam8bit": "8-bit AdamW",
    "micro_batch": "micro-batches (gradient accumulation)",
}


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class Offer:
    """A priced way to get ``gpus`` of one GPU model (a cloud instance or a shop listing).

    Filled by the offers feature; without one a configuration is priced from the catalog's
    per-GPU street and cloud prices.
    """

    provider: str
    name: str
    gpus: int
    hourly_usd: float | None = None
    purchase_usd: float | None = None
    as_of: str | None = None
    source: str | None = None


# Configurations and their results are built thousands of times per request and never
# shared between requests, so they are plain slotted dataclasses: a frozen one costs four
# times as much to build (object.__setattr__ per field). Nothing changes them once built.
@dataclass(slots=True)
class Configuration:
    gpu: GpuSpec
    num_gpus: int = 1
    # Memory savers the engine added to the job as asked (SAVERS), and the micro-batch that
    # runs the global batch as gradient-accumulation steps (None: the whole batch at once).
    savers: tuple[str, ...] = ()
    micro_batch: int | None = None
    # The software gate and job variant, when ``plan`` made the configuration: it resolved
    # them for the request's context, which is the one every configuration it makes is then
    # bounded, admitted and evaluated under (``_variant``); None: resolved when first needed.
    variant: tuple[Gate, JobKey] | None = field(default=None, compare=False, repr=False)
    precision: str | None = None  # None: the workload's precision
    runtime: str | None = None  # None: the workload's / framework's default runtime
    offer: Offer | None = None
    # task 'serving': the shape (GPUs per replica × replicas, weight and KV formats) that
    # serving_step.plan made, ``num_gpus`` GPUs in all
    shape: ServingConfig | None = None
    # LLM inference asked as copies (Context.copies): ``num_gpus`` GPUs as this many copies of
    # num_gpus ÷ copies GPUs side by side, each on its share of the batch (``copies_of``);
    # 1: one replica over them all
    copies: int = 1


@dataclass(frozen=True, slots=True)
class Limits:
    """The request's filters and budget, as the engine needs them."""

    objective: str = "balanced"
    acquisition: str = "either"
    max_purchase_usd: float | None = None
    max_hourly_usd: float | None = None
    max_job_cost_usd: float | None = None
    electricity_usd_per_kwh: float | None = None
    vendors: tuple[str, ...] | None = None
    segments: tuple[str, ...] | None = None
    max_gpus: int = 8
    exact_gpus: int | None = None  # "exactly N": only that count is considered
    # The deadline: a configuration whose job takes longer is excluded (jobs of unknown
    # length are not judged on it).
    max_hours: float | None = None
    # Only rows with a price, whatever the objective: a re-rank whose top row is named as
    # something to buy or rent (what would meet a deadline) must name one that can be.
    priced_only: bool = False

    # Cost objectives and budgets need a price, and so does 'fastest' asked to rent or to
    # buy (the fastest card one can rent: GB200s nobody rents had headed such answers); under
    # the others a GPU without one is still ranked (price_known false). Worked out once: read
    # for every configuration.
    needs_price: bool = field(default=False, init=False)
    # Whether a finished configuration's costs can exclude it or narrow its way in: a budget
    # (``budget``, ``left_out``) or a deadline; without either, every one passes as asked.
    # Worked out once: read for every configuration finished (~40 an open question).
    judges_costs: bool = field(default=False, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        needs = (
            self.priced_only
            or self.objective in ("best_value", "cheapest")
            or (self.objective == "fastest" and self.acquisition in ("rent", "buy"))
            or self.max_purchase_usd is not None
            or self.max_hourly_usd is not None
            or self.max_job_cost_usd is not None
        )
        object.__setattr__(self, "needs_price", needs)
        object.__setattr__(self, "judges_costs", needs or self.max_hours is not None)
        # "exactly N" names the count, so it is not held to "most GPUs" (the form always sends
        # that field, at its default of 8, beside an exact count of 16)
        if self.exact_gpus is not None and self.exact_gpus > self.max_gpus:
            object.__setattr__(self, "max_gpus", self.exact_gpus)


@dataclass(frozen=True)
class Context:
    """What every configuration of one request shares. ``memo`` keeps, for this request,
    the job as each (precision, savers, micro-batch, runtime) runs it and its memory per
    (count, backend, attention kernels): the same for every GPU with that backend, so a
    request computes a few dozen breakdowns instead of several per GPU. Software gating is
    memoised across requests on the rules (``gate``)."""

    work: WorkloadSpec
    rules: compat.Rules
    framework: str = "pytorch"
    limits: Limits = field(default_factory=Limits)
    calibration: Calibration | None = None
    apply_filters: bool = True
    # Savers the engine may add when they let fewer cards hold the job: the ones the user did
    # not set explicitly (the service decides from the request).
    savers_allowed: frozenset[str] = frozenset()
    # The offers feature: every GPU's cloud and purchase offers, which of them the user
    # accepts, and the usage a buy-versus-rent verdict assumes. None: catalog prices.
    offers: Mapping[str, costs.GpuOffers] | None = None
    rental: costs.RentalPolicy = field(default_factory=costs.RentalPolicy)
    usage: costs.Usage = field(default_factory=costs.Usage)
    purchase_basis: str = "auto"  # vocab.PURCHASE_BASES
    # Task 'serving': what the request pins beyond the workload (serving_step.Ask)
    serving: serving_step.Ask = field(default_factory=lambda: serving_step.Ask())
    # workload.extra_gpus 'copies': LLM inference runs a count beyond the fewest GPUs that hold
    # it as copies side by side (``copies_of``); False: one replica over them all (the runtime's
    # span), the default
    copies: bool = False
    memo: dict[tuple[object, ...], Any] = field(default_factory=dict, compare=False, repr=False)


# ---------------------------------------------------------------- outputs


@dataclass(frozen=True, slots=True)
class Exclusion:
    code: str
    reason: str
    # the card's own figures behind a reason many cards share (a serving card's closest shape
    # and how far it gets): the reason stays the same words for all of them, so a page lists
    # them as one group, and the API gives each card's detail beside it
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Gate:
    """Software gating for one (GPU, framework, precision, runtime)."""

    exclusion: Exclusion | None
    backend: str | None = None
    status: str = "supported"
    precision: str | None = None  # what the job really runs at
    warnings: tuple[str, ...] = ()
    flash_attention: bool = False
    # What plan() asks of the backend, answered with the gate: whether the rules let it span
    # several GPUs (None: no rule) and whether bitsandbytes' 8-bit AdamW works as documented.
    multi_gpu: bool | None = None
    adam8bit: bool = True
    derived_peak: bool = False  # the peak it runs at comes from fp32 × the tensor ratio
    # compat.resolve_precision's fallback warning among ``warnings``: reworded once the
    # estimate shows the math the row really runs (``fp32_speed``)
    precision_note: str | None = None
    asked: str | None = None  # the precision the gate was asked for (``precision``: what runs)


@dataclass(slots=True)  # not frozen, for speed (see Configuration)
class ConfigResult:
    config: Configuration
    exclusion: Exclusion | None = None
    work: WorkloadSpec | None = None  # at the precision it really runs
    backend: str | None = None
    framework_status: str = "supported"
    memory: MemoryBreakdown | None = None
    available_gb: float = 0.0
    perf: perf.PerfEstimate | None = None
    cost: costs.CostEstimate | None = None
    acquisition: str = "either"  # narrowed to what passed the budget
    warnings: tuple[str, ...] = ()
    derived_peak: bool = False
    meets_latency: bool | None = None
    accumulation_steps: int = 1
    pricing: costs.Pricing | None = None  # the offers that price it, when offers are loaded
    # task 'serving': the shape the serving planner found (also on a "misses_targets" result)
    serving: serving_step.Served | None = None

    @property
    def ok(self) -> bool:
        return self.exclusion is None

    @property
    def gpu(self) -> GpuSpec:
        return self.config.gpu

    @property
    def num_gpus(self) -> int:
        return self.config.num_gpus


# ---------------------------------------------------------------- pieces


def usable_gb(gpu: GpuSpec, work: WorkloadSpec | None = None, num_gpus: int = 1) -> float:
    """What the job's tensors may take of the device per GPU: ``claimed_gb`` less
    ``startup_reserve_gb``, the activations the runtime reserves when it sizes its KV pool at
    startup (taken here where the GPU is known, as serving.memory_plan takes it; the step's own
    activations live inside it: workload.memory_breakdown leaves them out)."""
    return claimed_gb(gpu, work, num_gpus) - startup_reserve_gb(gpu, work, num_gpus)


def claimed_gb(gpu: GpuSpec, work: WorkloadSpec | None = None, num_gpus: int = 1) -> float:
    """The device's memory (what CUDA reports, else the vendor's GiB: efficiency.usable_gb)
    less what the OS (unified memory) keeps back, times the share an inference runtime claims
    of the device at ``num_gpus`` tensor-parallel GPUs (vLLM's gpu_memory_utilization, SGLang's
    mem_fraction_static from the GPU's memory and tp size): the serving plan's rule
    (efficiency.usable_gb, efficiency.device_share), the ``available_gb`` a row shows."""
    share = 1.0
    if work is not None and not work.training:
        share = efficiency.device_share(work.efficiency, work.runtime, max(1, num_gpus), gpu)
    return efficiency.usable_gb(gpu, share)


def startup_reserve_gb(gpu: GpuSpec, work: WorkloadSpec | None, num_gpus: int = 1) -> float:
    """Per GPU, the activations an inference runtime reserves at startup (efficiency.
    startup_activations_gb: vLLM's sampler over the --max-num-seqs a batch of b sequences
    deploys, TensorRT-LLM's warm-up forward of max_num_tokens, none inside SGLang's claim),
    shown as the row's workspace, as a serving row shows it; 0 for training and other runtimes."""
    if work is None or work.training:
        return 0.0
    if not efficiency.has_startup_rule(efficiency.serving_spec(work.efficiency, work.runtime)):
        return 0.0  # runtime_startup_activations_gb's None, without the model's widths
    m = work.model
    h = float(m.hidden_size or 0)
    return (
        efficiency.runtime_startup_activations_gb(
            work.efficiency,
            work.runtime,
            gpu,
            vocab=m.vocab_size,
            hidden=h,
            intermediate=float(m.intermediate_size or 4 * h),
            tp=max(1, num_gpus),
            # a batch of b sequences is deployed at --max-num-seqs b where the default
            # would reserve more (vLLM's sampler rows), as a serving plan deploys the
            # rows its pool holds (serving.planned_runtime): one rule for both tasks
            rows=work.batch_size,
        )
        or 0.0
    )


def shown_memory(
    gpu: GpuSpec,
    work: WorkloadSpec,
    need: float | None,
    num_gpus: int = 1,
    *,
    claim: float | None = None,
    reserve: float | None = None,
) -> tuple[float, float]:
    """(need, usable) per GPU, in 10^9 bytes, as every sentence and row gives them: the one
    usable figure is what the runtime claims (``claimed_gb``, a row's ``available_gb``), and
    the runtime's startup reserve (``startup_reserve_gb``) is in the need, as a row counts it
    in its workspace. ``usable_gb`` (the claim less that reserve) is what fit checks compare
    ``need`` with, never a figure shown: "10.5 GiB usable" in a refusal beside a row's 10.6 on
    an RTX 3060 12GB under vLLM had read as two rules. ``claim``, ``reserve``: the two
    figures where the caller has worked them out (``too_big`` reads both), else worked out here."""
    if reserve is None:
        reserve = startup_reserve_gb(gpu, work, num_gpus)
    if claim is None:
        claim = claimed_gb(gpu, work, num_gpus)
    return (need or 0.0) + reserve, claim


def _with_reserve(
    gpu: GpuSpec, work: WorkloadSpec, mem: MemoryBreakdown, avail: float, reserve: float
) -> tuple[MemoryBreakdown, float]:
    """The row's memory as a serving row gives it: the runtime's startup ``reserve`` (GB per
    GPU, ``startup_reserve_gb``) counted in its workspace and named, beside the memory the
    runtime claims (``avail`` is usable_gb, the claim less the reserve: the headroom stays the
    fit check's)."""
    if reserve <= 0.0:
        return mem, avail
    note = efficiency.runtime_reserve_note(
        work.efficiency, work.runtime, gpu, vram(reserve), work.batch_size
    )
    notes = mem.notes + ((note,) if note else ())
    return replace(mem, workspace=mem.workspace + reserve, notes=notes), avail + reserve


def max_devices(gpu: GpuSpec, backend: str | None, max_gpus: int) -> int:
    single = gpu.segment in SINGLE_DEVICE_SEGMENTS or backend == "mps"
    return 1 if single else max_gpus


def min_gpus(
    work: WorkloadSpec,
    gpu: GpuSpec,
    backend: str,
    flash: bool,
    max_n: int,
    *,
    one: MemoryBreakdown | None = None,
    avail: float | None = None,
) -> tuple[int | None, float]:
    """The fewest GPUs (a power of two, ≤ ``max_n``) that hold the job, and its size on one
    (``one`` and ``avail``: that size and the usable memory, when the caller has them)."""
    if avail is None:
        avail = usable_gb(gpu, work)
    if one is None:
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


def deadline(hours: float | None, limits: Limits) -> Exclusion | None:
    """The deadline's verdict on a job that takes ``hours`` (None: its length is unknown)."""
    if limits.max_hours is None or hours is None or hours <= limits.max_hours:
        return None
    return Exclusion(
        "misses_deadline",
        f"takes {hours_text(hours)}, more than the {limit_duration(limits.max_hours)} asked",
    )


def hours_text(h: float) -> str:
    """A duration as people say it (figures.duration: 40 s, 45 min, 29 h, 46.2 days; a
    deadline under a minute once read "0 min")."""
    return duration(h)


def time_to_finish_h(work: WorkloadSpec, throughput: float) -> float | None:
    if work.dataset_samples is None or throughput <= 0:
        return None
    samples = work.dataset_samples * (work.epochs or 1.0)
    per_sample = work.output_tokens if work.is_llm_inference else 1
    return samples * per_sample / throughput / 3600.0


_PRICE_WORDS = {
    "buy": "purchase price",
    "rent": "rental price",
    "either": "purchase or rental price",
}


class PriceOnly(NamedTuple):
    """What the budget reads before there is an estimate: the prices alone."""

    purchase_usd: float | None
    hourly_usd: float | None
    time_to_finish_h: None = None


def budget(
    c: costs.CostEstimate | PriceOnly,
    limits: Limits,
    rent_reason: str | None = None,
    buy_reason: str | None = None,
    gpus: int = 1,
) -> tuple[str | None, Exclusion | None]:
    """Which acquisition modes pass the budget; an exclusion when none does, naming the GPUs a
    price covers (8 GTX 1080 Ti at $3,192 had read as one card at that price)."""
    acq = limits.acquisition
    if not limits.needs_price:
        return acq, None
    modes = ["buy", "rent"] if acq == "either" else [acq]
    ok: list[str] = []
    over: list[str] = []
    for mode in modes:
        price = c.purchase_usd if mode == "buy" else c.hourly_usd
        limit = limits.max_purchase_usd if mode == "buy" else limits.max_hourly_usd
        if price is None:
            continue
        if limit is not None and price > limit:
            over.append(_over_words(mode, price, limit, gpus))
            continue
        if limits.max_job_cost_usd is not None and isinstance(c, costs.CostEstimate):
            mode_job = costs.job_cost(c, mode)  # None while the job's length is unknown
            if mode_job is not None and mode_job > limits.max_job_cost_usd:
                over.append(f"job cost ({mode}) ${mode_job:,.0f} > ${limits.max_job_cost_usd:,.0f}")
                continue
            if mode_job is None and mode == "buy" and price > limits.max_job_cost_usd:
                over.append(_purchase_over_job(price, limits.max_job_cost_usd))
                continue
        ok.append(mode)
    if ok:
        return ("either" if len(ok) == 2 else ok[0]), None
    if over:
        return None, Exclusion("over_budget", "; ".join(over))
    return None, _no_price(acq, rent_reason, buy_reason)


def _over_words(mode: str, price: float, limit: float, gpus: int) -> str:
    """A price over its limit in words: a purchase in whole dollars, an hour in cents, and the
    GPUs it buys or rents where there are several."""
    of = f" of {gpus} GPUs" if gpus > 1 else ""
    if mode == "buy":
        return f"purchase{of} ${price:,.0f} > ${limit:,.0f}"
    return f"rent{of} ${price:,.2f}/h > ${limit:,.2f}/h"


def left_out(
    c: costs.CostEstimate, limits: Limits, acquired: str, gpus: int = 1
) -> tuple[str, str] | None:
    """Under acquisition 'either' that the budget narrowed to ``acquired`` ("buy" | "rent"):
    the way in it took out and why, in words a row shows beside that way's price; None where
    nothing priced was taken out."""
    if limits.acquisition != "either" or acquired not in ("buy", "rent"):
        return None
    mode = "rent" if acquired == "buy" else "buy"
    price = c.purchase_usd if mode == "buy" else c.hourly_usd
    if price is None:
        return None
    limit = limits.max_purchase_usd if mode == "buy" else limits.max_hourly_usd
    if limit is not None and price > limit:
        if mode == "buy":
            what = f"the {gpus} cards" if gpus > 1 else "the card"
            return (
                mode,
                f"buying {what} costs ${price:,.0f}, over the ${limit:,.0f} purchase budget",
            )
        return mode, f"renting costs ${price:,.2f}/h, over the ${limit:,.2f}/h budget"
    most = limits.max_job_cost_usd
    job = costs.job_cost(c, mode)
    if most is not None and job is not None and job > most:
        way = "bought" if mode == "buy" else "rented"
        return mode, f"the job {way} costs ${job:,.0f}, over the ${most:,.0f} job budget"
    if most is not None and job is None and mode == "buy" and price > most:
        floor = f"the job bought costs at least ${price:,.0f}"
        return mode, f"{floor}, over the ${most:,.0f} job budget"
    return None


def _purchase_over_job(price: float, most: float) -> str:
    """A bought row's job budget broken by its purchase alone. A bought job costs the whole
    purchase plus its electricity (``costs.job_cost``); where the electricity is unknown (no
    power figure: Apple's machines) or the job's length is, the purchase is still a floor, so
    a $3,499 Mac had passed a $10 job budget and headed the answer."""
    return f"job cost (buy) at least ${price:,.0f}, the purchase alone > ${most:,.0f}"


def without_left_out(
    c: costs.CostEstimate, pricing: costs.Pricing | None, out: tuple[str, str]
) -> tuple[costs.CostEstimate, costs.Pricing | None]:
    """The row's costs and offers once the budget took a way in out (``left_out``): no
    break-even between a way it offers and one it does not, and the offers saying which and
    why, so the verdict and the offer lines name the way the row offers."""
    c = replace(c, break_even_hours=None)
    if pricing is not None:
        pricing = replace(pricing, left_out=out[0], left_out_why=out[1])
    return c, pricing


def acquisition_modes(c: costs.CostEstimate, acquisition: str) -> tuple[bool, bool]:
    """(buys, rents): whether a row under ``acquisition`` offers buying the cards (a purchase
    price) and renting them (an hourly price)."""
    buys = acquisition in ("buy", "either") and c.purchase_usd is not None
    rents = acquisition in ("rent", "either") and c.hourly_usd is not None
    return buys, rents


def _no_price(acq: str, rent_reason: str | None, buy_reason: str | None) -> Exclusion:
    """The same few reasons for every card without a price: built once each."""
    key = (acq, rent_reason, buy_reason)
    hit = _NO_PRICE.get(key)
    if hit is None:
        reasons = [
            r
            for r, mode in ((buy_reason, "buy"), (rent_reason, "rent"))
            if r and acq in (mode, "either")
        ]
        why = f" ({'; '.join(reasons)})" if reasons else ""
        # a count no one instance holds has offers, just none that big: its own code, so an
        # answer's census does not read it as "no price"
        small = acq == "rent" and (rent_reason or "").startswith(costs.INSTANCE_CAP_WORDS)
        hit = (
            Exclusion("instance_too_small", f"not rentable at this count{why}")
            if small
            else Exclusion(
                "no_price",
                f"no {_PRICE_WORDS[acq]} known{why}, and the objective or budget needs one",
            )
        )
        if len(_NO_PRICE) >= 1000:
            _NO_PRICE.clear()
        _NO_PRICE[key] = hit
    return hit


_NO_PRICE: dict[tuple[str, str | None, str | None], Exclusion] = {}


def filtered_out(gpu: GpuSpec, limits: Limits) -> Exclusion | None:
    if limits.vendors and gpu.vendor not in limits.vendors:
        return Exclusion("filtered_out", f"vendor {gpu.vendor} not in {', '.join(limits.vendors)}")
    if limits.segments and gpu.segment not in limits.segments:
        return Exclusion(
            "filtered_out", f"segment {gpu.segment} not in {', '.join(limits.segments)}"
        )
    return None


def gate(gpu: GpuSpec, precision: str, runtime: str | None, ctx: Context) -> Gate:
    """Framework, backend, precision and attention kernels for this GPU: the same answer for
    every count, offer and request, so memoised on the rules (compat.Rules._memo)."""
    work = ctx.work
    m = work.model
    # FLUX.1's DiT and SDXL's UNet share the family, not the fp8 answer (ModelSpec.conv_layers);
    # the weight-only FP8 path reads the task and whether the model routes experts
    # (_weight_only), the weights rule the format the job names (_weights_gate): an NF4 request
    # on a Mac had left its gate for a later AWQ one
    key = (
        "gate",
        gpu,
        ctx.framework,
        precision,
        runtime,
        m.family,
        m.conv_layers,
        # FLUX's fp16 caveat (fp16_clipped) is the model's, not its family's
        fp16_clipped(m),
        work.is_llm_inference,
        (m.experts or 0) > 1,
        weights_format(work, precision),
        # llama.cpp pinned to its Vulkan build gates on other rules than its own backend's
        work.gpu_backend,
    )
    # typed names rather than cast(): these run several times per card, and cast is a call
    hit: Gate | None = ctx.rules._memo.get(key)
    if hit is not None:
        return hit
    out = _gate(gpu, precision, runtime, ctx)
    compat.remember(ctx.rules, key, out)
    return out


def _weight_only(gpu: GpuSpec, precision: str, runtime: str, ctx: Context) -> str | None:
    """ "FP4" or "FP8" where the job's ``precision`` runs on ``gpu`` only through the runtime's
    weight-only kernels (llm_step.fp4_weight_only / fp8_weight_only); None otherwise."""
    table = ctx.work.efficiency
    if precision == "fp4":
        fp4_min = efficiency.fp4_weight_only_min_cc(table, runtime)
        archs = efficiency.fp4_weight_only_archs(table, runtime)
        return "FP4" if llm_step.fp4_weight_only(gpu, fp4_min, archs) else None
    if precision == "fp8" and ctx.work.is_llm_inference:
        fp8_min = efficiency.fp8_weight_only_min_cc(table, runtime)
        return "FP8" if llm_step.fp8_weight_only(gpu, ctx.work.model, fp8_min) else None
    return None


def _backend_support(gpu: GpuSpec, ctx: Context) -> compat.Support:
    """The backend the job runs on: the one it is pinned to (llama.cpp's Vulkan build, from
    the `runtime:llama.cpp-vulkan` rules, which name no framework) or the framework's own."""
    pinned = ctx.work.gpu_backend
    if pinned is None:
        return compat.framework_support(gpu, ctx.framework, ctx.rules)
    st = compat.llamacpp_vulkan_status(gpu, ctx.rules)
    if st is None or st.status == "unsupported":
        why = f": {st.note}" if st is not None and st.note else ""
        label = backend_name(pinned)
        said = f"llama.cpp's {label} build is not offered for {gpu.name}"
        return compat.Support(False, None, "unsupported", said + why)
    caveat = compat.vulkan_caveat(gpu)
    if st.status == "experimental":
        caveat = f"llama.cpp Vulkan is experimental here: {st.note}; {caveat}"
    return compat.Support(True, pinned, st.status, caveat=caveat)


def _gate(gpu: GpuSpec, precision: str, runtime: str | None, ctx: Context) -> Gate:
    support = _backend_support(gpu, ctx)
    if not support.ok or support.backend is None:
        out = Gate(
            Exclusion(
                "framework_unsupported",
                support.reason or f"no {framework_name(ctx.framework)} support",
            )
        )
    else:
        backend = support.backend
        resolved: str | None
        warn: str | None
        only = _weight_only(gpu, precision, runtime or "", ctx)
        note: str | None = None
        if only is not None:
            # the checkpoint's FP4 (FP8) weights stay so (serving's rule too): dequantised to
            # 16-bit in the runtime's weight-only kernels, not re-quantised
            resolved = precision
            warn = llm_step.weight_only_note(gpu, only, runtime or "the runtime")
        else:
            model = ctx.work.model
            resolved, warn = compat.resolve_precision(
                gpu,
                precision,
                ctx.rules,
                backend,
                family=model.family,
                convs=model.conv_layers,
                runtime=runtime,
            )
            # a fallback's words only ("no bf16 support; estimated at fp16"): a caveat on a
            # precision that runs as asked stays whatever the math
            note = warn if resolved != precision else None
        if resolved is None:
            out = Gate(
                Exclusion("precision_unsupported", f"{precision} is not supported on {gpu.name}"),
                backend=backend,
            )
        elif (rt := _runtime_gate(gpu, runtime, ctx, backend)) is not None and rt[0]:
            out = Gate(Exclusion("framework_unsupported", rt[0]), backend=backend)
        elif (wt := _weights_gate(gpu, runtime, resolved, ctx, backend)) is not None and wt[0]:
            out = Gate(Exclusion("runtime_unsupported", wt[0]), backend=backend)
        else:
            warnings: tuple[str, ...] = (warn,) if warn else ()
            if resolved == "fp16" and fp16_clipped(ctx.work.model):
                warnings += (FLUX_FP16_NOTE,)
            if rt is not None and rt[1]:
                warnings += (rt[1],)
            if wt is not None and wt[1]:
                warnings += (wt[1],)
            # the framework rule's status and caveat, where the runtime runs its programs
            # (PyTorch's Prototype XPU support is no llama.cpp row's caveat)
            said: tuple[str, ...]
            if ctx.work.gpu_backend is not None:
                # the pinned backend's own words (its matmul path, driver), not PyTorch's
                framework_status = support.status
                said = (support.caveat,) if support.caveat else ()
            else:
                framework_status, said = compat.framework_words(support, ctx.framework, runtime)
            warnings += said
            # ROCm PyTorch on Windows (the rocm_windows rules) is no caveat of the answer: the
            # question names no operating system, and Linux is ROCm's mature path. A row's tips
            # end with it for a reader on Windows (rank.windows_note).
            # the runtime's own status counts as the framework's does: a runtime the rules call
            # experimental here (vLLM on Intel XPU) ranks after supported software, as the
            # warning it carries says (it ranked first and said so)
            runtime_experimental = (rt is not None and rt[1] is not None) or (
                wt is not None and wt[1] is not None
            )
            out = Gate(
                None,
                backend=backend,
                status="experimental" if runtime_experimental else framework_status,
                precision=resolved,
                warnings=warnings,
                # FlashAttention-2, or a vendor's own fused attention of its kind (Gaudi's
                # FusedSDPA): the score matrix never goes through memory
                flash_attention=_supported(gpu, "flash_attention_2", ctx.rules, backend)
                or _supported(gpu, "fused_attention", ctx.rules, backend),
                multi_gpu=compat.has_feature(gpu, "multi_gpu", ctx.rules, backend),
                adam8bit=_documented(gpu, "bitsandbytes_8bit_optim", ctx.rules, backend),
                derived_peak=derived_peak(gpu, resolved),
                precision_note=note,
                asked=precision,
            )
    return out


def fp32_speed(gpu: GpuSpec, requested: str, stored: str, bound: str = "") -> str:
    """The words of a row that keeps its tensors in 16 bits (``stored``) but whose math the
    estimate runs at the FP32 rate (perf._half_peak: the GPU has no 16-bit math faster than its
    FP32): "estimated at fp16" had stood beside compute_precision fp32 on a Tesla P40, and a
    reader turning fp16 autocast on for speed gets none. ``bound``: what limits the row (an
    LLM's decode step's, where it has one). Where memory bandwidth does, the 16-bit tensors
    are half the bytes each step reads, which is what sets its time: "saves memory on it, not
    time" had led an M4 Max's bandwidth-bound Llama 3.1 8B decode under MLX (bf16 weights
    read at 410 GB/s, half fp32's bytes), a saving the estimate itself prices."""
    said = (
        f"{gpu.name} has no {requested} support, and no {stored} math faster than its FP32"
        if requested != stored
        else f"{gpu.name} has no {stored} math faster than its FP32"
    )
    # (a Pascal GP102/GP104 card, compute capability 6.1, runs fp16 arithmetic at 1/64 of its
    # FP32 rate: CUDA C++ Programming Guide, arithmetic instruction throughput)
    if bound == "memory bandwidth":
        return (
            f"{said}: its math is estimated at FP32 speed (fp32 math, {stored} storage); "
            f"{stored} still halves the bytes each step reads against fp32, and memory "
            "bandwidth sets this row's speed, so it saves time here as well as memory"
        )
    return (
        f"{said}: estimated at FP32 speed (fp32 math, {stored} storage); {stored} saves "
        "memory on it, not time"
    )


def _with_fp32_speed(
    warnings: tuple[str, ...], g: Gate, gpu: GpuSpec, mode: str, bound: str = ""
) -> tuple[str, ...]:
    """``warnings`` with the precision words following the math the estimate ran (``mode``,
    its compute_precision): where a 16-bit job runs at the FP32 rate, ``fp32_speed`` in place
    of the gate's precision note (or added, where it had none)."""
    stored = g.precision
    if mode != "fp32" or stored not in ("fp16", "bf16"):
        return warnings
    said = fp32_speed(gpu, g.asked or stored, stored, bound)
    if g.precision_note is not None and g.precision_note in warnings:
        return tuple(said if w == g.precision_note else w for w in warnings)
    return (said, *warnings)


def _documented(gpu: GpuSpec, feature: str, rules: compat.Rules, backend: str) -> bool:
    """No rule, or a rule that calls it supported (not experimental or unsupported)."""
    st = compat.feature_status(gpu, feature, rules, backend)
    return st is None or st.status == "supported"


def weights_format(work: WorkloadSpec, precision: str) -> str | None:
    """The weight format whose rules the gate reads beside its precision's: the one the job
    names (AWQ, GPTQ, NF4) where the gate is asked of the job's own precision."""
    return work.quantization if precision == work.precision else None


def _weights_gate(
    gpu: GpuSpec, runtime: str | None, precision: str, ctx: Context, backend: str
) -> tuple[str | None, str | None] | None:
    """(refusal, caveat) of the runtime's kernels for ``precision`` weights on this card
    (compat.weights_status: the rules serving reads too), None where no rule names them.
    vLLM's AWQ/GPTQ on an MI210 had been 'supported' under inference and refused under
    serving."""
    st = compat.weights_status(
        gpu, runtime, precision, ctx.rules, backend, weights_format(ctx.work, precision)
    )
    return weights_words(gpu, runtime, precision, st)


def weights_words(
    gpu: GpuSpec, runtime: str | None, precision: str, st: compat.FeatureStatus | None
) -> tuple[str | None, str | None] | None:
    """(refusal, caveat) in words of a weights rule's status (``_weights_gate``'s): one
    wording for inference and serving, whose Mac int4 rows had quoted GPTQ/AWQ with no caveat
    where inference's said bitsandbytes NF4 is experimental there."""
    if st is None or st.status == "supported":
        return None
    # the runtime in words ("vLLM", "llama.cpp"), its id stays in the row's fields
    name = runtime_name(runtime) if runtime else "the runtime"
    said = f"{name} {precision} weights on {gpu.name}: {st.note}" if st.note else None
    if st.status == "unsupported":
        return said or f"{name} does not run {precision} weights on {gpu.name}", None
    return None, said or f"{name} {precision} weights on {gpu.name} are experimental"


def _supported(gpu: GpuSpec, feature: str, rules: compat.Rules, backend: str) -> bool:
    """Counted in the estimate only when the rules call it supported (not experimental)."""
    st = compat.feature_status(gpu, feature, rules, backend)
    return st is not None and st.status == "supported"


def _runtime_gate(
    gpu: GpuSpec, runtime: str | None, ctx: Context, backend: str
) -> tuple[str | None, str | None] | None:
    """(why the runtime cannot run here, caveat) from the `runtime:<name>` rules."""
    if runtime is None:
        return None
    st = compat.runtime_status(gpu, runtime, ctx.rules, backend)
    if st is None or st.status == "supported":
        return None
    # in the forms' words: "vllm on rocm is experimental" had read as the request's ids
    name, on = runtime_name(runtime), backend_name(backend, runtime)
    if st.status == "unsupported":
        # a card outside every rule's hardware carries no note: its compute capability says why
        why = st.note or (
            f"compute capability {gpu.compute_capability}" if gpu.compute_capability else None
        )
        return f"{name} does not run on {gpu.name} ({on})" + (f": {why}" if why else ""), None
    return None, f"{name} on {on} is experimental" + (f": {st.note}" if st.note else "")


# The 16-bit tensor datapaths a precision's math may run on, in the order perf tries them
# (perf._half_peak: fp16 and bf16 fall back to each other where a peak is missing; weight-only int4
# dequantises to fp16; tf32 its own). int8 and fp8 may run natively or on either 16-bit path, so
# every 16-bit peak counts for them.
_DATAPATHS = {
    "fp16": ("fp16", "bf16"),
    "bf16": ("bf16", "fp16"),
    "int4": ("fp16", "bf16"),
    "tf32": ("tf32",),
}


def derived_peak(gpu: GpuSpec, precision: str) -> bool:
    """The 16-bit peak this precision runs at is fp32 × the architecture's tensor ratio: only
    the datapath it runs on counts (a card publishing FP16 / BF16 but not TF32, the RTX 5090,
    runs an fp16 job at a published peak)."""
    if precision == "fp32":
        return False
    paths = _DATAPATHS.get(precision)
    if paths is None:
        return any(perf.peak_tflops(gpu, p)[1] for p in ("fp16", "bf16", "tf32"))
    for p in paths:
        peak, derived = perf.peak_tflops(gpu, p)
        if peak:
            return derived
    return False


def _priced(gpu: GpuSpec, offer: Offer | None) -> GpuSpec:
    """Per-GPU prices of the configuration: the offer's when there is one."""
    if offer is None:
        return gpu
    n = max(1, offer.gpus)
    street = (
        Price(offer.purchase_usd / n, offer.as_of or "", offer.source, offer.provider)
        if offer.purchase_usd is not None
        else gpu.street_price
    )
    cloud = (
        Price(offer.hourly_usd / n, offer.as_of or "", offer.source, offer.provider)
        if offer.hourly_usd is not None
        else gpu.cloud_price
    )
    return replace(gpu, street_price=street, cloud_price=cloud)


def host_need(ctx: Context) -> costs.HostNeed | None:
    """The host RAM the request's job needs at the least on a rented instance
    (costs.host_need): from the weights it loads as stored, once per request."""
    key = ("host need",)
    if key in ctx.memo:
        hit: costs.HostNeed | None = ctx.memo[key]
        return hit
    work = ctx.work
    weights = work.model.params * work.weight_bytes_per_param / 1e9 if work.model.params else None
    need = ctx.memo[key] = costs.host_need(weights)
    return need


def _offer_pricing(config: Configuration, n: int, ctx: Context) -> costs.Pricing | None:
    """With offers loaded (and no explicit offer in the configuration): the cheapest accepted
    instance shape that holds ``n`` GPUs, paid whole, and the purchase price basis. Copies
    over a dataset (``shard_copies``) are ``n`` one-GPU processes that share nothing: on as
    many instances of one offer as they need, booked as serving replicas are
    (costs.price_copies)."""
    offers = ctx.offers
    if offers is None or config.offer is not None:
        return None
    if n > 1 and (config.copies > 1 or _priced_as_copies(ctx)):
        ckey = ("copy prices", config.gpu.slug, n, config.copies)
        hit: costs.Pricing | None = ctx.memo.get(ckey)
        if hit is None:
            got = offers.get(config.gpu.slug, _NO_OFFERS)
            if config.copies > 1:
                # LLM copies of n ÷ copies GPUs each: one instance holds a copy's GPUs
                hit, _ = costs.price_replicas(
                    got, n // config.copies, config.copies, ctx.rental, ctx.usage,
                    ctx.purchase_basis, topology.node_size(config.gpu), host_need(ctx),
                )  # fmt: skip
                if hit.rent is not None:
                    hit = replace(hit, rent=replace(hit.rent, copies=True))
            else:
                hit = costs.price_copies(
                    got, n, ctx.rental, ctx.usage, ctx.purchase_basis,
                    topology.node_size(config.gpu), host_need(ctx),
                )  # fmt: skip
            ctx.memo[ckey] = hit
        return hit
    table = _price_table(ctx, offers)
    key = (config.gpu.slug, n)
    pricing = table.get(key)
    if pricing is None:
        pricing = table[key] = costs.price_configuration(
            offers.get(key[0], _NO_OFFERS),
            n,
            ctx.rental,
            ctx.usage,
            ctx.purchase_basis,
            topology.node_size(config.gpu),
            host_need(ctx),
        )
    return pricing


def _price_table(
    ctx: Context, offers: Mapping[str, costs.GpuOffers]
) -> dict[tuple[str, int], costs.Pricing]:
    """The request's prices by (slug, count), filled as configurations are priced."""
    table: dict[tuple[str, int], costs.Pricing] | None = ctx.memo.get(_PRICES)
    if table is None:
        # an offers snapshot (costs.OfferBook) keeps one table per rental policy, usage and
        # purchase basis for every request that asks with them; plain offers: this request's
        table = ctx.memo[_PRICES] = (
            offers.prices(ctx.rental, ctx.usage, ctx.purchase_basis, host_need(ctx))
            if isinstance(offers, costs.OfferBook)
            else {}
        )
    return table


def _priced_as_copies(ctx: Context) -> bool:
    """Whether the request's GPUs are priced as one-GPU copies that share nothing
    (``batch_copies``: over a dataset or splitting one batch alike): the same for every job
    variant of a request (the task and the model)."""
    return batch_copies(ctx.work)


_PRICES = ("prices",)
_NO_OFFERS = costs.GpuOffers()


# ---------------------------------------------------------------- the evaluation


def _with_savers(work: WorkloadSpec, savers: tuple[str, ...], micro: int | None) -> WorkloadSpec:
    changes: dict[str, object] = {}
    if "checkpointing" in savers:
        changes["gradient_checkpointing"] = True
    if "adam8bit" in savers:
        changes["optimizer"] = "adam8bit"
    if "cache_encodings" in savers:
        changes["cached_encodings"] = True
    if micro is not None and micro < work.batch_size:
        changes["batch_size"] = micro
        changes["accumulates"] = True
    return work.with_flags(**changes) if changes else work


# A job variant within one request: (precision asked, precision run, savers, micro-batch,
# runtime named by the configuration).
JobKey = tuple[str, str, tuple[str, ...], int | None, str | None]


def job_variant(ctx: Context, key: JobKey) -> WorkloadSpec:
    """The request's job as one variant runs it, built once per request."""
    hit: WorkloadSpec | None = ctx.memo.get(key)
    if hit is None:
        asked, resolved, savers, micro, runtime = key
        base = ctx.work if asked == ctx.work.precision else ctx.work.with_precision(asked)
        hit = base if resolved == base.precision else base.with_precision(resolved)
        if asked in FORMAT_ONLY_PRECISIONS and resolved != asked:
            # an FP4 checkpoint (MXFP4, NVFP4) the GPU runs at another precision is loaded at
            # that one: dequantised to 16-bit (Transformers below compute capability 7.5) or
            # re-quantised, so its format's bits no longer size the weights
            hit = replace(hit, quantization="none", weight_bits=None)
        hit = _with_savers(hit, savers, micro)
        if runtime is not None and runtime != hit.runtime:
            hit = replace(hit, runtime=runtime)
        ctx.memo[key] = hit
    return hit


def variant_memory(
    ctx: Context, key: tuple[object, ...], run: WorkloadSpec, n: int, backend: str, flash: bool
) -> MemoryBreakdown:
    """``run``'s memory per GPU on ``n`` (``run`` is ``job_variant(ctx, key)``), once per request:
    it depends on the job, the count, the backend and the attention kernels, not the GPU."""
    mkey = ("memory", key, n, backend, flash)
    hit: MemoryBreakdown | None = ctx.memo.get(mkey)
    if hit is None:
        hit = ctx.memo[mkey] = (
            memory_breakdown(run, num_gpus=n, backend=backend, flash_attention=flash)
            if run.training
            else on_backend(_inference_memory(ctx, key, run, n, backend), run, backend)
        )
    return hit


def _inference_memory(
    ctx: Context, key: tuple[object, ...], run: WorkloadSpec, n: int, backend: str
) -> MemoryBreakdown:
    """An inference job's memory per GPU on ``n``, once per request for every backend and
    attention kernel (workload.on_backend puts in each backend's context): a request's
    cards run it on up to seven of them."""
    jkey = ("inference memory", key, n)
    hit: MemoryBreakdown | None = ctx.memo.get(jkey)
    if hit is None:
        if n > 1 and batch_copies(run):
            # copies: each GPU holds the whole model and runs its batch (``copy_batch``)
            share = replace(run, batch_size=copy_batch(run, n))
            one = memory_breakdown(share, num_gpus=1, backend=backend)
            hit = ctx.memo[jkey] = replace(one, num_gpus=n)
        else:
            hit = ctx.memo[jkey] = _fullest_card(
                run, n, memory_breakdown(run, num_gpus=n, backend=backend)
            )
    return hit


def _fullest_card(run: WorkloadSpec, n: int, mem: MemoryBreakdown) -> MemoryBreakdown:
    """A layer split's memory on its fullest card: whole layers per GPU, so one of ``n`` holds
    ⌈layers ÷ n⌉ of them and their KV cache, not an even share (Llama 3.1 405B's 126 layers on
    13 cards put 10 on one, 31.9 GB of fp8 weights where an even share is 31.6; a row read 0.1
    GB of headroom on a card that could not hold it). Tensor parallelism splits every layer
    evenly. A runtime whose split points count the output layer as one more unit (llama.cpp:
    ``RuntimeProfile.split_output_unit``) puts a layer more on its first GPU: 32 layers on 4
    GPUs hold 9, 8, 8, 7 (``llm_step.busiest_stage_share``)."""
    layers = run.model.layers or 0
    if n <= 1 or not run.is_llm_inference or layers <= 0 or run.efficiency is None:
        return mem
    if run.efficiency.runtime_value(run.runtime, "span") != "layers":
        return mem
    extra = bool(run.efficiency.runtime_value(run.runtime, "split_output_unit"))
    most = round(llm_step.busiest_stage_share(layers, n, extra) * layers)
    if most * n == layers:
        return mem
    share = most * n / layers
    note = f"the fullest GPU holds {most} of the {layers} layers (whole layers per GPU)"
    return replace(
        mem,
        weights=mem.weights * share,
        kv_cache=mem.kv_cache * share,
        notes=(*mem.notes, note),
    )


def batch_copies(run: WorkloadSpec) -> bool:
    """Whether ``run`` is inference that runs extra GPUs only as copies side by side: every
    model but a decoder LLM (diffusers pipelines, timm and torchvision models, Whisper and
    encoders under Transformers) has no tensor parallelism, so each extra GPU holds a whole
    copy of the model and runs its share of the batch, ⌈batch ÷ n⌉ (``copy_job``), with
    nothing crossing between GPUs during a step; a model one GPU cannot hold at batch 1 is
    not split over several (``too_big`` says so)."""
    return run.task == "inference" and not run.is_llm_inference


def shard_copies(run: WorkloadSpec) -> bool:
    """Whether ``run``'s copies (``batch_copies``) each run the stated batch on their own shard
    of a dataset: an offline job over ``dataset_samples`` runs one process a GPU (an HF
    pipeline's batch_size, a DataLoader's batch per worker), each at the batch asked on its
    share of the samples, so n copies get through ~n× the samples at the same cost per sample
    (Lambda's vllm-benchmark: data parallelism outperforms tensor parallelism where the model
    fits one GPU). Without a dataset the job is one batch, which its copies split."""
    return batch_copies(run) and bool(run.dataset_samples)


def copy_batch(run: WorkloadSpec, n: int) -> int:
    """The batch each of ``n`` copies of ``run`` (``batch_copies``) runs: the stated batch
    over a dataset (``shard_copies``), else its share of the one batch, ⌈batch ÷ n⌉."""
    if n <= 1 or shard_copies(run):
        return run.batch_size
    return math.ceil(run.batch_size / n)


def busy_copies(run: WorkloadSpec, n: int) -> int:
    """How many of ``n`` copies over a dataset (``shard_copies``) have a batch to run: all of
    them, unless the dataset holds fewer batches than copies (2 images keep 2 of 8 busy)."""
    samples = (run.dataset_samples or 0.0) * (run.epochs or 1.0)
    return max(1, min(n, math.ceil(samples / max(1, run.batch_size))))


def copies_fill(run: WorkloadSpec, n: int) -> float:
    """How many more samples per step ``n`` copies of ``run`` get through than its batch
    (``batch_copies``) where the job is a dataset: each copy then runs the stated batch on its
    own shard (``shard_copies``), so the copies with a batch to run (``busy_copies``) each add
    one (SDXL at batch 1 on 8 GPUs: 8 images a step, not 1). 1 for one batch (no dataset:
    the copies split it, those without a sample idle) and for any other job."""
    if n <= 1 or not shard_copies(run):
        return 1.0
    return float(busy_copies(run, n))


def _one_gpu(ctx: Context, gpu: GpuSpec, key: JobKey, run: WorkloadSpec, g: Gate) -> perf.OneGpu:
    """The count-independent part of ``run``'s step on ``gpu``, once per request for all
    its counts (a training card is evaluated at 1, 2, 4 and 8 GPUs)."""
    okey = ("one", gpu.slug, key)
    hit: perf.OneGpu | None = ctx.memo.get(okey)
    if hit is None:
        hit = perf.single_gpu(
            gpu,
            run,
            framework=ctx.framework,
            calibration=ctx.calibration,
            flash_attention=g.flash_attention,
            backend=g.backend,
        )
        ctx.memo[okey] = hit
    return hit


def _llm_estimate(
    ctx: Context, gpu: GpuSpec, key: JobKey, run: WorkloadSpec, g: Gate, n: int, copies: int = 1
) -> perf.PerfEstimate:
    """An LLM inference job's estimate on ``n`` × ``gpu``, once per request (a bound reads it,
    and evaluating the configuration reads the same); as ``copies`` copies side by side when
    more than one."""
    if copies > 1:
        return _copies_estimate(ctx, gpu, key, run, g, n, copies)
    lkey = ("llm", gpu.slug, key, n)
    hit: perf.PerfEstimate | None = ctx.memo.get(lkey)
    if hit is None:
        hit = ctx.memo[lkey] = _replica_estimate(ctx, gpu, run, g, n)
    return hit


def _replica_estimate(
    ctx: Context, gpu: GpuSpec, run: WorkloadSpec, g: Gate, n: int
) -> perf.PerfEstimate:
    """``run`` as one replica over ``n`` × ``gpu``, spread as the runtime spreads it."""
    return perf.estimate(
        gpu,
        run,
        framework=ctx.framework,
        num_gpus=n,
        calibration=ctx.calibration,
        backend=g.backend,
    )


def _copies_estimate(
    ctx: Context, gpu: GpuSpec, key: JobKey, run: WorkloadSpec, g: Gate, n: int, copies: int
) -> perf.PerfEstimate:
    """``copies`` copies of the job side by side on ``n`` × ``gpu``: one copy's estimate (its
    share of the batch on n ÷ copies GPUs, the runtime's span) times the copies
    (perf.as_copies), once per request."""
    ckey_est = ("llm copies", gpu.slug, key, n, copies)
    hit: perf.PerfEstimate | None = ctx.memo.get(ckey_est)
    if hit is None:
        assert g.backend is not None
        _, cjob = copy_job(ctx, key, run, copies)
        one = _replica_estimate(ctx, gpu, cjob, g, n // copies)
        single = _llm_estimate(ctx, gpu, key, run, g, 1).step_time_s
        span = perf.profile_for(gpu, cjob, g.backend, "decode").span
        hit = ctx.memo[ckey_est] = perf.as_copies(one, copies, run.batch_size, single, span)
    return hit


Step = tuple[tuple[str, ...], int | None]


def _ladder(ctx: Context, work: WorkloadSpec, allowed: frozenset[str]) -> list[Step]:
    """(savers, micro-batch) steps to try, from the job as asked to every saver applied: the
    same for every card of a request with the same job and savers allowed, so built once."""
    # keyed by what _build_ladder reads of the job
    lkey: tuple[object, ...] = ("ladder", work.training, work.gradient_checkpointing)
    lkey += (work.optimizer, work.batch_size, allowed, bool(pipeline_frozen_params(work.model)))
    hit: list[Step] | None = ctx.memo.get(lkey)
    if hit is None:
        hit = ctx.memo[lkey] = _build_ladder(work, allowed)
    return hit


def _ladders(ctx: Context, work: WorkloadSpec, allowed: frozenset[str]) -> list[list[Step]]:
    """The ladders ``plan`` walks. Where checkpointing may be added, two: micro-batches without
    it first (the same update and no recomputation, at a smaller GEMM), then checkpointing
    with its own micro-batches, planned at the counts where the first needed a saver too, so the
    objective weighs one against the other (recomputation costs about a forward pass a step; a
    small micro-batch, the GEMM efficiency it loses). One ladder put checkpointing first and
    never tried a micro-batch without it: 8 H100s pretraining a 1.1B model ran 351k tokens/s
    where micro-batches of 8 a GPU, which fit, ran 444k by the engine's own figures."""
    lkey: tuple[object, ...] = ("ladders", work.training, work.gradient_checkpointing)
    lkey += (work.optimizer, work.batch_size, allowed, bool(pipeline_frozen_params(work.model)))
    hit: list[list[Step]] | None = ctx.memo.get(lkey)
    if hit is None:
        full = _ladder(ctx, work, allowed)
        if any("checkpointing" in savers for savers, _ in full):
            plain = _build_ladder(work, allowed - {"checkpointing"})
            hit = [plain, [st for st in full if "checkpointing" in st[0]]]
        else:
            hit = [full]
        ctx.memo[lkey] = hit
    return hit


def _build_ladder(work: WorkloadSpec, allowed: frozenset[str]) -> list[Step]:
    """Savers in the order that changes the training least: checkpointing (recomputation, the
    same maths), then every micro-batch with gradient accumulation (the same update), and 8-bit
    AdamW (the optimiser's numerics changed) only where micro-batches of one sample still need
    more cards; plan keeps a step only where it lets fewer cards hold the job. Under (Q)LoRA
    8-bit AdamW saves next to nothing (the adapters' state); under full training 6 bytes per
    parameter, which an answer names only where no exact saver holds the job on as few cards."""
    steps: list[Step] = [((), None)]
    if not work.training:
        return steps
    savers: tuple[str, ...] = ()
    if "checkpointing" in allowed and not work.gradient_checkpointing:
        savers += ("checkpointing",)
        steps.append((savers, None))
    if "cache_encodings" in allowed and pipeline_frozen_params(work.model):
        # a diffusion pipeline's frozen text encoders and VAE, encoded once and freed
        savers += ("cache_encodings",)
        steps.append((savers, None))
    tiers = [savers]
    if "adam8bit" in allowed and work.optimizer == "adamw":
        tiers.append((*savers, "adam8bit"))
    for tier in tiers:
        if tier != savers:
            steps.append((tier, None))
        # an optimizer step in backward updates the weights every micro-batch: no
        # gradient accumulation (torchtune refuses optimizer_in_bwd with it)
        if "micro_batch" in allowed and not work.optimizer_in_backward:
            micro = work.batch_size // 2
            while micro >= 1:
                steps.append(((*tier, "micro_batch"), micro))
                micro //= 2
    return steps


def plan(gpu: GpuSpec, ctx: Context) -> list[Configuration] | Exclusion:
    """The configurations of ``gpu`` worth evaluating, or why none can run the job.

    Every power-of-two count from the fewest cards that hold the job up to ``max_gpus``; a
    memory saver is tried only where it lets fewer cards hold the job than without it; under a
    stated Megatron layout only the counts its TP×PP×CP divides (``_whole_replicas``). A
    serving job's configurations are the card's serving shapes (app/domain/serving_step.py).
    """
    if ctx.work.task == "serving":
        return serving_step.plan(gpu, ctx)
    gated = _gated(gpu, ctx)
    if isinstance(gated, Exclusion):
        return gated
    g, run, max_n, allowed = gated
    assert g.backend is not None and g.precision is not None
    # a job the card's software cannot run (QLoRA where bitsandbytes has no backend) says so
    # before any memory verdict: no amount of memory would run it
    why, _ = compat.job_support(
        gpu,
        compat.job_features(
            run.peft, run.optimizer, paged=run.paged_optimizer, runtime=run.runtime
        ),
        ctx.rules,
        g.backend,
    )
    if why is not None:
        return Exclusion("framework_unsupported", why)
    exact = ctx.limits.exact_gpus
    # under a stated Megatron layout a replica of TP×PP×CP GPUs shares each sample
    lay = _stated_layout(ctx) if run.training else None
    per = lay.model_parallel if lay is not None else 1
    out: list[Configuration] = []
    # (GPUs, batch, per, fewest that hold it): too few samples to feed them
    starved: tuple[int, int, int, int] | None = None
    total1: float | None = None
    heads: tuple[int, GpuSpec, WorkloadSpec, str] | None = None
    plain: set[int] = set()  # counts the first ladder holds with no saver at all
    ladders = _ladders(ctx, run, allowed)
    for i, steps in enumerate(ladders):
        walk = _walk(gpu, ctx, run, g, steps, max_n, lay, per)
        found = walk.configs if i == 0 else [c for c in walk.configs if c.num_gpus not in plain]
        if i == 0:
            plain = {
                c.num_gpus
                for c in found
                if not c.savers and (len(ladders) == 1 or lay is not None or _holds(ctx, c))
            }
        else:
            # a count the first ladder kept with no saver though it does not hold the job there
            # (min_gpus' even share misses the parts every GPU holds whole, and at one sample a
            # GPU no smaller micro-batch is left to try) runs with checkpointing instead: 256
            # H100s pretraining Llama 3.1 8B at batch 256 × 8k were refused at 82.2 GiB a GPU
            # that 39.6 GiB with checkpointing runs, while 64 and 128 of them were planned
            again = {c.num_gpus for c in found}
            out = [c for c in out if c.savers or c.num_gpus not in again]
        out += found
        starved = starved or walk.starved
        heads = heads or walk.heads
        if walk.total1 is not None:
            total1 = walk.total1 if total1 is None else min(total1, walk.total1)
    if not out:
        if lay is not None:
            return _too_big_layout(gpu, ctx, run, g, lay, exact or max_n)
        if heads is not None:
            return _unsplit(ctx, max_n, total1, *heads)
        return _starved(gpu, *starved) if starved else too_big(gpu, ctx, run, total1, max_n)
    _as_copies(out, ctx, run)
    return _whole_replicas(out, ctx)


@dataclass(slots=True)
class _Walk:
    configs: list[Configuration]
    # (GPUs, batch, per, fewest that hold the job): more GPUs than samples to feed
    starved: tuple[int, int, int, int] | None
    total1: float | None  # the least one GPU would need, every saver of the ladder applied
    # (fewest GPUs that hold the job, the card, the job, its backend): each count that holds it
    # is one whose tensor parallelism cannot split the model's heads
    heads: tuple[int, GpuSpec, WorkloadSpec, str] | None = None


def _walk(
    gpu: GpuSpec,
    ctx: Context,
    run: WorkloadSpec,
    g: Gate,
    steps: list[Step],
    max_n: int,
    lay: MegatronLayout | None,
    per: int,
) -> _Walk:
    """One ladder's configurations: each step kept only where it lets fewer cards hold the job
    than the steps before it, with every count from there to the last step's fewest."""
    assert g.backend is not None and g.precision is not None
    exact = ctx.limits.exact_gpus
    out: list[Configuration] = []
    starved: tuple[int, int, int, int] | None = None
    heads: tuple[int, GpuSpec, WorkloadSpec, str] | None = None
    fewest: int | None = None  # fewest cards any earlier step needed
    total1: float | None = None
    for savers, micro in steps:
        key: JobKey = (ctx.work.precision, g.precision, savers, micro, None)
        job = job_variant(ctx, key)
        avail = usable_gb(gpu, job)
        # savers the engine adds hold the job only with the room a micro-batch it picks leaves
        # (ROOM): 8-bit AdamW had left 0.03 GB of 84.9 free where checkpointing left room
        held = avail * (1.0 - ROOM) if savers else avail
        n, size = min_gpus(
            job,
            gpu,
            g.backend,
            g.flash_attention,
            exact or max_n,
            one=variant_memory(ctx, key, job, 1, g.backend, g.flash_attention),
            avail=held,
        )
        if n != 1 and batch_copies(job):
            # copies, not one model split: the fewest whose one GPU holds a copy at its share
            n = _fewest_copies(ctx, key, job, g, exact or max_n, avail)
        if n is None and exact is not None and lay is None:
            n = _exact_holds(ctx, gpu, g, key, job, exact, held)
        if n is not None and exact is None and lay is None:
            n = _fewest_layers(ctx, gpu, g, key, job, n, held)
        if lay is not None:
            n = _fewest_replicas(ctx, key, job, g, max_n, per, held)
        # the least any step needs: the job's own figure once every saver is applied
        total1 = size if total1 is None else min(total1, size)
        if n is None or (fewest is not None and n >= fewest):
            continue
        # A training job's GPUs run data-parallel (DDP, FSDP, ZeRO shard the batch, never one
        # sample), so every GPU (Megatron replica) needs at least one sample of each
        # (micro-)batch, the fewest that hold the job as much as any more: sharded over more
        # ranks than samples, one sample's activations were split and a job that runs out of
        # memory fitted. Inference replicas need no sample per GPU.
        unfed = _unfed(n, exact, _fed(run, micro, per))
        if unfed is not None:
            if micro is None:  # the job's own batch, not a micro-batch a saver tried
                starved = starved or (unfed, run.batch_size, per, n)
            continue
        top = fewest - 1 if fewest is not None else max_n
        if exact is not None:
            if n <= exact:
                c = _kept(Configuration(gpu, exact, savers, micro, (g, key)), ctx.work.batch_size)
                # the same plain-data-parallel and room rules as every other count
                out.append(_refined(ctx, g, c, avail) if lay is None and run.training else c)
                break
            continue
        variant = (g, key)
        unsplit = unsplit_counts(gpu, run, g.backend, ctx)
        batch = ctx.work.batch_size
        before = len(out)
        out += [
            # positional, in field order (gpu, count, savers, micro-batch, variant): several
            # per card, and keywords cost twice as much
            _refined(ctx, g, _kept(Configuration(gpu, k, savers, micro, variant), batch), avail)
            if lay is None and run.training
            else _kept(Configuration(gpu, k, savers, micro, variant), batch)
            for k in (COUNTS if n in COUNTS else (n, *COUNTS))
            if n <= k <= min(top, _fed(run, micro, per)) and k not in unsplit
        ]
        if len(out) == before and unsplit:
            # every count that holds the job is one the runtime's tensor parallelism cannot
            # split the heads over: the reason is the heads, not the memory
            heads = heads or (n, gpu, run, g.backend)
        fewest = n
        if n == 1:
            break
    return _Walk(out, starved, total1, heads)


def _holds(ctx: Context, c: Configuration) -> bool:
    """Whether a configuration the walk planned holds its job on each of its GPUs, laid out as
    ``admit`` will size it (the walk counts with ``min_gpus``' even share)."""
    assert c.variant is not None
    g, key = c.variant
    avail = usable_gb(c.gpu, job_variant(ctx, key))
    return _spare(ctx, g, key, c.num_gpus, avail) >= 0


def _refined(ctx: Context, g: Gate, c: Configuration, avail: float) -> Configuration:
    """A training configuration the walk found, at the micro-batch people would run it at
    (where the request allows micro-batches): plain data parallelism where a smaller one lets
    every GPU hold a whole copy (``_sharded``), then room where a micro-batch the engine
    picked is tight (``_tight``); the job's own batch is not split for room."""
    if "micro_batch" not in ctx.savers_allowed:
        return c
    if c.num_gpus > 1:
        c = _smaller_micro(ctx, c, lambda key: _sharded(ctx, g, key, c.num_gpus, avail))
    if c.micro_batch is None:
        # the job's own batch, which the walk held without ROOM: it runs as asked where it
        # fits (a ResNet-50 batch of 512 on an RTX 3090, as timm's own 3090 CSV ran it, was
        # split into 2 × 256), the row saying how tight it is (``tight_fit``); as micro-batches
        # only where it does not hold at this count at all: the walk's count is min_gpus'
        # even share, which the parts every GPU holds whole (FSDP's root unit, the gathered
        # layers) can miss (4 RTX 4060s hold an 8B QLoRA at batch 8 at 1 sample a GPU, 7.2
        # GB, not at 2, 9.4 GB; the estimate had jumped to 8 cards)
        return _smaller_micro(ctx, c, lambda key: _spare(ctx, g, key, c.num_gpus, avail) < 0)
    return _smaller_micro(ctx, c, lambda key: _tight(ctx, g, key, c.num_gpus, avail))


def _smaller_micro(
    ctx: Context, c: Configuration, wrong: Callable[[JobKey], bool]
) -> Configuration:
    """``c`` where its variant is not ``wrong``, else the largest smaller micro-batch (more
    accumulation steps, the same update; at least one sample a GPU) whose variant is not;
    none: ``c``."""
    assert c.variant is not None
    g, key = c.variant
    if not wrong(key):
        return c
    savers = c.savers if "micro_batch" in c.savers else (*c.savers, "micro_batch")
    batch, n = ctx.work.batch_size, c.num_gpus
    top = c.micro_batch or batch
    # the micro-batches that keep the global batch exact first, largest first; the halvings
    # (which may change it: 60 on 48 GPUs is 2 a GPU, 768 a step for 480) only where none does
    keeping = [n * d for d in range(top // n, 0, -1) if n * d < top and batch % (n * d) == 0]
    halves = []
    m = top // 2
    while m >= n:
        halves.append(m)
        m //= 2
    for m in (*keeping, *halves) if batch % n == 0 else halves:
        alt: JobKey = (key[0], key[1], savers, m, key[4])
        if not wrong(alt):
            return Configuration(c.gpu, n, savers, m, (g, alt))
    return c


def _sharded(ctx: Context, g: Gate, key: JobKey, n: int, avail: float) -> bool:
    """Whether the variant's ``n`` GPUs must shard the model's states: the walk takes each
    count's first step that holds it, sharded or not, and 4 RTX 4090s fine-tuning an 8B with
    LoRA ran FSDP over PCIe at 2 samples a GPU where 1 a GPU fits whole on each (sharding
    gathers the weights every micro-step; plain data parallelism all-reduces once a batch)."""
    return _split(ctx, key, job_variant(ctx, key), g, n, avail)[0]


# The share of usable memory a micro-batch the engine picks for itself leaves free where a
# smaller one (more accumulation steps, the same update) would: the memory model's peaks fall
# within 10 % of the published ones (benchmarks/peak_memory.py), so a pick at 0.09 GB of 23.7
# spare is as likely to run out as not.
ROOM = 0.05
# how a row that leaves less than ROOM free begins its warning (``tight_fit``): what the
# summary's caveat puts first among the row's warnings
TIGHT_FIT = "a tight fit"

# fp8 training in a PyTorch program: torch.autocast runs only float16 and bfloat16 on CUDA
# (torch/amp/autocast_mode.py: any other dtype warns "the target dtype is not supported.
# Disabling autocast"), so fp8 matmuls take a library that swaps the Linear layers — torchao's
# float8 ("float8 rowwise training for torch.nn.Linear", its speed-ups measured "with
# torch.compile on": docs.pytorch.org/ao/stable/workflows/training.html) or Transformer
# Engine's te.Linear under te.fp8_autocast. Megatron runs it through Transformer Engine itself.
FP8_TRAINING_CAVEAT = (
    "fp8 training needs torchao.float8 (convert_to_float8_training swaps nn.Linear for "
    "Float8Linear; its published speed-ups are with torch.compile on) or NVIDIA Transformer "
    "Engine (te.Linear under te.fp8_autocast): torch.autocast runs only fp16 and bf16"
)


def _exact_holds(
    ctx: Context, gpu: GpuSpec, g: Gate, key: JobKey, job: WorkloadSpec, exact: int, avail: float
) -> int | None:
    """``exact`` where the job holds on exactly that many GPUs though the power of two above
    it is what ``min_gpus`` counts (3 GPUs: min_gpus says 4): a layer split (llama.cpp, a
    device_map) or a sharded training job runs on any count, tensor parallelism only where it
    splits the heads. Three RTX 3090s hold Llama 3.1 70B Q4_K_M at 12k context; they were
    refused as needing 4."""
    assert g.backend is not None
    if exact & (exact - 1) == 0 or _head_split(gpu, job, g.backend, exact) is not None:
        return None
    if job.is_llm_inference and perf.profile_for(gpu, job, g.backend, "decode").span == "tensor":
        return None
    held = variant_memory(ctx, key, job, exact, g.backend, g.flash_attention).total <= avail
    return exact if held else None


def _fewest_layers(
    ctx: Context, gpu: GpuSpec, g: Gate, key: JobKey, job: WorkloadSpec, n: int, avail: float
) -> int:
    """The fewest GPUs that hold an LLM inference job a runtime splits by whole layers
    (llama.cpp's --split-mode layer, Accelerate's device_map): any count runs it, so where
    ``min_gpus``' power of two is more than it needs, the count below it that holds the job
    (three 24 GB cards hold gpt-oss-120b or a 70B at Q6_K, the hobbyist's build; four were the
    fewest planned). Tensor parallelism keeps the powers of two that split its heads."""
    if n <= 2 or not job.is_llm_inference:
        return n
    assert g.backend is not None
    if perf.profile_for(gpu, job, g.backend, "decode").span == "tensor":
        return n
    for k in range(n // 2 + 1, n):
        if variant_memory(ctx, key, job, k, g.backend, g.flash_attention).total <= avail:
            return k
    return n


def tight_fit(
    run: WorkloadSpec,
    mem: MemoryBreakdown,
    avail: float,
    backend: str,
    gpus: int = 1,
    per_gpu: int = 1,
) -> str:
    """What a training or inference row that leaves less than ROOM of its usable memory free
    must say ("" for any other row; an inference row's words: ``_tight_inference``): the
    margin the engine keeps where it picks the micro-batch itself, so a row inside it — the
    job's own batch, or a micro-batch of one sample a GPU that cannot shrink — is one the
    engine would not have picked. Beyond what it counts (the caching
    allocator's slack on activations and logits alone, TRAINING_FRAGMENTATION; one context
    with its cuBLAS/cuDNN workspaces, CONTEXT_GB) a run also holds NCCL's communication
    buffers and the allocator's slack on the weights, gradients and optimizer states, and the
    memory model's peaks fall within 10 % of published ones (``ROOM``). ``gpus``: the row's
    count (NCCL's buffers on more than one, DDP or sharded); ``per_gpu``: the samples each GPU
    runs a micro-step, which a smaller micro-batch could halve. The ranking stays."""
    spare = avail - mem.total
    if run.task == "inference" and spare < ROOM * avail:
        if efficiency.runtime_share(run.efficiency, run.runtime)[0] < 1.0:
            # a runtime that claims its share up front (vLLM, SGLang, TensorRT-LLM) sizes its
            # KV pool to what is left: a small spare is a small pool, not an out-of-memory
            return ""
        return _tight_inference(run, spare, avail, backend, per_gpu)
    if not run.training or spare >= ROOM * avail:
        return ""
    # PyTorch reads PYTORCH_CUDA_ALLOC_CONF on ROCm too (c10/cuda/CUDAAllocatorConfig.h)
    conf = (
        "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation and "
        if backend in ("cuda", "rocm")
        else ""
    )
    watch = "torch.cuda.max_memory_allocated()" if backend in ("cuda", "rocm") else "the peak"
    uncounted = (
        "the allocator's fragmentation and NCCL's communication buffers"
        if gpus > 1
        else "the allocator's fragmentation"
    )
    halve = (
        f", or run {per_gpu // 2} samples a GPU with twice the accumulation steps (the same update)"
        if per_gpu > 1
        else ""
    )
    return (
        f"{TIGHT_FIT}: {gib(max(0.0, spare))} GiB spare of {gib(avail)} GiB per GPU, "
        f"under the {ROOM:.0%} the engine keeps where it picks the micro-batch itself, and "
        f"{uncounted} can take that: {conf}watch {watch} over the first steps{halve}"
    )


def _tight_inference(
    run: WorkloadSpec, spare: float, avail: float, backend: str, per_gpu: int
) -> str:
    """``tight_fit`` of an inference row: nothing is picked for it (its batch is the one
    asked), but the same margin holds — the memory model's figures are estimates, and the
    caching allocator's fragmentation, the convolution algorithms' workspaces the autotuner
    may pick and, on a card that drives a display, the desktop's share are not counted. A
    FLUX.1 [dev] pick at 0.39 GiB spare of 23.7 had carried no word of it."""
    watch = "torch.cuda.max_memory_allocated()" if backend in ("cuda", "rocm") else "the peak"
    if run.runtime == "llama.cpp":
        room = "offloading fewer layers (-ngl) or a shorter context (-c) makes room"
    elif run.is_llm_inference:
        room = "a smaller batch or a shorter context frees KV cache"
    elif per_gpu > 1:
        room = f"a batch of {per_gpu // 2} a GPU makes room"
    else:
        room = "offloading part of the model to CPU memory makes room, at a cost in speed"
    return (
        f"{TIGHT_FIT}: {gib(max(0.0, spare))} GiB spare of {gib(avail)} GiB per GPU, under "
        f"the {ROOM:.0%} margin the engine keeps: its memory figures are estimates, and the "
        f"allocator's fragmentation and a display on the card are not counted. Watch {watch} "
        f"on a first run; {room}"
    )


def _tight(ctx: Context, g: Gate, key: JobKey, n: int, avail: float) -> bool:
    """Whether the variant leaves less than ROOM of each of its ``n`` GPUs free (a smaller
    micro-batch is then taken where one leaves it; none: the row's tip says how tight)."""
    return _spare(ctx, g, key, n, avail) < ROOM * avail


def _spare(ctx: Context, g: Gate, key: JobKey, n: int, avail: float) -> float:
    """What a job variant leaves free on each of ``n`` GPUs of ``avail`` GB, laid out as
    ``_split`` lays it."""
    run = job_variant(ctx, key)
    _, _, group = _split(ctx, key, run, g, n, avail)
    return avail - _layout_memory(ctx, key, run, g, n, group).total


def _uneven_split(
    run: WorkloadSpec, n: int, batch: int, lay: MegatronLayout | None = None
) -> str | None:
    """What a training row on a count that does not divide its micro-batch must say: each of
    its GPUs runs the busiest one's share (per_device_train_batch_size is one number), so an
    optimizer step takes more samples than the ``batch`` asked (3 GPUs at 8: 3 each). Under a
    Megatron layout (``lay``) in Megatron's own terms: its data-parallel replicas must divide
    the global batch, whatever the micro-batch."""
    if not run.training or n <= 1:
        return None
    if lay is not None and not lay.fsdp:
        return _megatron_uneven(batch, max(1, n // lay.model_parallel))
    if run.batch_size % n == 0:
        return None
    per = -(-run.batch_size // n)
    steps = max(1, -(-batch // run.batch_size))
    return (
        f"a micro-batch of {run.batch_size} does not split evenly over {n} GPUs: "
        f"per_device_train_batch_size {per} × {n} GPUs × {steps} steps is {per * n * steps} "
        f"samples an optimizer step, not {batch} (a batch {n} divides keeps it exact)"
    )


def _megatron_uneven(batch: int, dp: int) -> str | None:
    """Why Megatron-LM would refuse a global batch of ``batch`` over ``dp`` data-parallel
    replicas, or None: its micro-batch calculator asserts the global batch is a multiple of
    micro-batch size × data-parallel size (megatron/core/num_microbatches_calculator.py)."""
    if batch % dp == 0:
        return None
    low = batch // dp * dp
    near = f"{low:,} or {low + dp:,}" if low else f"{dp:,}"
    return (
        f"Megatron needs the global batch to be a multiple of micro_batch_size × data-parallel "
        f"size (megatron/core/num_microbatches_calculator.py): {batch:,} over {dp} data-parallel "
        f"replicas is not; a global batch of {near} runs (priced here at {batch:,})"
    )


def _keeping_micro(batch: int, n: int, micro: int) -> int:
    """The largest micro-batch up to ``micro`` that keeps a global batch of ``batch`` on ``n``
    GPUs exact — a whole number of samples on every GPU (a multiple of ``n``) and a whole number
    of accumulation steps (a divisor of ``batch``): 480 on 48 GPUs at most 60 runs as 48 (1 a
    GPU × 10 steps), not 60 (2 a GPU × 8 steps = 768 a step); ``micro`` where none does."""
    if n <= 0 or batch % n or (micro % n == 0 and batch % micro == 0):
        return micro
    per = batch // n
    for d in range(min(per, micro // n), 0, -1):
        if per % d == 0:
            return n * d
    return micro


def _kept(c: Configuration, batch: int) -> Configuration:
    """``c`` at the micro-batch that keeps the global batch (``_keeping_micro``) where its own
    would change it; ``c`` itself otherwise."""
    if c.micro_batch is None or c.variant is None:
        return c
    m = _keeping_micro(batch, c.num_gpus, c.micro_batch)
    if m == c.micro_batch:
        return c
    g, key = c.variant
    return Configuration(c.gpu, c.num_gpus, c.savers, m, (g, (key[0], key[1], c.savers, m, key[4])))


def _gated(
    gpu: GpuSpec, ctx: Context
) -> tuple[Gate, WorkloadSpec, int, frozenset[str]] | Exclusion:
    """What ``plan`` plans with — the card's gate, the job at the precision it runs, the most
    GPUs it may span and the savers that work on it — or why the card is out before any count:
    the request's filters, the software gate, a count the card cannot reach."""
    if ctx.apply_filters:
        excl = filtered_out(gpu, ctx.limits)
        if excl is not None:
            return excl
    g = gate(gpu, ctx.work.precision, getattr(ctx.work, "runtime", None), ctx)
    if g.exclusion is not None:
        return g.exclusion
    assert g.backend is not None and g.precision is not None
    run = job_variant(ctx, (ctx.work.precision, g.precision, (), None, None))
    max_n = 1 if g.multi_gpu is False else max_devices(gpu, g.backend, ctx.limits.max_gpus)
    # a runtime that runs on one device (MLX: mlx_lm.lora on one GPU; its distributed mode
    # across machines, mlx.launch, is not modelled) trains on one
    one_device = run.efficiency is not None and (
        run.efficiency.runtime_value(run.runtime, "span") == "none"
    )
    if run.training and one_device:
        max_n = 1
    allowed = ctx.savers_allowed
    if not g.adam8bit:
        allowed = allowed - {"adam8bit"}  # only savers that work as documented are added
    exact = ctx.limits.exact_gpus
    if exact is not None and exact > max_n:
        return Exclusion(
            "does_not_fit", f"{gpu.name} runs as one device; {exact} GPUs were asked for"
        )
    split = _head_split(gpu, run, g.backend, exact) if exact is not None else None
    if split is not None:
        return Exclusion(
            "runtime_unsupported",
            f"{runtime_name(run.runtime) if run.runtime else 'the runtime'} cannot split the "
            f"model over {exact} GPUs: {split}",
        )
    return g, run, max_n, allowed


def heads_split_everywhere(run: WorkloadSpec, ctx: Context) -> bool:
    """Whether ``run``'s model's heads split over every tensor-parallel degree a runtime's span
    reaches (llm_step.span: up to a server's GPUs), as most models' do: then no count is
    unsplit under any runtime, and no card's profile need be read (``unsplit_counts``)."""
    m = run.model
    key = ("unsplit", m.num_heads, m.num_kv_heads, m.attention)
    hit: bool | None = ctx.memo.get(key)
    if hit is None:
        hit = ctx.memo[key] = all(
            llm_step.head_split_error(m, min(k, topology.NODE_GPUS)) is None for k in COUNTS
        )
    return hit


def unsplit_counts(gpu: GpuSpec, run: WorkloadSpec, backend: str, ctx: Context) -> frozenset[int]:
    """The counts of COUNTS whose tensor-parallel degree cannot split the heads of ``run``'s
    model (llm_step.replica_split_error): the same for every card whose runtime spans GPUs
    alike, so built once per request and span. ``plan`` never lays a card out on one, and
    the catalog's columns (app/domain/fleet.py) leave such a count to it."""
    if not run.is_llm_inference or heads_split_everywhere(run, ctx):
        return frozenset()
    m = run.model
    prof = perf.profile_for(gpu, run, backend, "decode")
    key = ("unsplit", m.num_heads, m.num_kv_heads, m.attention, prof.span)
    hit: frozenset[int] | None = ctx.memo.get(key)
    if hit is None:
        hit = frozenset(k for k in COUNTS if llm_step.replica_split_error(m, prof, k))
        ctx.memo[key] = hit
    return hit


def _head_split(gpu: GpuSpec, run: WorkloadSpec, backend: str, n: int) -> str | None:
    """Why LLM inference cannot run tensor-parallel over ``n`` GPUs under its runtime
    (llm_step.replica_split_error); None for any other job."""
    if not run.is_llm_inference:
        return None
    prof = perf.profile_for(gpu, run, backend, "decode")
    return llm_step.replica_split_error(run.model, prof, n)


def _fed(run: WorkloadSpec, micro: int | None, per: int) -> int:
    """The most GPUs a step of ``run`` can feed: a training step's data-parallel ranks (GPUs,
    or Megatron replicas of ``per``) each need a whole sample of its (micro-)batch; inference
    replicas need none."""
    return (micro or run.batch_size) * per if run.training else COUNTS[-1]


def _unfed(n: int, exact: int | None, most: int) -> int | None:
    """The GPUs a step would run beyond the ``most`` its batch feeds (None: every one fed): its
    fewest ``n``, or the ``exact`` count asked where that holds the job."""
    count = exact if exact is not None and exact >= n else n
    return count if count > most else None


def _unsplit(
    ctx: Context,
    max_n: int,
    total1: float | None,
    n: int,
    gpu: GpuSpec,
    run: WorkloadSpec,
    backend: str,
) -> Exclusion:
    """Why LLM inference that ``n`` or more GPUs hold by memory has no layout: the runtime's
    tensor parallelism cannot split the model's heads over any count that holds it, and the
    counts that can split them are too few GPUs to hold it. Said as a misfit, so that the
    levers of one (a smaller format, other cards) are offered as for any other."""
    said = runtime_name(run.runtime) if run.runtime else "the runtime"
    unsplit = unsplit_counts(gpu, run, backend, ctx)
    splits = [str(k) for k in COUNTS if k < n and k not in unsplit and k <= max_n]
    need1, _ = shown_memory(gpu, run, total1)
    fewer = f"{', '.join(splits[:-1])} or {splits[-1]}" if len(splits) > 1 else "".join(splits)
    held = f"; over {fewer} GPU{'' if fewer == '1' else 's'}, which it can, it does not fit"
    return Exclusion(
        "does_not_fit",
        f"needs {gib(need1)} GiB on one GPU; {n} GPUs of {gib(claimed_gb(gpu, run))} GiB usable "
        f"would hold it, but {said} cannot split the model over {n}: "
        f"{_head_split(gpu, run, backend, n)}{held if splits else ''} (a layer split, as "
        "llama.cpp runs one, has no such rule)",
    )


def _starved(gpu: GpuSpec, n: int, batch: int, per: int, fewest: int) -> Exclusion:
    """Why a training job on more GPUs than its batch has samples cannot run: the ``n`` asked
    where ``fewest`` would hold it, else the ``n`` it would take to hold it."""
    unit = "GPU" if per == 1 else f"replica of {per} GPUs"
    fed = batch * per
    if fewest <= fed:
        return Exclusion(
            "filtered_out",
            f"a batch of {batch} feeds at most {fed} GPU{'s' if fed > 1 else ''} (data "
            f"parallelism gives each {unit} at least one whole sample), fewer than the {n} "
            f"asked; {fewest} hold the job",
        )
    return Exclusion(
        "does_not_fit",
        f"a batch of {batch} feeds at most {fed} GPU{'s' if fed > 1 else ''} (data "
        f"parallelism gives each {unit} at least one whole sample), fewer than the {n} "
        f"{gpu.name} it would take to hold the job with less than a sample each; with a "
        "whole sample each, it needs more memory still",
    )


def _as_copies(out: list[Configuration], ctx: Context, run: WorkloadSpec) -> None:
    """Lay out each planned configuration as copies (``copies_of``) where one-job LLM inference
    is asked as copies (workload.extra_gpus)."""
    if not ctx.copies or not run.is_llm_inference:
        return
    for c in out:
        assert c.variant is not None  # plan made it
        c.copies = copies_of(ctx, c.gpu, c.variant, c.num_gpus)


def copies_of(ctx: Context, gpu: GpuSpec, variant: tuple[Gate, JobKey], n: int) -> int:
    """How ``n`` GPUs run the job under workload.extra_gpus 'copies': the layout that gets
    through the batch fastest among one replica over all ``n`` (1) and each count of copies
    side by side whose GPUs (n ÷ copies of them) hold a copy's share of the batch
    (``copy_job``), no more copies than the batch has samples (a copy without one would idle).
    Copies read every weight once per copy per step, so at small batches one tensor-parallel
    replica over NVLink can beat them (vLLM, Llama 3 8B at batch 32 on 8 × H100 SXM: 7,401
    against 3,907 tokens/s), while a host-bound or compute-bound replica gains from them: the
    samples being independent says copies may run, not that they are faster. Copies divide
    ``n``: of a power-of-two count, powers of two; ties go to fewer copies."""
    g, key = variant
    assert g.backend is not None
    run = job_variant(ctx, key)
    best, fastest = 1, _llm_estimate(ctx, gpu, key, run, g, n).throughput
    for c in range(2, min(n, run.batch_size) + 1):
        if n % c:
            continue
        ckey, cjob = copy_job(ctx, key, run, c)
        per = n // c
        mem = variant_memory(ctx, ckey, cjob, per, g.backend, g.flash_attention)
        if mem.total > usable_gb(gpu, cjob, per):
            continue
        t = _llm_estimate(ctx, gpu, key, run, g, n, c).throughput
        if t > fastest:
            best, fastest = c, t
    return best


def copy_job(
    ctx: Context, key: JobKey, run: WorkloadSpec, copies: int
) -> tuple[tuple[object, ...], WorkloadSpec]:
    """(memo key, job) of one of ``copies`` copies of ``run`` (``job_variant(ctx, key)``): its
    share of the batch, ⌈batch ÷ copies⌉ (the last copy may run fewer), built once per
    request."""
    b = math.ceil(run.batch_size / copies)
    ckey: tuple[object, ...] = ("copy", key, b)
    hit: WorkloadSpec | None = ctx.memo.get(ckey)
    if hit is None:
        hit = ctx.memo[ckey] = replace(run, batch_size=b)
    return ckey, hit


def _stated_layout(ctx: Context) -> MegatronLayout | None:
    """The request's own Megatron layout where the memory model reads it (runtime megatron;
    Megatron-FSDP is priced as the engine's sharded job)."""
    lay = getattr(ctx.work, "megatron", None)
    if lay is None or getattr(ctx.work, "runtime", None) != "megatron" or lay.fsdp:
        return None
    return lay


def _fewest_copies(
    ctx: Context, key: JobKey, job: WorkloadSpec, g: Gate, top: int, avail: float
) -> int | None:
    """The fewest GPUs (a count of COUNTS up to ``top``) whose copies each hold ``job`` at
    their share of its batch on one GPU (``batch_copies``); None where none does."""
    assert g.backend is not None
    for c in COUNTS:
        if c > top:
            break
        if variant_memory(ctx, key, job, c, g.backend, g.flash_attention).total <= avail:
            return c
    return None


def _replica_counts(ctx: Context, top: int, per: int) -> list[int]:
    """The counts a stated Megatron layout of ``per`` GPUs a replica is planned at: the count
    asked (constraints.num_gpus, any multiple of ``per``: 24 or 48 as well as 64), else the
    counts of COUNTS up to ``top`` that make whole replicas."""
    exact = ctx.limits.exact_gpus
    if exact is not None:
        return [exact] if exact % per == 0 else []
    return [c for c in COUNTS if c <= top and c % per == 0]


def _fewest_replicas(
    ctx: Context, key: JobKey, job: WorkloadSpec, g: Gate, top: int, per: int, avail: float
) -> int | None:
    """The fewest GPUs (``_replica_counts``: the count asked, else a count of COUNTS, whole
    replicas of ``per``) whose memory per GPU holds ``job`` under its stated Megatron layout
    (workload._megatron_memory)."""
    assert g.backend is not None
    for c in _replica_counts(ctx, top, per):
        if variant_memory(ctx, key, job, c, g.backend, g.flash_attention).total <= avail:
            return c
    return None


def _too_big_layout(
    gpu: GpuSpec, ctx: Context, run: WorkloadSpec, g: Gate, lay: MegatronLayout, top: int
) -> Exclusion:
    """Why no count holds the job under its stated layout: its memory per GPU on the count
    asked, else on the most GPUs allowed that make whole replicas (or why none do)."""
    assert g.backend is not None
    mp = lay.model_parallel
    counts = _replica_counts(ctx, top, mp)
    if not counts:
        why = (
            f"needs more GPUs than the {top} allowed here"
            if mp > top
            else f"makes whole replicas of none of the counts planned up to {top} (powers of "
            f"two): give constraints.num_gpus as a multiple of {mp}"
        )
        return Exclusion(
            "filtered_out",
            f"the stated Megatron layout ({lay.label}: {mp} GPUs per replica) {why}",
        )
    c = counts[-1]
    key: JobKey = (ctx.work.precision, run.precision, (), None, None)
    need = variant_memory(ctx, key, run, c, g.backend, g.flash_attention).total
    return Exclusion(
        "does_not_fit",
        f"needs {gib(need)} GiB per GPU under Megatron {lay.label} on {c} GPUs (no memory "
        f"saver makes it fit); has {gib(shown_memory(gpu, run, 0.0)[1])} GiB usable",
    )


def _whole_replicas(out: list[Configuration], ctx: Context) -> list[Configuration] | Exclusion:
    """A stated Megatron layout runs replicas of TP×PP×CP GPUs: only the counts it divides
    (the API refuses a num_gpus it does not divide, app/recommend/service.py)."""
    lay = getattr(ctx.work, "megatron", None)
    if lay is None or getattr(ctx.work, "runtime", None) != "megatron":
        return out
    mp = lay.model_parallel
    kept = [c for c in out if c.num_gpus % mp == 0]
    if kept:
        return kept
    counts = ", ".join(str(c) for c in sorted({c.num_gpus for c in out}))
    return Exclusion(
        "filtered_out",
        f"the stated Megatron layout ({lay.label}: {mp} GPUs per replica) divides none of "
        f"the GPU counts that hold the job here ({counts})",
    )


def too_big(
    gpu: GpuSpec,
    ctx: Context,
    run: WorkloadSpec,
    total1: float | None,
    max_n: int,
    usable: float | None = None,
) -> Exclusion:
    """Why no count of ``gpu`` up to ``max_n`` holds the job (``total1``: its size on one).
    ``usable``: ``usable_gb(gpu, run)`` where the caller holds it (the catalog snapshot's
    column, app/domain/fleet.py: the same value), else worked out here."""
    n = ctx.limits.exact_gpus or max_n
    # one GPU is all the limits (or the card: an Apple GPU does not pool) allow: nothing is
    # sharded, so the reason says so instead of "even when sharded"
    # the figures said: the claim a row shows as available, the reserve inside the need
    # (shown_memory); the checks below compare the job's tensors with ``usable``, the claim
    # less the reserve (usable_gb's own difference), each worked out once
    claim, reserve = claimed_gb(gpu, run), startup_reserve_gb(gpu, run)
    if usable is None:
        usable = claim - reserve
    need1, _ = shown_memory(gpu, run, total1, claim=claim, reserve=reserve)
    each = f"{gib(claim)} GiB usable"
    levers = _pipeline_hint(gpu, ctx, run, usable)
    if batch_copies(run) and n > 1:
        # extra GPUs run copies, each holding the whole model (no runtime splits it): only
        # a copy's share of the batch shrinks
        share = copy_batch(run, n)
        said = f"needs {gib(need1)} GiB on one GPU; extra GPUs run whole copies"
        if shard_copies(run) and run.batch_size > 1:
            # over a dataset each copy runs the stated batch on its own shard: more copies
            # add speed, never room; a smaller batch_size is what shrinks a copy
            return Exclusion(
                "does_not_fit",
                f"{said}, each at the batch of {run.batch_size} on its own share of the "
                f"samples (no runtime splits this model), more than the {each}: a smaller "
                f"batch_size shrinks each copy{levers}",
            )
        if share >= run.batch_size:
            # batch 1: no share is smaller, so one GPU's figure is the copy's (two figures
            # in one sentence had read as a contradiction)
            return Exclusion("does_not_fit", f"{said} (no runtime splits this model), more "
                             f"than the {each}{levers}")  # fmt: skip
        one_copy = replace(run, batch_size=share)
        copy = shown_memory(gpu, one_copy, memory_breakdown(one_copy, num_gpus=1).total)[0]
        # the levers of what each GPU runs: the whole batch's had hidden one that holds a copy
        levers = _pipeline_hint(gpu, ctx, one_copy, usable)
        return Exclusion(
            "does_not_fit",
            f"{said} (no runtime splits this model); a copy at batch {share}, its share on "
            f"{n} GPUs, needs {gib(copy)} GiB, more than the {each}{levers}",
        )
    where = f"one GPU of {each}" if n == 1 else f"{n} GPUs of {each} even when sharded"
    if n == 1:
        where = _room_margin(usable, total1, claim - usable) or where
    elif _offloadable(gpu, run):
        # the per-GPU figure sharded (checkpointed), which "even when sharded" alone hid, at
        # the micro-batch the walk would run there: the full batch had quoted 428 GB per GPU
        # on 2 against 46 on one (that one at micro-batch 1)
        micro = least_micro(ctx, run, n)
        per = memory_breakdown(_least_job(run, micro), num_gpus=n).total
        ckpt = "" if run.gradient_checkpointing else ", with activation checkpointing"
        said = _micro_words(run, micro)
        where = f"{where} ({gib(per)} GiB per GPU on {n}{ckpt}{',' if said else ''}{said})"
    return Exclusion(
        "does_not_fit",
        f"needs {gib(need1)} GiB on one GPU; does not fit in {where}"
        f"{_fewer_seqs(gpu, run, usable, total1)}{_wired_limit(gpu, total1)}"
        f"{_offload_hint(gpu, ctx, run, n, usable)}{levers}"
        f"{megatron.fits_hint(run, n, usable * (1.0 - ROOM), gpu.backends)}",
    )


def _pipeline_hint(gpu: GpuSpec, ctx: Context, run: WorkloadSpec, usable: float) -> str:
    """A diffusion pipeline's memory levers on one card (pipeline_offload.hint), where the job
    may run on one (diffusers' offload hooks place a pipeline on one device) under a PyTorch
    program, on a card with device memory behind a host link (unified memory has nothing to
    offload to)."""
    if ctx.limits.exact_gpus not in (None, 1) or run.training:
        return ""
    if not pipeline_frozen_params(run.model):
        return ""  # not a diffusion pipeline: nothing to offload (workload.model_offload)
    if run.runtime not in (None, *TORCH_PROGRAM_RUNTIMES):
        return ""
    if perf.host_bandwidth_gbs(gpu, None) is None:
        return ""
    own = gate(gpu, run.precision, run.runtime, ctx)
    eight = gate(gpu, "fp8", run.runtime, ctx)
    fp8 = eight.exclusion is None and eight.precision == "fp8"
    return pipeline_offload.hint(run, usable, fp8=fp8, backend=own.backend or "cuda")


def least_micro(ctx: Context, run: WorkloadSpec, n: int) -> int:
    """The smallest (micro-)batch a training job runs on ``n`` GPUs: the least of the walk's
    micro-batches (``_build_ladder``: the batch halved) that still gives every GPU a sample
    (``_fed``) where the request allows micro-batches, else the batch; a batch smaller than
    ``n`` raised to one sample a GPU (FSDP gives every GPU whole samples)."""
    micro = run.batch_size
    if "micro_batch" in ctx.savers_allowed:
        while micro // 2 >= n:
            micro //= 2
    return max(micro, n)


def _least_job(run: WorkloadSpec, micro: int) -> WorkloadSpec:
    """``run`` checkpointed at (micro-)batch ``micro``: accumulating gradients where that is
    below its batch (``_with_savers``), the batch itself where it is raised to it."""
    if micro < run.batch_size:
        return _with_savers(run, ("checkpointing", "micro_batch"), micro)
    return replace(run, gradient_checkpointing=True, batch_size=micro)


def _micro_words(run: WorkloadSpec, micro: int) -> str:
    """How the batch runs in a per-GPU figure: at micro-batches with gradient accumulation, at
    a batch raised to one sample a GPU, or (nothing said) as asked."""
    if micro < run.batch_size:
        return f" at micro-batches of {micro} with gradient accumulation"
    if micro > run.batch_size:
        return f" at batch {micro} (one sample a GPU)"
    return ""


def _offloadable(gpu: GpuSpec, run: WorkloadSpec) -> bool:
    """A training job FSDP can shard and offload: PyTorch, not Megatron's own layouts, on a
    card with device memory behind a host link (unified memory has nothing to offload to)."""
    return (
        run.training
        and run.runtime in TORCH_PROGRAM_RUNTIMES
        and perf.host_bandwidth_gbs(gpu, None) is not None
    )


# FSDP CPU offload's measured peak over parallelism.cpu_offload's rule: Answer.AI's Llama-2 70B
# QLoRA, context 2048, batch 2 a GPU on 2 × RTX 3090/4090 with --use_cpu_offload peaked at
# 14.92 GiB a GPU (AnswerDotAI/fsdp_qlora benchmarks_03_2024.md) where the rule says 10.16 (the
# allocator's blocks, bitsandbytes' dequantisation buffers and FSDP's prefetched layer it does
# not count): the one published peak, so a hint says "fits" only where the measured scale fits
OFFLOAD_MEASURED_OVER_RULE = 14.92 / 10.16


def _offload_hint(gpu: GpuSpec, ctx: Context, run: WorkloadSpec, n: int, usable: float) -> str:
    """Where FSDP's parameter CPU offload (parallelism.cpu_offload) holds a training job no
    count holds on the GPUs: the fewest GPUs up to ``n`` it fits on (``n`` where the count is
    exact), its memory per GPU, the host RAM it needs and the host copies it adds a step."""
    if not _offloadable(gpu, run):
        return ""
    counts = [n] if ctx.limits.exact_gpus else [c for c in (1, 2, 4, 8, 16) if c < n] + [n]
    for c in counts:
        # at the micro-batch the walk would run on c (the full batch of 128 had hidden a
        # route that fits at micro-batches of 2)
        micro = least_micro(ctx, run, c)
        job = _least_job(run, micro)
        off = cpu_offload(gpu, job, c, memory_breakdown(job, num_gpus=c))
        need = off.gpu_gb * OFFLOAD_MEASURED_OVER_RULE  # as measured, not the rule's floor
        if need > usable * (1.0 - ROOM):
            continue
        link = perf.host_bandwidth_gbs(gpu, None) or 0.0
        on = ("one GPU" if c == 1 else f"{c} GPUs") + _micro_words(run, micro)
        # Offload's copies are per micro-step (parallelism.Offload.copy_gb)
        steps = -(-run.batch_size // (micro * c)) if micro * c < run.batch_size else 1
        step = f"micro-step ({steps:,} to an optimizer step)" if steps > 1 else "step"
        return (
            f"; fits with FSDP CPU offload of the parameters (torch FSDP "
            f"CPUOffload(offload_params=True), fsdp_qlora --use_cpu_offload, gradient "
            f"checkpointing): about {gib(need)} GiB per GPU on {on} (the rule's "
            f"{gib(off.gpu_gb)} × {OFFLOAD_MEASURED_OVER_RULE:.2f}, what Answer.AI's "
            "measured Llama-2 70B peak read over it), "
            f"needs about "
            f"{off.host_gb:,.0f} GB of host RAM for the offloaded shards (more while the "
            f"checkpoint loads), and is slower: each {step} copies {off.copy_gb:,.1f} GB per "
            f"GPU between host and GPU, ~{off.copy_s:,.1f} s at {link:,.0f} GB/s over its PCIe "
            "link, which overlaps compute only as far as FSDP's prefetch of the next layer"
        )
    return ""


def _room_margin(usable: float, total1: float | None, reserve: float = 0.0) -> str:
    """Where the job's least size is within the usable memory but not within the ROOM the walk
    keeps free once it adds a saver (``_walk``): that margin, said, so that "needs 7.8 GB; does
    not fit in 8.0 GB" does not read as a contradiction. ``reserve``: the runtime's startup
    reserve, said inside the need and the usable figure (``shown_memory``)."""
    if total1 is None or total1 > usable or total1 <= usable * (1.0 - ROOM):
        return ""
    return (
        f"the {gib(usable * (1.0 - ROOM) + reserve)} GiB the engine leaves room for on one "
        f"GPU: {gib(usable + reserve)} GiB usable less the {ROOM:.0%} it keeps free where "
        "it adds a memory "
        "saver (its peaks fall within 10 % of measured ones; the allocator's fragmentation "
        "takes more)"
    )


def _wired_limit(gpu: GpuSpec, total1: float | None) -> str:
    """Where an Apple GPU misses only by the share of unified memory macOS lets it wire by default
    (efficiency.wired_share: 2/3 up to 32 GB, 3/4 above): the sysctl mlx-lm's README gives to
    raise it.
    ``total1``: the job on one GPU, in 10^9 bytes (MemoryBreakdown.total)."""
    if gpu.vendor != "apple" or total1 is None:  # the sysctl is macOS's
        return ""
    if total1 >= efficiency.device_memory_gb(gpu):
        return ""
    return (
        f"; macOS lets the GPU wire about {efficiency.wired_share(gpu):.0%} of the "
        f"{gpu.memory_gb:g} GiB by default, and `sudo sysctl iogpu.wired_limit_mb=N`, N above "
        "the job's size and below the machine's memory, raises it (mlx-lm's README), which "
        "this answer does not assume"
    )


def _fewer_seqs(gpu: GpuSpec, run: WorkloadSpec, usable: float, total1: float | None) -> str:
    """Where a profiling runtime's peak (vLLM's sampler over its default max_num_seqs) is what
    keeps the job off one GPU: the --max-num-seqs, no fewer than the job's batch, that fits."""
    spec = efficiency.serving_spec(run.efficiency, run.runtime)
    if spec is None or run.training or total1 is None:
        return ""
    vocab = run.model.vocab_size
    rows = efficiency.default_max_seqs(spec, gpu)
    peak = efficiency.profiling_peak_gb(spec.profile_bytes_per_logit, rows, vocab)
    return efficiency.fewer_seqs_hint(
        spec.profile_bytes_per_logit, vocab, rows, usable + peak - total1, least=run.batch_size
    )


@dataclass(slots=True)
class Admitted:
    """A configuration that passed every check made before its roofline: the software, the
    memory and (under a price objective or budget) its price; what ``evaluate`` needs to
    finish it."""

    config: Configuration
    gate: Gate
    key: JobKey
    run: WorkloadSpec
    warnings: tuple[str, ...]
    caveats: tuple[str, ...]
    available_gb: float
    memory: MemoryBreakdown
    # The configuration's prices: read before the roofline only when the budget or objective
    # needs a price; else by ``finish`` (None until then), as most admissions never finish.
    priced: GpuSpec | None
    pricing: costs.Pricing | None
    # the runtime's startup reserve per GPU (startup_reserve_gb), inside available_gb's cut,
    # and the job one replica runs (a copy's share of the batch): the row shows the reserve
    reserve_gb: float = 0.0
    sized: WorkloadSpec | None = None


def price_known(config: Configuration, ctx: Context) -> bool:
    """Whether the configuration has a price the way the question acquires, as its result
    would say (rank.price_known): its offers' verdict, else the catalog's prices."""
    basis = _price_basis(config, ctx)
    if basis is None:
        return False
    purchase, hourly = costs.prices(basis[0], config.num_gpus, basis[1])
    return costs.priced_as_asked(ctx.limits.acquisition, purchase, hourly)


def _price_basis(
    config: Configuration, ctx: Context
) -> tuple[GpuSpec, costs.Pricing | None] | None:
    """The prices the configuration is costed at (its card's or its offer's per-GPU prices,
    and the offers chosen for it), None where it has no purchase or rental price."""
    if ctx.offers is not None and config.offer is None and config.gpu.slug not in ctx.offers:
        return None  # offers price every configuration, and this GPU has none (prices_known)
    pricing = _offer_pricing(config, max(1, config.num_gpus), ctx)
    priced = _priced(config.gpu, config.offer)
    if pricing is not None:
        return (priced, pricing) if pricing.price_known else None
    purchase, hourly = costs.prices(priced, config.num_gpus)
    return (priced, None) if purchase is not None or hourly is not None else None


_OFFER = attrgetter("offer")


def prices_known(planned: list[Configuration], ctx: Context) -> bool | None:
    """Whether every one of a card's configurations has a price (True), none has (False), or
    some have (None)."""
    if (
        ctx.offers is not None
        and planned
        and planned[0].gpu.slug not in ctx.offers
        and not any(map(_OFFER, planned))  # read in C: most cards of a large catalog come here
    ):
        return False  # offers price every configuration, and this GPU has none
    known = {price_known(c, ctx) for c in planned}
    return known.pop() if len(known) == 1 else None


def only_price_left(config: Configuration, ctx: Context) -> bool:
    """Whether ``admit`` has nothing but the price left to check for a configuration ``plan``
    made on one card: plan filtered the card, gated its software and held the job's memory on
    one card against the same usable memory, and a job without gated features (QLoRA, 8-bit
    optimiser states) has no software check left. A true answer is admit's
    (tests/recommend/test_fast_paths.py holds it over the catalog); a false one says nothing."""
    v = config.variant
    if v is None or config.num_gpus != 1:
        return False
    run = job_variant(ctx, v[1])
    return run.peft != "qlora" and run.optimizer != "adam8bit"


def admitted_as_planned(config: Configuration, ctx: Context) -> bool:
    """Whether ``admit`` passes the configuration with nothing to check: only the price was
    left (``only_price_left``), and nothing is priced without a price objective or budget."""
    return not (ctx.apply_filters and ctx.limits.needs_price) and only_price_left(config, ctx)


def price_verdict(config: Configuration, ctx: Context) -> Exclusion | None:
    """Admit's verdict on the configuration's price alone, under a price objective or budget:
    why the price rules it out (no price, over budget), or None."""
    return _price_check(config, max(1, config.num_gpus), ctx)[2]


def _price_check(
    config: Configuration, n: int, ctx: Context
) -> tuple[GpuSpec, costs.Pricing | None, Exclusion | None]:
    """The configuration's prices, and the budget's verdict on them before the roofline."""
    priced = _priced(config.gpu, config.offer)
    pricing = _offer_pricing(config, n, ctx)
    pre = PriceOnly(*costs.prices(priced, n, pricing))
    _, excl = budget(pre, ctx.limits, *_reasons(pricing), gpus=n)
    return priced, pricing, excl


def evaluate(config: Configuration, ctx: Context) -> ConfigResult:
    """Memory, speed, cost and support of one configuration; an exclusion when it cannot run."""
    a = admit(config, ctx)
    return a if isinstance(a, ConfigResult) else finish(a, ctx)


def admit(config: Configuration, ctx: Context) -> Admitted | ConfigResult:
    """The checks before the roofline: the configuration's result when one of them excludes
    it, else what the roofline and the costs need. A serving shape is evaluated whole here
    (serving_step.evaluate: the continuous-batching solve is its roofline)."""
    if ctx.work.task == "serving":
        return serving_step.evaluate(config, ctx)
    gpu, n = config.gpu, max(1, config.num_gpus)
    if ctx.apply_filters:
        excl = filtered_out(gpu, ctx.limits)
        if excl is not None:
            return ConfigResult(config, excl)
    g, key = _variant(config, ctx)
    if key is None:
        return ConfigResult(config, g.exclusion, backend=g.backend)
    assert g.backend is not None
    run = job_variant(ctx, key)
    why, caveats = compat.job_support(
        gpu,
        compat.job_features(
            run.peft, run.optimizer, paged=run.paged_optimizer, runtime=run.runtime
        ),
        ctx.rules,
        g.backend,
    )
    if why is not None:
        return ConfigResult(config, Exclusion("framework_unsupported", why), backend=g.backend)
    warnings = g.warnings + caveats
    if run.training and g.precision == "fp8" and run.runtime in TORCH_PROGRAM_RUNTIMES:
        warnings += (FP8_TRAINING_CAVEAT,)
    if config.copies > 1:
        # each GPU holds its copy's share: a replica of n ÷ copies GPUs at its share of the batch
        per = n // config.copies
        ckey, cjob = copy_job(ctx, key, run, config.copies)
        mem = variant_memory(ctx, ckey, cjob, per, g.backend, g.flash_attention)
        sized = cjob
    else:
        per = n
        mem = variant_memory(ctx, key, run, n, g.backend, g.flash_attention)
        sized = run
    reserve = startup_reserve_gb(gpu, sized, per)
    avail = claimed_gb(gpu, sized, per) - reserve  # usable_gb
    if mem.total > avail:
        shown, claimed = _with_reserve(gpu, sized, mem, avail, reserve)
        return ConfigResult(
            config,
            Exclusion(
                "does_not_fit",
                f"needs {gib(shown.total)} GiB per GPU on {n}, has {gib(claimed)} GiB usable",
            ),
            work=run,
            backend=g.backend,
            memory=shown,
            available_gb=claimed,
        )
    priced = pricing = None
    # Cut on price before the roofline when the price alone breaks the budget.
    if ctx.apply_filters and ctx.limits.needs_price:
        priced, pricing, excl = _price_check(config, n, ctx)
        if excl is not None:
            return ConfigResult(config, excl, work=run, backend=g.backend, memory=mem)
    seqs = _seqs_needed(gpu, sized, avail - mem.total)
    if seqs:
        warnings += (seqs,)
    return Admitted(
        config, g, key, run, warnings, caveats, avail, mem, priced, pricing, reserve, sized
    )


def _seqs_needed(gpu: GpuSpec, run: WorkloadSpec, room: float) -> str:
    """Where the job fits only because its runtime's startup reserve is taken at the batch it
    runs (usable_gb: vLLM's sampler over --max-num-seqs = the batch) and the default
    max_num_seqs would keep more than ``room`` (GB per GPU left at the batch's reserve): the
    flag to deploy with, since vLLM's default would leave no room."""
    spec = efficiency.serving_spec(run.efficiency, run.runtime)
    if spec is None or run.training or spec.profile_bytes_per_logit is None:
        return ""
    vocab = run.model.vocab_size
    rows = efficiency.default_max_seqs(spec, gpu)
    if run.batch_size >= rows:
        return ""
    per = spec.profile_bytes_per_logit
    peak = efficiency.profiling_peak_gb(per, rows, vocab)
    if peak - efficiency.profiling_peak_gb(per, run.batch_size, vocab) <= room:
        return ""
    most = run.batch_size + efficiency.seqs_for_room(per, vocab, room)
    return (
        f"fits with vLLM's --max-num-seqs at most {most:,} (the batch is {run.batch_size:,}): "
        f"its default {rows:,} keeps {gib(peak)} GiB per GPU for the sampler's startup "
        "profiling and leaves no room"
    )


def _variant(config: Configuration, ctx: Context) -> tuple[Gate, JobKey | None]:
    """The configuration's software gate and the job variant it runs (None: gated out)."""
    if config.variant is not None:
        return config.variant
    asked = config.precision or ctx.work.precision
    runtime = config.runtime or getattr(ctx.work, "runtime", None)
    g = gate(config.gpu, asked, runtime, ctx)
    if g.exclusion is not None:
        return g, None
    assert g.precision is not None
    return g, (asked, g.precision, config.savers, config.micro_batch, config.runtime)


def _reasons(pricing: costs.Pricing | None) -> tuple[str | None, str | None]:
    """(why no rental price, why no purchase price) for the budget's message."""
    if pricing is None:
        return None, None
    return pricing.rent_reason, pricing.buy_reason


def _split(
    ctx: Context, key: JobKey, run: WorkloadSpec, g: Gate, n: int, avail: float
) -> tuple[bool, int, int]:
    """How ``run`` spreads over ``n`` GPUs of ``avail`` GB: the micro-steps of gradient
    accumulation per global batch, and the fewest GPUs (a power of two) that must shard the
    model's states between them, each group of them taking its share of the batch: 1 means
    data parallel (every GPU holds the model, 1/n of the batch), ``n`` fully sharded, and in
    between a shard group the rest of the ``n`` replicate. Returns (sharded, steps, group)."""
    assert g.backend is not None
    steps = math.ceil(ctx.work.batch_size / run.batch_size)
    if batch_copies(run):
        return False, steps, 1  # copies, each on its share of the batch: never sharded
    one = variant_memory(ctx, key, run, 1, g.backend, g.flash_attention)
    if n <= 1 or one.total <= avail:
        return False, steps, 1
    if not run.training:
        return True, steps, n
    group = 1
    while group < n:
        # a group of `group` GPUs shards the states and runs group/n of the batch (its memory
        # depends on the job, not the card: once per request for every card)
        gkey = ("shard group", key, n, group, g.backend, g.flash_attention)
        total: float | None = ctx.memo.get(gkey)
        if total is None:
            share = replace(run, batch_size=max(1, math.ceil(run.batch_size * group / n)))
            total = memory_breakdown(
                share, num_gpus=group, backend=g.backend, flash_attention=g.flash_attention
            ).total
            ctx.memo[gkey] = total
        if total <= avail:
            break
        group *= 2
    return group > 1, steps, min(group, n)


def _chosen_layout(
    gpu: GpuSpec,
    ctx: Context,
    key: JobKey,
    run: WorkloadSpec,
    g: Gate,
    n: int,
    start: MegatronLayout,
    avail: float,
) -> tuple[MegatronLayout, WorkloadSpec, MemoryBreakdown] | Exclusion:
    """The Megatron layout the engine runs a job that states none on ``n`` GPUs, the job with
    it and its memory per GPU (megatron.state_bytes, activation_bytes: the one memory model a
    stated layout has, vocab-parallel logits included): ``start`` (megatron.default_layout,
    sized by the memory of the job sharded) where Megatron accepts it for the model
    (megatron.layout_error) and it holds the job, else the next wider one that does, tensor
    parallel inside a server first, then pipeline stages (Narayanan et al. 2021 §3.3). A
    narrower one that holds the job under Megatron's own memory is taken first: ``start`` is
    sized by FSDP's, which shards no optimizer state across data parallel the way the
    distributed optimizer does, and it had put Llama 3.1 8B at 8k tokens on 8 MI300Xs at TP2
    (66 % scaling) where TP1 holds it (147 of 192 GiB) and runs 1.5× as fast. Why none does
    where none does."""
    assert g.backend is not None
    node = topology.fabric(gpu).node
    shapes = [
        MegatronLayout(tp=tp, pp=pp)
        for pp in COUNTS
        for tp in (8, 4, 2, 1)
        if tp <= node and n % (tp * pp) == 0
    ]
    # narrower: Megatron adds pipeline stages only once TP fills the server (§3.3)
    narrower = [
        lay
        for lay in shapes
        if lay.model_parallel < start.model_parallel and (lay.pp == 1 or lay.tp == min(node, 8))
    ]
    wider = [lay for lay in shapes if lay.model_parallel > start.model_parallel]
    narrower.sort(key=lambda lay: (lay.model_parallel, lay.pp))
    wider.sort(key=lambda lay: (lay.model_parallel, lay.pp))
    for lay in narrower:
        if megatron.layout_error(run.model, run.seq_len, lay) is None:
            job, mem = _laid_out(ctx, key, run, g, n, lay)
            if mem.total <= avail:
                return lay, job, mem
    first: tuple[MegatronLayout, WorkloadSpec, MemoryBreakdown] | None = None
    for lay in (start, *wider):
        if megatron.layout_error(run.model, run.seq_len, lay) is not None:
            continue
        job, mem = _laid_out(ctx, key, run, g, n, lay)
        first = first or (lay, job, mem)
        if mem.total <= avail:
            return lay, job, mem
    if first is None:
        return start, run, variant_memory(ctx, key, run, n, g.backend, g.flash_attention)
    lay, _, mem = first
    return Exclusion(
        "does_not_fit",
        f"needs {gib(mem.total)} GiB per GPU under Megatron {lay.label} on {n} GPUs, and "
        f"no wider layout of tensor and pipeline parallelism holds it; has {gib(avail)} GiB "
        "usable",
    )


def _laid_out(
    ctx: Context, key: JobKey, run: WorkloadSpec, g: Gate, n: int, lay: MegatronLayout
) -> tuple[WorkloadSpec, MemoryBreakdown]:
    """``run`` laid out as ``lay`` on ``n`` GPUs and its memory per GPU, once per request."""
    assert g.backend is not None
    job = replace(run, megatron=lay)
    mkey = ("megatron memory", key, n, lay, g.backend, g.flash_attention)
    mem: MemoryBreakdown | None = ctx.memo.get(mkey)
    if mem is None:
        mem = ctx.memo[mkey] = memory_breakdown(
            job, num_gpus=n, backend=g.backend, flash_attention=g.flash_attention
        )
    return job, mem


def _layout_words(gpu: GpuSpec, lay: MegatronLayout, n: int, batch: int) -> tuple[str, ...]:
    """What a Megatron row must say of its layout: a pipeline its batch cannot fill, a tensor
    parallel group that crosses servers."""
    said = (megatron.underfilled(lay, n, batch), megatron.tp_across_nodes(gpu, lay))
    return tuple(w for w in said if w is not None)


def _layout_memory(
    ctx: Context, key: JobKey, run: WorkloadSpec, g: Gate, n: int, group: int
) -> MemoryBreakdown:
    """Per-GPU memory when ``group`` of the ``n`` GPUs share one copy of the model states and
    each group runs group/n of the batch (1: DDP, every GPU a whole copy), once per request."""
    assert g.backend is not None
    mkey = ("layout memory", key, n, group, g.backend, g.flash_attention)
    hit: MemoryBreakdown | None = ctx.memo.get(mkey)
    if hit is None:
        share = replace(run, batch_size=max(1, math.ceil(run.batch_size * group / n)))
        hit = ctx.memo[mkey] = memory_breakdown(
            share, num_gpus=group, backend=g.backend, flash_attention=g.flash_attention
        )
    return hit


def finish(a: Admitted, ctx: Context, words: bool = True) -> ConfigResult:
    """The roofline, the costs and the budget of an admitted configuration; ``words``: False
    for a configuration whose warnings no answer shows (a shown row's alternatives: the same
    figures, verdict and prices, no warnings or caveats worked out)."""
    config, g, run, mem, avail = a.config, a.gate, a.run, a.memory, a.available_gb
    gpu, n = config.gpu, max(1, config.num_gpus)
    assert g.backend is not None
    if run.is_llm_inference:
        # its estimate (_llm_estimate) reads no split: only the micro-steps, as _split has them
        return _finish_priced(
            a, ctx, run, mem, None, False, math.ceil(ctx.work.batch_size / run.batch_size), 1, words
        )
    sharded, steps, need = _split(ctx, a.key, run, g, n, avail)
    lay = perf.megatron_layout(run, n, sharded=sharded, shard_min=need) if run.training else None
    if lay is not None and run.megatron is None:
        # the layout the engine picks for the row: its memory is the layout's (not the sharded
        # job's the plan sized it by), and the estimate prices the same layout
        chosen = _chosen_layout(gpu, ctx, a.key, run, g, n, lay, avail)
        if isinstance(chosen, Exclusion):
            return ConfigResult(config, chosen, work=run, backend=g.backend, memory=mem)
        lay, run, mem = chosen
    return _finish_priced(a, ctx, run, mem, lay, sharded, steps, need, words)


def _finish_priced(
    a: Admitted,
    ctx: Context,
    run: WorkloadSpec,
    mem: MemoryBreakdown,
    lay: MegatronLayout | None,
    sharded: bool,
    steps: int,
    need: int,
    words: bool = True,
) -> ConfigResult:
    """``finish`` once the row's layout is known: the estimate of ``run`` laid out so, its
    costs, budget and (``words``) its warnings."""
    config, g, avail = a.config, a.gate, a.available_gb
    gpu, n = config.gpu, max(1, config.num_gpus)
    assert g.backend is not None
    # copies over a dataset each run the stated batch on one GPU (``shard_copies``): one
    # copy's estimate, then as many side by side (``_as_batch_copies``)
    sharding = n > 1 and shard_copies(run)
    est = (
        _llm_estimate(ctx, gpu, a.key, run, g, n, config.copies)
        if run.is_llm_inference
        else perf.estimate(
            gpu,
            run,
            framework=ctx.framework,
            num_gpus=1 if sharding else n,
            calibration=ctx.calibration,
            flash_attention=g.flash_attention,
            sharded=sharded,
            accumulation_steps=steps,
            backend=g.backend,
            one=_one_gpu(ctx, gpu, a.key, run, g),
            shard_min=need,
        )
    )
    if n > 1 and batch_copies(run):
        est = _as_batch_copies(est, run, n)
    if lay is None and est.shard_group and n > 1:
        # the memory of the layout the row runs, not of the job sharded over all n: a DDP
        # replica holds the whole model, an HSDP group shards it over the group only (what
        # _split found fits)
        mem = _layout_memory(ctx, a.key, run, g, n, est.shard_group)
    warnings = (
        _with_fp32_speed(
            a.warnings, g, gpu, est.compute_precision, est.decode_bottleneck or est.bottleneck
        )
        if words
        else ()
    )
    if words and run.peft == "qlora" and n > 1 and est.shard_group != 1:
        # sharding 4-bit weights is what FSDP-QLoRA added; under DDP each GPU loads its whole
        # 4-bit copy as on one card (AnswerDotAI/fsdp_qlora train.py runs QLoRA with --use_ddp)
        warnings += (
            "QLoRA on several GPUs needs FSDP-QLoRA (bitsandbytes ≥ 0.43 with PEFT/Accelerate "
            "FSDP, Answer.AI 2024): less common than one card",
        )
    if words and lay is not None:
        warnings += _layout_words(gpu, lay, n, ctx.work.batch_size)
    if not math.isfinite(est.throughput) or est.throughput <= 0:
        return ConfigResult(
            config,
            Exclusion("no_figures", "the catalog has no compute figures to model this GPU"),
            work=run,
            backend=g.backend,
            memory=mem,
        )
    if a.priced is None:
        a.priced = _priced(gpu, config.offer)
        a.pricing = _offer_pricing(config, n, ctx)
    cost = _costs(ctx, run, n, est.throughput, a.priced, a.pricing)
    acquired, pricing = ctx.limits.acquisition, a.pricing
    if ctx.limits.judges_costs:  # else budget passes the way asked, and left_out takes none
        acq, excl = budget(cost, ctx.limits, *_reasons(a.pricing), gpus=n)
        if excl is None:
            excl = deadline(cost.time_to_finish_h, ctx.limits)
        if excl is not None and ctx.apply_filters:
            return ConfigResult(
                config, excl, work=run, backend=g.backend, memory=mem, perf=est, cost=cost
            )
        acquired = acq or acquired
        out = left_out(cost, ctx.limits, acquired, n) if acq is not None else None
        if out is not None:
            cost, pricing = without_left_out(cost, pricing, out)
    if words:
        warnings += _finish_words(a, ctx, run, mem, lay, cost, acquired, pricing)
    if a.reserve_gb > 0.0:
        mem, avail = _with_reserve(gpu, a.sized or run, mem, avail, a.reserve_gb)
    meets = None
    if ctx.work.latency_target_ms is not None and est.latency_ms is not None:
        meets = est.latency_ms <= ctx.work.latency_target_ms
    # positional, in field order: one per configuration finished (Candidate.of's reason)
    return ConfigResult(
        config,
        None,
        run,
        g.backend,
        "experimental" if a.caveats else g.status,
        mem,
        avail,
        est,
        cost,
        acquired,
        warnings,
        g.derived_peak,
        meets,
        steps,
        pricing,
    )


def _finish_words(
    a: Admitted,
    ctx: Context,
    run: WorkloadSpec,
    mem: MemoryBreakdown,
    lay: MegatronLayout | None,
    cost: costs.CostEstimate,
    acquired: str,
    pricing: costs.Pricing | None,
) -> tuple[str, ...]:
    """A finished row's caveats: what it buys (cooling, the host the cards need: they follow
    the ways the row offers), an uneven split of the batch, a tight fit."""
    gpu, n, backend = a.config.gpu, max(1, a.config.num_gpus), a.gate.backend
    assert backend is not None
    buys, rents = acquisition_modes(cost, acquired)
    said: tuple[str, ...] = ()
    if buys:  # a row that does not buy carries none (most rows: asked first)
        # the card, its count, the ways offered and the offer paid decide them: the same few
        # words for every request, kept with the rules (~1 % of the open question)
        buy = pricing.buy if pricing is not None else None
        key = ("purchase caveats", gpu, a.config.num_gpus, rents, buy)
        hit: tuple[str, ...] | None = ctx.rules._memo.get(key)
        if hit is None:
            hit = compat.purchase_caveats(gpu, a.config.num_gpus, buys, rents, buy)
            compat.remember(ctx.rules, key, hit)
        said = hit
    laptop = compat.laptop_caveat(gpu)  # bought, rented or neither: its maker's power limit
    if laptop is not None:
        said += (laptop,)
    uneven = _uneven_split(run, n, ctx.work.batch_size, lay)
    if uneven is not None:
        said += (uneven,)
    tight = tight_fit(run, mem, a.available_gb, backend, n, copy_batch(run, n))
    if tight:
        said += (tight,)
    return said


# The fewest LLM inference estimates ``finish_all`` steps as arrays: numpy's fixed cost per
# call (~60 array operations over the two steps) outweighs the Python it saves below about a
# dozen configurations (measured for Llama 3 8B at 2, 4 and 8 GPUs of shipped cards, a fresh
# job each time, on a busy 2-core machine: 2 rows 0.12 ms one by one against 0.32 ms as
# arrays; 8 rows 0.36 against 0.43; 16 rows 0.67 against 0.59; 32 rows 1.20 against 0.90).
BATCH_ESTIMATES = 12


def _as_batch_copies(est: perf.PerfEstimate, run: WorkloadSpec, n: int) -> perf.PerfEstimate:
    """``est`` as the ``n`` copies side by side it is (``batch_copies``), named so: over a
    dataset (``shard_copies``) ``est`` is one copy's, the stated batch on one GPU, and the
    copies with a batch to run (``busy_copies``) multiply it; for one batch ``est`` is
    perf.estimate of ``run`` on ``n`` GPUs, not sharded: each GPU a replica at its share of
    the batch, no link."""
    b = run.batch_size
    share = copy_batch(run, n)
    if shard_copies(run):
        # ``est`` is one copy's (the stated batch on one GPU): the busy ones side by side
        busy = busy_copies(run, n)
        if busy < n:
            label = f"{n} copies × 1 GPU at batch {b}, {busy} of them busy (the dataset's size)"
        else:
            label = f"{n} copies × 1 GPU, each at batch {b} on 1/{n} of the samples"
        return replace(
            est,
            throughput=est.throughput * busy,
            scaling_efficiency=busy / n,
            num_gpus=n,
            parallelism=label,
            copies=n,
        )
    if b % n == 0:
        label = f"{n} copies × 1 GPU, each on 1/{n} of the samples at batch {share}"
    elif b < n:
        label = f"{n} copies × 1 GPU at batch 1, {b} of them busy (a batch of {b})"
    else:
        label = f"{n} copies × 1 GPU, each on up to {share} of the batch of {b}"
    return replace(est, parallelism=label, copies=n)


def finish_all(
    admitted: Sequence[Admitted], ctx: Context, words: bool = True
) -> list[ConfigResult]:
    """``finish`` of each admitted configuration (``words``: as ``finish``'s), to the last bit;
    with ``BATCH_ESTIMATES`` or
    more LLM inference estimates to work out, those are stepped together as arrays first
    (perf.llm_estimates) and kept where ``_llm_estimate`` finds them."""
    todo: dict[tuple[object, ...], perf.LlmCard] = {}
    for a in admitted:
        run, g = a.run, a.gate
        if not run.is_llm_inference:
            continue
        assert g.backend is not None
        gpu, n = a.config.gpu, max(1, a.config.num_gpus)
        if a.config.copies > 1:
            continue  # estimated one by one (``_copies_estimate``): asked only as copies
        lkey = ("llm", gpu.slug, a.key, n)
        if lkey not in ctx.memo:
            todo[lkey] = (gpu, run, n, g.backend)
    if len(todo) >= BATCH_ESTIMATES:
        found = perf.llm_estimates(list(todo.values()), calibration=ctx.calibration)
        ctx.memo.update(zip(todo, found, strict=True))
    return [finish(a, ctx, words) for a in admitted]


def keep_estimate(ctx: Context, config: Configuration, est: perf.PerfEstimate) -> None:
    """``est``, the LLM inference estimate of ``config`` made elsewhere to the last bit (from
    the columns of app/domain/fleet.py), kept where ``_llm_estimate`` finds it."""
    _, key = _variant(config, ctx)
    assert key is not None
    ctx.memo.setdefault(("llm", config.gpu.slug, key, max(1, config.num_gpus)), est)


def throughput_bound(config: Configuration, ctx: Context, *, loose: bool = False) -> float:
    """An upper bound on the throughput ``evaluate`` finds for the configuration: the
    throughput itself, from the parts of the estimate a request shares between counts (the
    one-GPU step, memoised; the communication; for LLM inference the memoised estimate), 0
    when the software gate excludes it, ``inf`` where the step has no finite positive time (a
    caller then evaluates it).

    ``loose``: cheaper and above it, for ordering cards before some are refined. N GPUs take a
    step of perf.split_step_s plus communication, which is never negative, and the sharded split
    is the shorter, so batch ÷ that split is never exceeded; for LLM inference
    perf.llm_throughput_bound (no links, no breakdown, half the cost). Both grow with N."""
    g, key = _variant(config, ctx)
    if key is None:
        return 0.0
    assert g.backend is not None
    run = job_variant(ctx, key)
    gpu, n = config.gpu, max(1, config.num_gpus)
    if run.is_llm_inference:
        if loose:
            # copies: one copy's bound (its share of the batch on n ÷ copies GPUs) × the batch
            # over that share, as perf.as_copies scales the estimate
            cjob, per, scale = _copy_terms(ctx, key, run, config)
            t = scale * perf.llm_throughput_bound(
                gpu,
                cjob,
                framework=ctx.framework,
                num_gpus=per,
                calibration=ctx.calibration,
                backend=g.backend,
            )
        else:
            t = _llm_estimate(ctx, gpu, key, run, g, n, config.copies).throughput
        return t if math.isfinite(t) and t > 0 else math.inf
    one = _one_gpu(ctx, gpu, key, run, g)
    single = one.step_s
    if not (math.isfinite(single) and single > 0):
        return math.inf
    # copies over a dataset each run the stated batch on one GPU a step (``copies_fill``)
    fill = copies_fill(run, n)
    if n > 1 and shard_copies(run):
        t = fill * run.batch_size / single
        return t if math.isfinite(t) and t > 0 else math.inf
    if loose:
        # sharded: the smallest per-GPU step either layout can take
        split = perf.split_step_s(one, n, sharded=True, batch=run.batch_size)
        # however many micro-steps share the optimizer update (perf.least_micro_step_s)
        return fill * run.batch_size / perf.least_micro_step_s(one, split, 0, n)
    sharded, steps, need = _split(ctx, key, run, g, n, usable_gb(gpu, run, n))
    comm = perf.comm_s(gpu, run, one, n, sharded=sharded, accumulation_steps=steps, shard_min=need)
    split = perf.split_step_s(one, n, sharded=sharded, batch=run.batch_size)
    split = perf.least_micro_step_s(one, split, steps, n)
    t = fill * run.batch_size / (split + comm)
    return t if math.isfinite(t) and t > 0 else math.inf


def _copy_terms(
    ctx: Context, key: JobKey, run: WorkloadSpec, config: Configuration
) -> tuple[WorkloadSpec, int, float]:
    """(the job one copy runs, its GPUs, the batch over its share): ``run`` on all the
    configuration's GPUs at a factor 1 where it is one replica."""
    n = max(1, config.num_gpus)
    if config.copies <= 1:
        return run, n, 1.0
    _, one = copy_job(ctx, key, run, config.copies)
    return one, n // config.copies, run.batch_size / one.batch_size


def loose_bounds(configs: Sequence[Configuration], ctx: Context) -> list[float]:
    """``throughput_bound(c, ctx, loose=True)`` of every configuration, to the last bit: the
    LLM inference ones stepped together as arrays (perf.llm_throughput_bounds), one call per
    job shape, the others one by one."""
    out = [0.0] * len(configs)
    scale = [1.0] * len(configs)
    llm: dict[tuple[int, int, int], list[tuple[int, perf.LlmCard]]] = {}
    for i, config in enumerate(configs):
        # most configurations carry their variant (plan made them): read it here, once
        g, key = config.variant if config.variant is not None else _variant(config, ctx)
        if key is None:
            continue  # gated out: 0
        run = job_variant(ctx, key)
        if not run.is_llm_inference:
            out[i] = throughput_bound(config, ctx, loose=True)
            continue
        assert g.backend is not None
        n = max(1, config.num_gpus)
        if config.copies > 1:  # one copy's bound, scaled as throughput_bound scales it
            run, n, scale[i] = _copy_terms(ctx, key, run, config)
        shape = (run.batch_size, run.seq_len, max(1, run.output_tokens))
        card = (config.gpu, run, n, g.backend)
        llm.setdefault(shape, []).append((i, card))
    for group in llm.values():
        bounds = perf.llm_throughput_bounds([c for _, c in group], calibration=ctx.calibration)
        for (i, _), t in zip(group, bounds, strict=True):
            t *= scale[i]
            out[i] = t if math.isfinite(t) and t > 0 else math.inf
    return out


def card_bound(planned: list[Configuration], ctx: Context, *, loose: bool = False) -> float:
    """The largest ``throughput_bound`` over a card's planned configurations; when ``loose``,
    of each job variant only its largest count, as the loose bound grows with the count."""
    if not loose:
        return max(throughput_bound(c, ctx) for c in planned)
    return max_bound(throughput_bound(c, ctx, loose=True) for c in widest(planned))


def widest(planned: list[Configuration]) -> list[Configuration]:
    """Of each job variant among a card's configurations, the one with the most GPUs: the
    loose bound grows with the count, so these bound the card (``card_bound``)."""
    out: dict[object, Configuration] = {}
    if any(c.copies > 1 for c in planned):
        return planned  # copies: a share of the batch per copy, not shown to grow with the count
    for c in planned:
        # the configurations of one plan step share one variant (see plan)
        v = c.variant
        k = v[1] if v is not None else (c.precision, c.runtime, c.savers, c.micro_batch)
        w = out.get(k)
        if w is None or c.num_gpus > w.num_gpus:
            out[k] = c
    return list(out.values())


def max_bound(bounds: Iterable[float]) -> float:
    """The largest of a card's bounds, 0 for none (bounds are never negative nor NaN: 0,
    positive, or inf)."""
    best = 0.0
    for t in bounds:
        if t > best:
            best = t
    return best


def cost_at(config: Configuration, ctx: Context, throughput: float) -> costs.CostEstimate:
    """The configuration's costs were it to run at ``throughput`` (its bound): the prices
    ``evaluate`` would use, the job's hours at that speed."""
    n = max(1, config.num_gpus)
    _, key = _variant(config, ctx)
    run = ctx.work if key is None else job_variant(ctx, key)
    return _costs(
        ctx, run, n, throughput, _priced(config.gpu, config.offer), _offer_pricing(config, n, ctx)
    )


def price_terms(config: Configuration, ctx: Context) -> costs.Rates | None:
    """The rates (costs.rates) ``cost_at`` prices the configuration at, whatever its
    throughput, None where it has no price (``price_known``): with ``costs.values``, its
    value at many throughputs at once."""
    basis = _price_basis(config, ctx)
    if basis is None:
        return None
    priced, pricing = basis
    n = max(1, config.num_gpus)
    return costs.rates(priced, n, ctx.limits.electricity_usd_per_kwh, pricing, ctx.usage)


def price_columns(
    configs: Sequence[Configuration | None],
    gpus: Sequence[GpuSpec],
    counts: Sequence[int],
    ctx: Context,
) -> tuple[list[bool], list[float]]:
    """``price_terms`` of every configuration in one pass: whether it has a price, and its
    rates (purchase, per hour, energy per hour, horizon) flattened four to a configuration,
    NaN for None and in all four places where it has no price (costs.values reads them as
    rows), to the last bit. Row i is ``configs[i]``, or where that is None the configuration
    the catalog's columns make of card ``gpus[i]`` at ``counts[i]`` (no offer of its own,
    one replica: app/domain/fleet.py), which is then made only if the offers do not price it.
    A configuration the loaded offers price (no offer of its own) reads its entry of the
    request's table of prices here, as _price_basis and costs.rates read it; any other is
    ``price_terms``'s. (A call per configuration, a dozen calls deep, was ~0.2 ms of the open
    question's ~100 cards.)"""
    nan = math.nan
    unpriced = (nan, nan, nan, nan)
    offers = ctx.offers
    table = _price_table(ctx, offers) if offers is not None else {}
    offered = offers.keys() if offers is not None else frozenset()
    kwh = ctx.limits.electricity_usd_per_kwh
    kwh_price = costs.DEFAULT_ELECTRICITY_USD_PER_KWH if kwh is None else kwh
    acq = ctx.limits.acquisition  # priced the way asked (costs.priced_as_asked)
    known: list[bool] = []
    flat: list[float] = []
    usage: costs.Usage | None = None
    hours = nan
    copies = _priced_as_copies(ctx)
    for c, gpu, n in zip(configs, gpus, counts, strict=True):
        if offers is None or (c is not None and c.offer is not None):
            if c is None:
                c = Configuration(gpu, n)
            terms = price_terms(c, ctx)
            if terms is None:
                known.append(False)
                flat += unpriced
                continue
            purchase, hourly, _, energy_h, horizon = terms
            known.append(costs.priced_as_asked(acq, purchase, hourly))
            flat += (
                nan if purchase is None else purchase,
                nan if hourly is None else hourly,
                nan if energy_h is None else energy_h,
                horizon,
            )
            continue
        if n < 1:  # max(1, n) of a whole count, without the call
            n = 1
        # copies over a dataset are priced apart from the shared table (_offer_pricing)
        apart = n > 1 and (copies or (c is not None and c.copies > 1))
        pricing = _listed_pricing(gpu, n, c, apart, table, offered, ctx)
        # Pricing's price_known, purchase_usd and usage.hours read in place: a property is a
        # Python call, three for each of ~100 cards (the same expressions, to the last bit)
        if pricing is None or (pricing.rent is None and pricing.buy is None):
            known.append(False)
            flat += unpriced
            continue
        rent, buy = pricing.rent, pricing.buy
        if pricing.usage is not usage:  # one usage for every card of a request
            usage = pricing.usage
            hours = usage.hours
        tdp = gpu.tdp_w
        known.append(acq == "either" or (buy if acq == "buy" else rent) is not None)
        flat += (
            nan if buy is None else buy.usd * (pricing.bought or pricing.num_gpus),
            nan if rent is None else rent.usd_per_hour,
            nan if tdp is None else tdp * n / 1000.0 * kwh_price,
            hours,
        )
    return known, flat


def _listed_pricing(
    gpu: GpuSpec,
    n: int,
    config: Configuration | None,
    apart: bool,
    table: dict[tuple[str, int], costs.Pricing],
    offered: Collection[str],
    ctx: Context,
) -> costs.Pricing | None:
    """The offers' price of ``n`` of ``gpu`` (``config``: the configuration, None for the card
    alone), as ``price_columns`` and ``count_rates`` read it: the request's table's entry,
    filled where it lacks one, or, ``apart`` (GPUs priced as copies), its own; None where no
    offer lists the card (_price_basis)."""
    if gpu.slug not in offered:
        return None
    pricing = None if apart else table.get((gpu.slug, n))
    if pricing is None:
        pricing = _offer_pricing(config or Configuration(gpu, n), n, ctx)
    return pricing


# ``count_rates``: whether each card has a rental and a purchase price, and its purchase, per
# hour, board power (W) and horizon, NaN where none (all four where it has neither price, as
# ``price_columns`` writes them)
CountRates = tuple[list[bool], list[bool], list[float], list[float], list[float], list[float]]


def price_table(ctx: Context) -> dict[tuple[str, int], costs.Pricing] | None:
    """The table of prices the request's configurations are priced from where its offers are a
    snapshot's (costs.OfferBook: one table shared by every request under the same policy) and
    its GPUs are not priced as copies (``_priced_as_copies``: their prices are the request's
    own), else None."""
    offers = ctx.offers
    if not isinstance(offers, costs.OfferBook) or _priced_as_copies(ctx):
        return None
    return _price_table(ctx, offers)


def count_rates(gpus: Sequence[GpuSpec], n: int, ctx: Context) -> CountRates:
    """What ``price_columns`` reads of each of ``gpus`` on ``n`` of them with no configuration
    of its own, from the request's table of prices (``price_table``: not None) as its loop
    reads it (filling the table where it lacks a card), to the last bit: the same for every
    request priced from that table, so app/domain/fleet.py keeps them with the catalog's
    snapshot."""
    nan = math.nan
    offers = ctx.offers
    assert offers is not None and n >= 1
    table = _price_table(ctx, offers)
    offered = offers.keys()
    rent: list[bool] = []
    buy: list[bool] = []
    purchase: list[float] = []
    hourly: list[float] = []
    tdp: list[float] = []
    hours: list[float] = []
    for gpu in gpus:
        pricing = _listed_pricing(gpu, n, None, False, table, offered, ctx)
        if pricing is None or (pricing.rent is None and pricing.buy is None):
            rent.append(False)
            buy.append(False)
            purchase.append(nan)
            hourly.append(nan)
            tdp.append(nan)
            hours.append(nan)
            continue
        r, b = pricing.rent, pricing.buy
        rent.append(r is not None)
        buy.append(b is not None)
        purchase.append(nan if b is None else b.usd * (pricing.bought or pricing.num_gpus))
        hourly.append(nan if r is None else r.usd_per_hour)
        tdp.append(nan if gpu.tdp_w is None else gpu.tdp_w * n)  # price_columns' tdp × n
        hours.append(pricing.usage.hours)
    return rent, buy, purchase, hourly, tdp, hours


def _costs(
    ctx: Context,
    run: WorkloadSpec,
    n: int,
    throughput: float,
    priced: GpuSpec,
    pricing: costs.Pricing | None,
) -> costs.CostEstimate:
    """The costs of ``n`` GPUs running ``run`` at ``throughput`` at these prices."""
    return costs.estimate_cost(
        priced,
        n,
        throughput,
        time_to_finish_h(run, throughput),
        ctx.limits.electricity_usd_per_kwh,
        pricing=pricing,
        usage=ctx.usage,
    )

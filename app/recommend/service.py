"""Recommendation services: resolve a request into a workload, evaluate every GPU, rank.

Pure apart from reading the preset files; the caller passes GPUs, rules, calibration and the
baseline device, so the same code serves the API, the web pages and the CLI.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from pydantic import TypeAdapter

from app.domain import compat, fleet, pipeline_offload, rank, ranking, serving_step
from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain.calibration import Calibration
from app.domain.figures import limit_duration
from app.domain.gpu import GpuSpec
from app.domain.perf import PerfEstimate, host_bandwidth_gbs, shown_rate
from app.domain.units import gib
from app.domain.workload import (
    GB,
    MemoryBreakdown,
    WorkloadSpec,
    diffusion_side_problem,
    guidance_distilled,
    memory_breakdown,
    pipeline_frozen_params,
)
from app.errors import AppError, InvalidInput, NotFound, no_offers_from
from app.recommend import deadline, deploy, misfit, whatif
from app.recommend import schemas as s
from app.recommend import serving as serving_plan
from app.recommend.presets import DATA_DIR
from app.recommend.rows import Fields, gpu_out, memory_out, row_fields, stale_cutoff
from app.recommend.workloads import (
    get_workload,
    list_workloads,
    resolve_workload,
    resolved_out,
    sixteen_bit_words,
)
from app.vocab import (
    BOUNDED_OBJECTIVES,
    FOUR_BIT_PRECISIONS,
    FRAMEWORK_LABELS,
    RUNTIME_FRAMEWORK,
    TORCH_PROGRAM_RUNTIMES,
    framework_name,
)

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

# The runtime a framework's rows run when the request names none (data/efficiency.yaml rows):
# JAX runs its programs through XLA (jax.jit), its 'jax' row, never a PyTorch runtime.
FRAMEWORK_RUNTIMES = {"tensorflow": "tensorflow", "jax": "jax"}


def _resolve(
    request: s.RecommendationRequest | s.EstimateRequest, data_dir: Path
) -> tuple[WorkloadSpec, list[str]]:
    """The request's workload, run by the framework asked: a TensorFlow or JAX question is
    answered with that framework's runtime, not a PyTorch one (eager, or Hugging Face
    ``generate`` for an LLM), unless the request names a runtime (task 'serving' has its own
    runtimes)."""
    _check_runtime_framework(request)
    work, warnings = resolve_workload(request.workload, data_dir)
    _check_graph_weights(work, request)
    _check_diffusion_side(work)
    warnings += _passes_words(request.workload, work)
    own = FRAMEWORK_RUNTIMES.get(request.constraints.framework)
    asked = serving_plan.ask_warnings(request.workload, request.constraints, work.task)
    if own is None or request.workload.runtime is not None or work.task == "serving":
        _check_layout_count(work, request)
        return _stated_micro_batch(work, request), warnings + asked + _converted(request)
    update, said = _under_framework(work, request)
    asked = said + asked
    w = request.workload.model_copy(update={"runtime": own, **update})
    work, warnings = resolve_workload(w, data_dir)
    return work, warnings + asked


def _check_diffusion_side(work: WorkloadSpec) -> None:
    """A diffusion image side no pipeline generates (1001 px, 7.5 px; FLUX.1's 1000 px, which
    FluxPipeline floors to 992) is refused, naming the field: it had been priced by scaling the
    traced tables to it. Other vision models keep whatever side they accepted (a CNN resizes
    any image)."""
    side = work.model.input_size
    if work.model.family == "diffusion" and side is not None:
        problem = diffusion_side_problem(side, work.model)
        if problem is not None:
            raise InvalidInput(problem, field="workload.model.input_size")


def _passes_words(w: s.WorkloadIn, work: WorkloadSpec) -> list[str]:
    """What an odd passes_per_sample on a diffusion model was priced as. Under classifier-free
    guidance a denoising step is two UNet passes (one batched call on the conditional and
    unconditional latents: perf._guidance), so "25" meant as 25 steps had been priced, without
    a word, as 25 unguided calls: half the GPU work of 25 guided steps."""
    given = w.model.passes_per_sample if w.model is not None else None
    if work.model.family != "diffusion" or work.training or not given or given % 2 == 0:
        return []
    if given == 1 or guidance_distilled(work.model):
        return []  # one call a step: a distilled model (FLUX.1), never a guided pair
    return [
        f"passes_per_sample {given} is odd, so it was priced as {given} UNet calls without "
        "classifier-free guidance; a guided step is 2 passes (passes = steps × 2, one batched "
        f"call a step): for {given} steps with guidance give passes_per_sample {given * 2}"
    ]


# Runtimes that run a conversion of the model's published (Hugging Face) checkpoint in a file
# format of their own, whatever framework trained it: a GGUF file, MLX's safetensors
CONVERTED_RUNTIMES = {"llama.cpp": "a GGUF file", "mlx": "an MLX conversion"}


def _converted(request: s.RecommendationRequest | s.EstimateRequest) -> list[str]:
    """What a TensorFlow or JAX question that names llama.cpp or MLX is told: the runtime runs
    a conversion of the published checkpoint, not the framework's program, so the framework
    asked changes nothing in the answer (it had passed without a word: the fortieth
    session's expert audit)."""
    framework = request.constraints.framework
    runtime = request.workload.runtime
    what = CONVERTED_RUNTIMES.get(runtime or "")
    if what is None or framework not in FRAMEWORK_RUNTIMES:
        return []
    return [
        f"{runtime} runs {what} converted from the model's published checkpoint, not a "
        f"{framework_name(framework)} program: the framework asked changes nothing here"
    ]


def _check_runtime_framework(request: s.RecommendationRequest | s.EstimateRequest) -> None:
    """A named runtime that is another framework's program contradicts the framework asked
    (torch.compile under TensorFlow): refused by name, not answered as the runtime silently.
    Runtimes that load any framework's export (TensorRT, ONNX Runtime, llama.cpp) pass."""
    runtime = request.workload.runtime
    framework = request.constraints.framework
    if runtime is None or "framework" not in request.constraints.model_fields_set:
        return
    own = RUNTIME_FRAMEWORK.get(runtime)
    if own is not None and own != framework:
        raise InvalidInput(
            f"runtime {runtime} runs {FRAMEWORK_LABELS[own]} programs, and the framework "
            f"asked is {FRAMEWORK_LABELS[framework]}: name a {FRAMEWORK_LABELS[framework]} "
            f"runtime, or framework {own}",
            field="workload.runtime",
        )


def _check_graph_weights(
    work: WorkloadSpec, request: s.RecommendationRequest | s.EstimateRequest
) -> None:
    """4-bit weights asked of a TensorFlow or JAX runtime (named, or the framework's own) are
    refused, naming the field, as an AWQ or GPTQ format asked under the framework is
    (``_under_framework``): int4 is priced as W4A16 AWQ/GPTQ-style weights and fp4 as a 4-bit
    float checkpoint, whose kernels load in PyTorch runtimes and llama.cpp; no TensorFlow or
    JAX runtime of them is modelled, and `runtime: tensorflow` had priced GPT-2 in int4
    without a word."""
    w = request.workload
    framework = RUNTIME_FRAMEWORK.get(w.runtime) if w.runtime else request.constraints.framework
    if framework not in FRAMEWORK_RUNTIMES or work.task == "serving":
        return
    named = FRAMEWORK_LABELS.get(framework, framework)
    if w.quantization not in (None, "none"):
        raise InvalidInput(
            f"weight format {w.quantization} loads in PyTorch runtimes and llama.cpp, "
            f"not {named}'s: name no format, or framework pytorch",
            field="workload.quantization",
        )
    if w.precision in FOUR_BIT_PRECISIONS:
        raise InvalidInput(
            f"{w.precision} weights are priced as the 4-bit formats (AWQ, GPTQ, NF4, NVFP4, "
            f"MXFP4) that load in PyTorch runtimes and llama.cpp, not {named}'s: name "
            "precision fp16 or bf16, or framework pytorch",
            field="workload.precision",
        )


def _under_framework(
    work: WorkloadSpec, request: s.RecommendationRequest | s.EstimateRequest
) -> tuple[dict[str, object], list[str]]:
    """What a TensorFlow or JAX question changes in the workload, and says: AWQ, GPTQ, NF4,
    GGUF and the MX/NV FP4 checkpoints, and QLoRA's 4-bit base under PEFT, are PyTorch's (and
    llama.cpp's); no TensorFlow or JAX runtime of them is modelled, so one its preset names
    gives way to the 16-bit weights (one the request names is refused by
    ``_check_graph_weights``)."""
    framework = request.constraints.framework
    if work.peft == "qlora":
        if request.workload.peft is not None:
            raise InvalidInput(
                f"QLoRA (a bitsandbytes or GPTQ 4-bit base under PEFT) is a PyTorch recipe, "
                f"not {framework}'s: use peft lora, or framework pytorch",
                field="workload.peft",
            )
        # a preset's QLoRA recipe: its adapters, on the 16-bit base the framework loads
        said = (
            "the preset's QLoRA recipe is PyTorch's (bitsandbytes, PEFT): under "
            f"{framework_name(framework)}, "
            "LoRA on the 16-bit base"
        )
        return {"peft": "lora", "quantization": "none"}, [said]
    if work.quantization == "none":
        return {}, []
    # a format the request names was refused already (_check_graph_weights): this one is the
    # preset's own
    said = sixteen_bit_words(work.quantization, framework)
    return {"quantization": "none", "precision": request.workload.precision or "bf16"}, [said]


def _check_layout_count(
    work: WorkloadSpec, request: s.RecommendationRequest | s.EstimateRequest
) -> None:
    """A stated Megatron layout's TP×PP×CP GPUs make one replica: the GPU count asked for
    must be a whole number of replicas. Without one, the planner keeps only the counts it
    divides (app/domain/evaluate.py plan)."""
    lay = work.megatron
    asked = request.constraints.num_gpus
    if isinstance(request, s.EstimateRequest) and request.num_gpus is not None:
        asked = request.num_gpus
    if lay is None or asked is None or asked % lay.model_parallel == 0:
        return
    raise InvalidInput(
        f"TP×PP×CP = {lay.tp}×{lay.pp}×{lay.cp} = {lay.model_parallel} GPUs per replica "
        f"does not divide the {asked} GPUs asked for",
        field="workload.megatron_layout",
    )


def _stated_micro_batch(
    work: WorkloadSpec, request: s.RecommendationRequest | s.EstimateRequest
) -> WorkloadSpec:
    """A stated Megatron ``microbatches`` on a stated GPU count fixes Megatron's
    --micro-batch-size: global batch ÷ data-parallel size ÷ micro-batches (Megatron-LM's
    num_microbatches_calculator.py, the same rule read backwards), which the memory and the
    GEMM shapes then read (MegatronLayout.micro_batch); a count that does not divide the
    replica's share of the batch is refused, as Megatron refuses it. Without a GPU count the
    data-parallel size is each count's own, and the micro-batches price the bubble only."""
    lay = work.megatron
    asked = request.constraints.num_gpus
    if isinstance(request, s.EstimateRequest) and request.num_gpus is not None:
        asked = request.num_gpus
    if lay is None or not lay.microbatches or asked is None or not work.training:
        return work
    dp = asked // lay.model_parallel
    share, m = work.batch_size / dp, lay.microbatches
    if work.batch_size % dp or int(share) % m:
        raise InvalidInput(
            f"{m} micro-batches do not divide the {share:g} sequences each of the {dp} "
            f"data-parallel replicas takes of the global batch of {work.batch_size} "
            "(global batch ÷ data-parallel size ÷ micro-batches is Megatron's micro-batch size)",
            field="workload.megatron_layout.microbatches",
        )
    return dataclasses.replace(work, megatron=dataclasses.replace(lay, micro_batch=int(share) // m))


def _context(
    work: WorkloadSpec,
    request: s.RecommendationRequest | s.EstimateRequest,
    objective: str,
    rules: compat.Rules,
    calibration: Calibration | None,
    apply_filters: bool = True,
    offers: Mapping[str, costs.GpuOffers] | None = None,
    priced_only: bool = False,
) -> ev.Context:
    cons = request.constraints
    purchase_cap, hourly_cap = cons.applied_caps()
    limits = ev.Limits(
        objective=objective,
        acquisition=cons.acquisition,
        max_purchase_usd=purchase_cap,
        max_hourly_usd=hourly_cap,
        # serving prices an hour of a steady load, not a job: its answer says the job budget
        # is not applied (serving._job_fields_unread), so it must not ask for a price either
        max_job_cost_usd=None if work.task == "serving" else cons.max_job_cost_usd,
        electricity_usd_per_kwh=cons.electricity_usd_per_kwh,
        vendors=tuple(cons.vendors) if cons.vendors else None,
        segments=tuple(cons.segments) if cons.segments else None,
        max_gpus=cons.max_gpus,
        exact_gpus=cons.num_gpus,
        max_hours=cons.max_hours,
        priced_only=priced_only,
    )
    return ev.Context(
        work=work,
        rules=rules,
        # serving runs its own runtimes, whatever framework the request names (said in its
        # warnings: serving_plan.ask_warnings); their cards are checked as PyTorch's, the
        # default every serving answer is ranked with. Another task's cards are checked as
        # its runtime's framework's (runtime tensorflow on a Mac is tensorflow-metal's, with
        # its caveat, whether or not constraints.framework says so), else the one asked.
        framework=RUNTIME_FRAMEWORK.get(work.runtime, cons.framework)
        if work.task != "serving"
        else "pytorch",
        limits=limits,
        calibration=calibration,
        apply_filters=apply_filters,
        savers_allowed=_savers_allowed(request.workload),
        offers=offers,
        rental=rental_policy(cons, work.training),
        usage=cons.usage(),
        purchase_basis=cons.purchase_basis,
        serving=serving_step.Ask(
            serving_plan.asked_precision(request.workload, work.quantization),
            serving_plan.allows_4bit(request.workload, cons),
        ),
        copies=request.workload.extra_gpus == "copies",
    )


def _headline_memory(work: WorkloadSpec, allowed: frozenset[str]) -> MemoryBreakdown:
    """The least memory the job needs on one GPU with the savers the answer may add
    (``allowed``, ``_savers_allowed``): a training batch can always run as gradient-accumulation
    steps of one sample, so it is counted at micro-batch 1 — an assumed 1,024-sequence batch is
    never held at once, and what-if variants compare on the same footing — and, where the
    request left them to the engine, with gradient checkpointing and 8-bit AdamW, as rows that
    need them run (evaluate._build_ladder). Each row shows its own."""
    if not work.training:
        return memory_breakdown(work)
    changes: dict[str, object] = {}
    said: list[str] = []
    if "micro_batch" in allowed and work.batch_size > 1:
        changes.update(batch_size=1, accumulates=True)
        said.append(
            f"micro-batch 1, the batch of {work.batch_size:,} as {work.batch_size:,} "
            "gradient-accumulation steps"
        )
    if "checkpointing" in allowed and not work.gradient_checkpointing:
        changes["gradient_checkpointing"] = True
        said.append("gradient checkpointing")
    if "cache_encodings" in allowed and pipeline_frozen_params(work.model):
        changes["cached_encodings"] = True
        said.append("the text encoders' outputs and the latents cached before training")
    if "adam8bit" in allowed and work.optimizer == "adamw":
        changes["optimizer"] = "adam8bit"
        said.append("8-bit AdamW (on cards that run bitsandbytes)")
    if not changes:
        return memory_breakdown(work)
    mem = memory_breakdown(work.with_flags(**changes))
    note = f"the least the job needs: {', '.join(said)} (each row gives its own)"
    return dataclasses.replace(mem, notes=(note, *mem.notes))


def rental_policy(cons: s.ConstraintsIn, training: bool = False) -> costs.RentalPolicy:
    """The offers the user accepts; a training job may rent whole servers side by side (its
    estimate prices the communication across them), an inference or serving replica not."""
    tiers: tuple[str, ...] = tuple(cons.tiers) if cons.tiers else costs.ALL_TIERS
    if cons.exclude_marketplace:
        tiers = costs.ON_DEMAND_TIERS
    return costs.RentalPolicy(
        providers=tuple(cons.providers or ()),
        tiers=tiers,
        allow_spot=bool(cons.allow_spot),
        multi_node=training,
    )


def _savers_allowed(w: s.WorkloadIn) -> frozenset[str]:
    """Savers the engine may add: those the user left to it. Micro-batching keeps the global
    batch, so it is allowed unless the optimizer steps in backward: each weight is updated as
    its gradient lands, so no gradient is kept to accumulate (torchtune refuses the pair)."""
    allowed = set() if w.optimizer_in_backward else {"micro_batch"}
    if w.gradient_checkpointing is None:
        allowed.add("checkpointing")
    if w.cache_encodings is None:
        # the engine caches a diffusion pipeline's encodings only where the job needs it
        # (evaluate._build_ladder); false refuses it (a text-encoder LoRA), true set it already
        allowed.add("cache_encodings")
    if w.optimizer is None:
        allowed.add("adam8bit")
    return frozenset(allowed)


def _evaluated(
    gpu: GpuSpec,
    ctx: ev.Context,
    planned: list[ev.Configuration] | ev.Exclusion | None = None,
    admitted: ev.Admitted | ev.ConfigResult | None = None,
    missed: list[ev.ConfigResult] | None = None,
    every: bool = True,
    brief: bool = False,
) -> list[ev.ConfigResult] | ev.Exclusion:
    """Every configuration of ``gpu`` the engine plans (``planned``, when the caller has
    them), evaluated once; the runnable ones, or why none runs (the reason of the
    configuration with the fewest cards). ``admitted``: the fewest cards' admission, when the
    caller has it. ``missed``: where to put a serving card's closest miss when none of its
    shapes meets the targets (an answer with no row shows the closest). Serving shapes no
    objective can pick are skipped unless ``every`` (serving_step.evaluate_card). ``brief``:
    a re-ranking read for its rows alone, where a card the deadline surely excludes at every
    count is out for it unevaluated (its fastest time, or a budget its fewest cards break
    first, are the words of an answer shown)."""
    if planned is None:
        planned = ev.plan(gpu, ctx)
    if isinstance(planned, ev.Exclusion):
        return planned
    floors = _hours_floor(planned, ctx)
    if brief and floors is not None and min(floors) > (ctx.limits.max_hours or 0.0):
        return _surely_late(ctx)
    fewest = _fewest(planned)
    if admitted is None:
        admitted = ev.admit(fewest, ctx)
    first = ev.finish(admitted, ctx) if isinstance(admitted, ev.Admitted) else admitted
    priced_out = _priced_out(first, ctx)
    if priced_out is not None:
        return priced_out
    if ctx.work.task == "serving":
        known = {planned.index(fewest): first}
        results = serving_step.evaluate_card(planned, ctx, every=every, known=known)
    else:
        results = _results(planned, fewest, first, ctx, floors, brief)
    ok = [r for r in results if r.ok]
    if ok:
        return ok
    if ctx.work.task == "serving":
        why, near = serving_step.card_exclusion(results, ctx)
        if missed is not None and near is not None:
            missed.append(near)
        return why
    return _first_reason(results, ctx)


def _results(
    planned: list[ev.Configuration],
    fewest: ev.Configuration,
    first: ev.ConfigResult,
    ctx: ev.Context,
    floors: list[float] | None,
    brief: bool,
) -> list[ev.ConfigResult]:
    """The results ``_evaluated`` reads of a card's configurations (``first``: the fewest's;
    ``floors``: ``_hours_floor``'s): every one, except under a deadline its floors tell apart.
    Where it surely excludes them all, the card is out for its fewest's reason, or for a
    missed deadline at its fastest count (``_first_reason``): configurations are evaluated
    from the least floor until a floor exceeds the fastest time found, which no skipped one
    can then beat. In a ``brief`` re-ranking the ones surely late are not evaluated. A missed
    deadline had evaluated every count of every card, in each what-if re-ranking too
    (ResNet-50 rented under 30 min: 6 CPU s, where no deadline took 0.4)."""
    limit = ctx.limits.max_hours
    if floors is None or limit is None:
        return [first if c is fewest else ev.evaluate(c, ctx) for c in planned]
    if min(floors) <= limit or first.exclusion is None:
        return [
            first if c is fewest else ev.evaluate(c, ctx)
            for c, floor in zip(planned, floors, strict=True)
            if c is fewest or floor <= limit or not brief
        ]
    results = [first]
    if first.exclusion.code != "misses_deadline":
        return results
    assert first.cost is not None and first.cost.time_to_finish_h is not None
    best = first.cost.time_to_finish_h
    for floor, i in sorted(zip(floors, range(len(planned)), strict=True)):
        if floor > best:
            break
        c = planned[i]
        if c is fewest:
            continue
        r = ev.evaluate(c, ctx)
        results.append(r)
        took = r.cost.time_to_finish_h if r.cost is not None else None
        if r.exclusion is not None and r.exclusion.code == "misses_deadline" and took is not None:
            best = min(best, took)
    return results


def _hours_floor(planned: list[ev.Configuration], ctx: ev.Context) -> list[float] | None:
    """The least time to finish each configuration can take under the deadline the request
    filters on: the job over its loose throughput bound (ev.loose_bounds, which evaluate never
    exceeds); None without a deadline, or where a configuration has no finite bound."""
    limit = ctx.limits.max_hours
    if limit is None or not ctx.apply_filters or ctx.work.dataset_samples is None:
        return None
    if ctx.work.task == "serving":
        return None  # a serving shape has no throughput bound (``_prunable``)
    floors: list[float] = []
    for t in ev.loose_bounds(planned, ctx):
        if not math.isfinite(t):
            return None
        took = ev.time_to_finish_h(ctx.work, t) if t > 0 else math.inf  # 0: gated out
        floors.append(math.inf if took is None else took)
    return floors


def _surely_late(ctx: ev.Context) -> ev.Exclusion:
    """A card ``_hours_floor`` puts past the deadline at every count, in a re-ranking."""
    assert ctx.limits.max_hours is not None
    return ev.Exclusion(
        "misses_deadline",
        f"takes more than the {limit_duration(ctx.limits.max_hours)} asked at every count (its "
        "throughput bound)",
    )


def _fastest_late(results: list[ev.ConfigResult], ctx: ev.Context) -> ev.Exclusion | None:
    """A card whose every count misses the deadline, said at its fastest count: the fewest
    GPUs' time had stood for the card (SDXL on an RTX 5070: 24.4 h on one, where four copies
    take 6.5)."""
    timed = [
        (r.cost.time_to_finish_h, r.num_gpus)
        for r in results
        if r.exclusion is not None
        and r.exclusion.code == "misses_deadline"
        and r.cost is not None
        and r.cost.time_to_finish_h is not None
    ]
    if not timed:
        return None
    took, n = min(timed)
    late = ev.deadline(took, ctx.limits)
    if late is None or n == 1:
        return late
    return ev.Exclusion(late.code, f"{late.reason} (its fastest: {n} GPUs)")


def _fewest(planned: list[ev.Configuration]) -> ev.Configuration:
    """The configuration with the fewest cards (the first such in plan order)."""
    return planned[0] if len(planned) == 1 else min(planned, key=_COUNT)


# keys read in C: they run for every card
_COUNT = attrgetter("num_gpus")
_SLUG = attrgetter("slug")
_BOUND = itemgetter(0)
_CODE_SLUG = itemgetter("code", "slug")
_COUNT_SAVERS = attrgetter("perf.num_gpus", "savers")  # a candidate's (n, savers)

# An answer lists every card it leaves out (~1,000 at 10x the catalog): validated in one call
# rather than one model each, which took twice as long.
_EXCLUDED = TypeAdapter(list[s.Excluded])
_ROWS = TypeAdapter(list[s.Recommendation])


def _excluded(gpu: GpuSpec, x: ev.Exclusion) -> dict[str, str]:
    out = {"slug": gpu.slug, "name": gpu.name, "code": x.code, "reason": x.reason}
    if x.detail:
        out["detail"] = x.detail
    return out


def _priced_out(r: ev.ConfigResult, ctx: ev.Context) -> ev.Exclusion | None:
    """The exclusion when the price alone rules out the fewest cards, and so every larger
    count of the card: an instance holding more GPUs costs at least as much (the cheapest
    accepted shape with enough GPUs, paid whole; cards bought × N), and no price for one
    count means no accepted offer or purchase price at all. The reason shown is then this
    count's, as when every count is evaluated (a GPU without offers under a cost objective
    costs one evaluation instead of one per count)."""
    cut = (
        _price_cut(ctx)
        and r.exclusion is not None
        and r.exclusion.code in costs.PRICE_EXCLUSIONS
        and r.perf is None  # the cut before the roofline: price only, no job cost
    )
    return r.exclusion if cut else None


def _price_cut(ctx: ev.Context) -> bool:
    return ctx.apply_filters and ctx.limits.needs_price


def _lazy(request: s.RecommendationRequest) -> bool:
    """Whether each card's configuration can be found without evaluating its others."""
    return request.group_by == "gpu" and request.objective == "balanced"


def _order(planned: list[ev.Configuration]) -> list[int]:
    """Planned configurations by (count, savers): the first that runs is the one a balanced
    answer shows (rank.best_per_card: the fewest cards, then the fewest savers, first in plan
    order among equals)."""
    if len(planned) == 1:
        return [0]
    keys = [(c.num_gpus, len(c.savers)) for c in planned]  # one call, not one per configuration
    return sorted(range(len(planned)), key=keys.__getitem__)


@dataclass
class _Card:
    """One GPU's planned configurations, evaluated in ``_order`` only up to the first that
    runs the job: the one a balanced answer shows."""

    ctx: ev.Context
    planned: list[ev.Configuration]
    results: list[ev.ConfigResult | None]
    index: int
    chosen: rank.Candidate
    # configurations a row listed before them surely dominates, not finished (``_Proofs``):
    # left out of its alternatives, counted among those left out
    dominated: set[int] = dataclasses.field(default_factory=set)
    # the catalog's columns and the card's row in them, where its plan is theirs (fleet.plan)
    columns: tuple[fleet.Snapshot, int] | None = None

    @classmethod
    def first(cls, gpu: GpuSpec, ctx: ev.Context) -> _Card | ev.Exclusion:
        planned = ev.plan(gpu, ctx)
        if isinstance(planned, ev.Exclusion):
            return planned
        return cls.walk(planned, ctx, [None] * len(planned), _order(planned), 0)

    @classmethod
    def walk(
        cls,
        planned: list[ev.Configuration],
        ctx: ev.Context,
        results: list[ev.ConfigResult | None],
        order: list[int],
        start: int,
        admitted: ev.Admitted | None = None,
    ) -> _Card | ev.Exclusion:
        """Evaluates ``order[start:]`` in turn up to the first configuration that runs
        (``admitted``: the admission of ``order[start]``, when the caller has it); the
        results before ``start`` are the caller's. Only an admission can price a card out:
        a finished configuration has its roofline."""
        j = start
        while True:
            if admitted is None:
                found = _admitted(planned, ctx, order, results, j)
                if isinstance(found, ev.Exclusion):
                    return found
                j, admitted = found
            i = order[j]
            r = results[i] = ev.finish(admitted, ctx)
            if r.ok:
                return cls(ctx, planned, results, i, rank.Candidate.of(r))
            admitted, j = None, j + 1

    def alternatives(self) -> list[rank.Candidate]:
        """The card's other runnable configurations, as rank.best_per_card lists them (those
        not evaluated yet, one by one: ``_evaluate_rest`` evaluates several cards' at once)."""
        alts = []
        for i, cfg in enumerate(self.planned):
            if i == self.index or i in self.dominated:
                continue
            r = self.results[i]
            if r is None:
                r = self.results[i] = ev.evaluate(cfg, self.ctx)
            if r.ok:
                alts.append(rank.Candidate.of(r))
        return sorted(alts, key=_COUNT_SAVERS)


def _evaluate_rest(cards: list[_Card], ctx: ev.Context) -> None:
    """Every configuration of ``cards`` not evaluated yet (what their alternatives list),
    evaluated as ``ev.evaluate`` does, to the last bit: each admitted in turn, then the admitted
    ones finished together (ev.finish_all: their LLM inference steps taken at once), but for
    those a row's alternatives surely leave out (``_Proofs``): the card's chosen one dominates
    them, or the first of the others, finished first where that may prove later ones."""
    slots: list[tuple[_Card, int]] = []
    admitted: list[ev.Admitted] = []
    groups: list[list[int]] = []  # each card's slots, in plan order (its alternatives' order)
    for card in cards:
        results = card.results
        group = []
        for i, cfg in enumerate(card.planned):
            if i == card.index or results[i] is not None:
                continue
            a = ev.admit(cfg, ctx)
            if isinstance(a, ev.Admitted):
                group.append(len(slots))
                slots.append((card, i))
                admitted.append(a)
            else:
                results[i] = a
        if group:
            groups.append(group)
    proofs = _Proofs.of([c for c, _ in slots], admitted, ctx)
    firsts: list[tuple[int, list[int]]] = []  # (slot, the card's later ones)
    for group in groups:
        left = proofs.prove(slots[group[0]][0].chosen, group)
        if len(left) > 1 and proofs.may_prove(left[1:]):
            firsts.append((left[0], left[1:]))
    # the words of alternatives: none shown (s.AlternativeOut), none worked out
    done = ev.finish_all([admitted[k] for k, _ in firsts], ctx, words=False)
    for (k, later), r in zip(firsts, done, strict=True):
        card, i = slots[k]
        card.results[i] = r
        if r.ok and (kept := rank.undominated(card.chosen, [rank.Candidate.of(r)])):
            proofs.prove(kept[0], later)  # listed right after the chosen one
    todo = []
    for k, (card, i) in enumerate(slots):
        if proofs.proven[k]:
            card.dominated.add(i)
        elif card.results[i] is None:
            todo.append(k)
    done = ev.finish_all([admitted[k] for k in todo], ctx, words=False)
    for k, r in zip(todo, done, strict=True):
        card, i = slots[k]
        card.results[i] = r


@dataclass(slots=True)
class _Proofs:
    """What proves an admitted configuration dominated (rank.dominated_by) whatever finishing
    it would find, so that its row's alternatives leave it out as rank.undominated would,
    without its estimate: an LLM inference configuration (its unit the row's) admitted with a
    finite loose bound runs (``_census``: without costs judged, nothing after the roofline
    excludes it) no faster than that bound, and where the job has no length its price is its
    way in, which its speed does not move. The bounds are the catalog's columns' (fleet.
    bounds_at: one array step for all of them, where the card's plan is theirs). At batch 4
    most cards' extra GPUs add no speed (Llama 3 8B: 9 of the 10 rows shown list none), and
    their estimates had been a fifth of the request."""

    admitted: list[ev.Admitted]
    ctx: ev.Context
    # each slot's card in the catalog's columns, where its plan is theirs (its prices there)
    columns: list[tuple[fleet.Snapshot, int] | None]
    bounds: list[float]  # each slot's loose bound; 0 where no proof may rest on it
    prices: list[float | None]  # its price (``_price``), worked out when asked
    asked: list[bool]
    proven: list[bool]

    @classmethod
    def of(cls, cards: list[_Card], admitted: list[ev.Admitted], ctx: ev.Context) -> _Proofs:
        n = len(admitted)
        bounds = [0.0] * n
        if not ctx.limits.judges_costs and ev.time_to_finish_h(ctx.work, 1.0) is None:
            picked, rows, counts = [], [], []
            snap: fleet.Snapshot | None = None
            for k, (c, a) in enumerate(zip(cards, admitted, strict=True)):
                if c.columns is None or not a.run.is_llm_inference:
                    continue
                if c.chosen.work.is_llm_inference:  # the unit of the rows listed before
                    snap = c.columns[0]
                    picked.append(k)
                    rows.append(c.columns[1])
                    counts.append(a.config.num_gpus)
            found = None if snap is None else fleet.bounds_at(snap, ctx, rows, counts)
            for k, t in zip(picked, found or [0.0] * len(picked), strict=True):
                bounds[k] = t if t < math.inf else 0.0  # 0: no proof rests on it
        columns = [c.columns for c in cards]
        return cls(admitted, ctx, columns, bounds, [None] * n, [False] * n, [False] * n)

    def may_prove(self, slots: list[int]) -> bool:
        return any(self.bounds[k] > 0.0 for k in slots)

    def prove(self, row: rank.Candidate, slots: list[int]) -> list[int]:
        """The ``slots`` ``row`` (a row listed before them) does not prove dominated."""
        edge = rank.outruns(row)
        left = []
        for k in slots:
            t = self.bounds[k]
            if not self.proven[k] and edge is not None and 0.0 < t <= edge[0]:
                self.proven[k] = rank.dominated_by(edge, t, self._price(k, t))
            if not self.proven[k]:
                left.append(k)
        return left

    def _price(self, k: int, bound: float) -> float | None:
        """The price rank._dominates compares (to finish the job, else its way in): with no
        length, the way in (costs.upfront) at the rates it is costed at (ev.price_terms),
        whatever its speed; None where it has none, or the job a length."""
        if not self.asked[k]:
            a, acquisition = self.admitted[k], self.ctx.limits.acquisition
            terms = _upfront_terms(a.config, self.columns[k], self.ctx)
            if terms is not None and ev.time_to_finish_h(a.run, bound) is None:
                self.prices[k] = costs.upfront_at(terms[0], terms[1], terms[2], acquisition)
            self.asked[k] = True
        return self.prices[k]


def _upfront_terms(
    config: ev.Configuration, columns: tuple[fleet.Snapshot, int] | None, ctx: ev.Context
) -> tuple[float | None, float | None, float] | None:
    """(purchase, per hour, horizon) of ``ev.price_terms(config, ctx)``, None where it has no
    price: read from the catalog's columns of prices at its count (fleet.count_rates: the same
    floats, ~3 k instructions less a slot) where its card is in them and it is priced as they
    price (no offer of its own, one replica)."""
    if columns is not None and config.offer is None and config.copies == 1:
        snap, row = columns
        got = fleet.count_rates(snap, ctx, max(1, config.num_gpus))
        if got is not None:
            purchase, hourly, _, hours = got.rates[row].tolist()
            if purchase != purchase and hourly != hourly:  # NaN: neither price
                return None
            return (
                None if purchase != purchase else purchase,
                None if hourly != hourly else hourly,
                hours,
            )
    terms = ev.price_terms(config, ctx)
    return None if terms is None else (terms[0], terms[1], terms[4])


def _admitted(
    planned: list[ev.Configuration],
    ctx: ev.Context,
    order: list[int],
    results: list[ev.ConfigResult | None],
    start: int,
) -> tuple[int, ev.Admitted] | ev.Exclusion:
    """The first configuration from ``order[start]`` on to pass its checks before the
    roofline, and its place in ``order``; the results of those that fail go into ``results``.
    Why the card is out when its first configuration is priced out (every larger count is,
    see ``_priced_out``) or none passes."""
    for j in range(start, len(order)):
        i = order[j]
        a = ev.admit(planned[i], ctx)
        if isinstance(a, ev.Admitted):
            return j, a
        results[i] = a
        if j == 0 and (priced_out := _priced_out(a, ctx)) is not None:
            return priced_out
    return _first_reason(results, ctx)


def _first_reason(results: Sequence[ev.ConfigResult | None], ctx: ev.Context) -> ev.Exclusion:
    """Why a card none of whose configurations runs is out: the reason of the one with the
    fewest cards that holds the job, as ``_evaluated`` says (a missed deadline at the card's
    fastest count); the fewest cards' misfit where none holds it. A count too small to hold
    the job is not why the card is out when a larger one holds it: Llama 3 70B QLoRA under a
    $3,000 purchase was "needs 22.1 GiB per GPU on 4" on an A10, which 8 hold (over budget)."""
    done = sorted((r for r in results if r is not None), key=lambda r: r.num_gpus)
    fits = [r for r in done if r.exclusion is not None and r.exclusion.code != "does_not_fit"]
    first = (fits or done)[0].exclusion
    assert first is not None
    if first.code == "misses_deadline":
        return _fastest_late([r for r in results if r is not None], ctx) or first
    return first


def _prunable(request: s.RecommendationRequest, ctx: ev.Context) -> bool:
    """Whether cards that cannot reach the rows shown may go unranked in detail: under an
    objective a throughput bound bounds (balanced too: speed and value both grow with the
    throughput), one row per card, when nothing after the roofline can exclude a
    configuration that passed its checks before it (a job-cost budget or a deadline can).
    A serving shape has no throughput bound (its speed is the continuous-batching solve's)."""
    return (
        ctx.work.task != "serving"
        and request.group_by == "gpu"
        and (request.objective in BOUNDED_OBJECTIVES or request.objective == "balanced")
        and ctx.apply_filters
        and ctx.limits.max_job_cost_usd is None
        and ctx.limits.max_hours is None
    )


def _card_bound(planned: list[ev.Configuration], ctx: ev.Context, *, loose: bool) -> float:
    """An upper bound on the objective's metric over the card's configurations (``loose``:
    from the loose throughput bounds)."""
    if ctx.limits.objective == "fastest":
        return ev.card_bound(planned, ctx, loose=loose)
    return _metric_bound(planned, [ev.throughput_bound(c, ctx, loose=loose) for c in planned], ctx)


def _metric_bound(planned: list[ev.Configuration], bounds: list[float], ctx: ev.Context) -> float:
    """A price objective's metric bound over the card's configurations from their throughput
    bounds (``bounds``, one per configuration): every count, as a price grows with it, so the
    widest need not bound."""
    objective = ctx.limits.objective
    best = 0.0
    for cfg, t in zip(planned, bounds, strict=True):
        if not math.isfinite(t):
            return math.inf
        if t > 0:
            cost = ev.cost_at(cfg, ctx, t)
            best = max(best, rank.metric_of(objective, t, cost, ctx.limits.acquisition) or 0.0)
    return best


def _loose_card_bounds(plans: list[list[ev.Configuration]], ctx: ev.Context) -> list[float]:
    """``_card_bound(p, ctx, loose=True)`` of every card, to the last bit, with every card's
    loose throughput bounds taken at once (ev.loose_bounds: arrays for LLM inference)."""
    fastest = ctx.limits.objective == "fastest"
    picked = [ev.widest(p) if fastest else p for p in plans]
    flat = ev.loose_bounds([c for p in picked for c in p], ctx)
    out, i = [], 0
    for p in picked:
        bounds, i = flat[i : i + len(p)], i + len(p)
        out.append(ev.max_bound(bounds) if fastest else _metric_bound(p, bounds, ctx))
    return out


@dataclass(slots=True)
class _Census:
    """The cards an answer ranks without evaluating: how many, and how many have no price;
    and by card (slug), how many of a row's alternatives it leaves out unfinished
    (``_Proofs``)."""

    ranked: int = 0
    unpriced: int = 0
    dominated: dict[str, int] = dataclasses.field(default_factory=dict)


def _census(
    planned: list[ev.Configuration],
    ctx: ev.Context,
    admitted: ev.Admitted | ev.ConfigResult | None = None,
) -> bool | ev.Exclusion | None:
    """For a card whose every configuration's throughput bound is finite: whether the one it
    would be ranked with has a price, or why none runs (as ``_evaluated`` says); None when only
    evaluating it can tell (its counts differ in being priced, and which count it would be
    ranked with depends on the throughputs).

    A configuration that passes the checks before its roofline then runs: a finite bound is a
    finite positive single-GPU step (for LLM inference, phases with finite times, so a finite
    positive estimate: perf.llm_throughput_bound), and
    without a job-cost budget (``_prunable``) the budget after the roofline asks what the
    check before it asked."""
    known = ev.prices_known(planned, ctx)
    if known is None:
        return None
    fewest = _fewest(planned)
    if admitted is None and ev.admitted_as_planned(fewest, ctx):
        return known  # most cards of a request without a price: admit has nothing to check
    first = admitted if admitted is not None else ev.admit(fewest, ctx)
    if isinstance(first, ev.Admitted):  # most cards: no need to order the others
        return known
    tried = [first]
    for cfg in sorted(planned, key=lambda c: c.num_gpus):
        if cfg is not fewest:
            a = ev.admit(cfg, ctx)
            if isinstance(a, ev.Admitted):
                return known
            tried.append(a)
    return _first_reason(tried, ctx)  # a larger count's price, not the fewest's misfit


def _bounded(
    gpus: list[GpuSpec], ctx: ev.Context, limit: int
) -> tuple[list[rank.Candidate], list[tuple[GpuSpec, ev.Exclusion]], _Census]:
    """Every card's configurations evaluated only where the card can reach the ``limit`` rows
    shown: cards in order of a bound on the objective's metric (the loose throughput bound,
    and the costs at that throughput); once ``limit`` cards that rank ahead on every other key
    (meet any latency target, supported software) score above the next card's bound, that card
    and every later one can only rank below them, and are counted (``_census``) rather than
    evaluated. A card the loose bound does not cut is bounded again from its throughputs
    themselves (the rooflines a request shares between counts and the communication, without
    costs, results or candidates) before it is evaluated. The answer is the one evaluating
    every card gives (tests/recommend/test_fast_paths.py holds the two equal)."""
    Card = tuple[float, GpuSpec, list[ev.Configuration], ev.Admitted | ev.ConfigResult | None]
    cards: list[Card] = []
    excluded: list[tuple[GpuSpec, ev.Exclusion]] = []
    price_cut = _price_cut(ctx)
    for gpu in gpus:
        planned = ev.plan(gpu, ctx)
        if isinstance(planned, ev.Exclusion):
            excluded.append((gpu, planned))
            continue
        first = None
        if price_cut:  # as _evaluated: a card priced out at its fewest cards is out
            fewest = _fewest(planned)
            if ev.only_price_left(fewest, ctx):  # most cards: their price alone decides
                cut = ev.price_verdict(fewest, ctx)
            else:
                first = ev.admit(fewest, ctx)
                cut = _priced_out(first, ctx) if isinstance(first, ev.ConfigResult) else None
            if cut is not None:
                excluded.append((gpu, cut))
                continue
        cards.append((0.0, gpu, planned, first))
    bounds = _loose_card_bounds([c[2] for c in cards], ctx)
    cards = [(b, g, p, f) for b, (_, g, p, f) in zip(bounds, cards, strict=True)]
    cards.sort(key=_BOUND, reverse=True)  # stable, reversed too: the caller's order among equals
    cands: list[rank.Candidate] = []
    shown: list[float] = []  # heap: the best `limit` metrics of cards that rank ahead
    top = 0.0
    census = _Census()
    for bound, gpu, planned, first in cards:
        # Scores are the metric over the top one rounded to 6 places: keep clear of a tie. The
        # top is at most this card's loose bound (no later card's exceeds it) or one found.
        below = len(shown) >= limit and bound < math.inf
        if below and bound >= shown[0] - 2e-6 * top:
            exact = _card_bound(planned, ctx, loose=False)
            below = exact < shown[0] - 2e-6 * max(top, bound)
        if below:
            counted = _census(planned, ctx, first)
            if isinstance(counted, ev.Exclusion):
                excluded.append((gpu, counted))
                continue
            if counted is not None:
                census.ranked += 1
                census.unpriced += not counted
                continue
        found = _evaluated(gpu, ctx, planned, first)
        if isinstance(found, ev.Exclusion):
            excluded.append((gpu, found))
            continue
        card = [rank.Candidate.of(r) for r in found]
        cands.extend(card)
        chosen = rank.card_pick(card, ctx.limits.objective)
        # what the answer ranks it on (a row whose band leans high: its low end), at most
        # the metric its bounds bound
        best = rank.ranked_metric(chosen, ctx.limits.objective) or 0.0
        top = max(top, best)
        if rank.ranks_ahead(chosen, ctx.limits.objective):
            heapq.heappush(shown, best)
            if len(shown) > limit:
                heapq.heappop(shown)
    return cands, excluded, census


@dataclass(slots=True)
class _Planned:
    """How a card's shown configuration was found by planning it: its plan, the order, the
    place in it of the shown configuration (those before it were excluded), its admission
    and the results so far (``_Card.walk`` goes on from there)."""

    planned: list[ev.Configuration]
    order: list[int]
    start: int
    admitted: ev.Admitted
    results: list[ev.ConfigResult | None]


def _planned(gpu: GpuSpec, ctx: ev.Context) -> _Planned | ev.Exclusion:
    """The shown configuration of a card the catalog's columns did not find as planned
    (fleet.first_counts), found by planning it and admitting its configurations in turn, or
    why the card is out (as ``_Card.first`` says: its admissions are its evaluations for every
    configuration that fails them)."""
    planned = ev.plan(gpu, ctx)
    if isinstance(planned, ev.Exclusion):
        return planned
    order = _order(planned)
    results: list[ev.ConfigResult | None] = [None] * len(planned)
    found = _admitted(planned, ctx, order, results, 0)
    if isinstance(found, ev.Exclusion):
        return found
    j, a = found
    return _Planned(planned, order, j, a, results)


@dataclass(slots=True)
class _Shown:
    """Every card a balanced answer ranks, as columns: the configuration it would show (the
    first in ``_order`` to pass the checks before its roofline), with bounds on its throughput
    and value (arrays, a row per card)."""

    found: dict[int, _Planned]  # the rows found by planning the card (the others: as planned)
    gpus: list[GpuSpec]  # each row's card
    speed: NDArray[np.float64]  # bound on its throughput (inf: none finite, so it is evaluated)
    value: NDArray[np.float64]  # bound on its work per dollar; NaN: no price, no value
    priced: NDArray[np.bool_]  # it has a purchase or rental price (ev.price_known)
    # row i's configuration where the catalog's columns found it (fleet.configuration): made
    # only for the rows walked, not for every card (~100 a request)
    config: Callable[[int], ev.Configuration]
    # the estimate of row i's configuration from the steps its bound took, where they make it
    # (fleet.one_gpu_estimate), else None
    estimate: Callable[[int], PerfEstimate | None]
    # row i's plan from the catalog's columns where they make it (fleet.plan), else None
    plan: Callable[[int], list[ev.Configuration] | None]
    # the catalog's columns and row i's card in them
    columns: Callable[[int], tuple[fleet.Snapshot, int] | None]

    def walk(self, i: int, ctx: ev.Context) -> _Card | ev.Exclusion:
        """Row ``i``'s card evaluated up to its shown configuration (``_Card.walk``); a card
        found as planned is planned only now (from the columns where they say its plan), and
        its estimate on one GPU is made from the steps its bound took rather than stepped
        again."""
        p = self.found.get(i)
        if p is None:
            est = self.estimate(i)
            if est is not None:
                ev.keep_estimate(ctx, self.config(i), est)
            from_columns = self.plan(i)
            planned = from_columns or ev.plan(self.gpus[i], ctx)
            assert not isinstance(planned, ev.Exclusion)  # found as planned: it plans
            card = _Card.walk(planned, ctx, [None] * len(planned), _order(planned), 0)
            if from_columns is not None and isinstance(card, _Card):
                card.columns = self.columns(i)
            return card
        return _Card.walk(p.planned, ctx, p.results, p.order, p.start, p.admitted)


def _every_shown(
    catalog: fleet.Catalog, ctx: ev.Context
) -> tuple[_Shown, list[tuple[GpuSpec, ev.Exclusion]]]:
    """Every card's shown configuration with its bounds, or why the card is out. Most cards
    run the job as asked on the fewest cards that hold it: those are found, and their
    throughput bounded, over the catalog's columns at once (app/domain/fleet.py); the others
    are planned one by one. Then each card's price, and its value bound at its speed bound
    (costs.values)."""
    gpus = catalog.gpus
    snap = fleet.snapshot(catalog, ctx)
    count = fleet.first_counts(snap, ctx)
    done = None if count is None else fleet.stepped(snap, ctx, count)
    bounds = None if done is None else done.bounds
    counts = np.zeros(len(gpus), np.int64) if count is None else count.copy()
    runs = counts > 0  # the cards that run: those the columns found, then the planned
    planned: list[tuple[int, _Planned]] = []  # (card, how it was found), in card order
    excluded: list[tuple[GpuSpec, ev.Exclusion]] = []
    for i in np.flatnonzero(~runs).tolist():
        gpu = gpus[i]
        # a card that runs as one device and cannot hold the job: out, as plan says, without
        # planning it (most laptops and Macs for an 8B model)
        misfit = fleet.one_device_misfit(snap, ctx, i) if count is not None else None
        p = misfit if misfit is not None else _planned(gpu, ctx)
        if isinstance(p, ev.Exclusion):
            excluded.append((gpu, p))
            continue
        planned.append((i, p))
        runs[i] = True
        counts[i] = p.admitted.config.num_gpus
    # the rows that run, in card order (the cards as columns; a loop over ~1,000 cards of a
    # large catalog had been a tenth of the request)
    at = np.flatnonzero(runs)
    kept: list[int] = at.tolist()  # the rows of `gpus` that run
    shown = [gpus[i] for i in kept]
    configs: list[ev.Configuration | None] = [None] * len(kept)  # None: found by the columns
    found: dict[int, _Planned] = {}
    if planned:
        places = np.searchsorted(at, [i for i, _ in planned]).tolist()
        for row, (_, p) in zip(places, planned, strict=True):
            found[row] = p
            configs[row] = p.admitted.config

    def config(i: int) -> ev.Configuration:
        c = configs[i]
        if c is None:
            assert count is not None  # a row found by the columns
            c = configs[i] = fleet.configuration(snap, ctx, count, kept[i])
        return c

    if bounds is None:
        # not stepped from the columns (a job other than a dense LLM's inference): each bounded
        speed = np.array(ev.loose_bounds([config(i) for i in range(len(configs))], ctx), float)
    else:
        speed = bounds[at]
        rows = list(found)
        speed[rows] = ev.loose_bounds([p.admitted.config for p in found.values()], ctx)
    priced, rates = fleet.price_rows(snap, ctx, at, counts[at], configs, list(found))
    value = np.full(len(configs), np.nan)
    valued = np.flatnonzero(priced & np.isfinite(speed))  # without a price there is no value
    value[valued] = costs.values(
        speed[valued], rates[valued], ctx.limits.acquisition, ctx.usage.resale_fraction
    )

    # asked only of rows found as planned (``_Shown.walk``), which the columns found
    def estimate(i: int) -> PerfEstimate | None:
        if done is None or count is None:
            return None
        return fleet.one_gpu_estimate(snap, ctx, count, done, kept[i])

    def plan(i: int) -> list[ev.Configuration] | None:
        return None if count is None else fleet.plan(snap, ctx, count, kept[i])

    def columns(i: int) -> tuple[fleet.Snapshot, int] | None:
        return None if done is None else (snap, kept[i])

    shown_ = _Shown(found, shown, speed, value, priced, config, estimate, plan, columns)
    return shown_, excluded


def _bounded_balanced(
    catalog: fleet.Catalog, ctx: ev.Context, limit: int, speed_weight: float
) -> tuple[list[_Card], list[tuple[GpuSpec, ev.Exclusion]], _Census]:
    """A balanced answer's cards evaluated only where they can change it. A balanced score is
    speed^w × value^(1−w) over the best speed and the best value of every card ranked, and
    cards without a price come after every priced one. A card is only counted when its
    throughput bound is no faster than a card already evaluated, its value bound no better,
    and ``limit`` evaluated cards that rank ahead on every other key (meet any latency target,
    supported software, priced) score above its bound: then it changes neither the scales nor
    the rows shown. A configuration that passes its checks before the roofline and has a finite
    bound runs (see ``_census``), so the one counted is the one it would be ranked with.

    The cards are put in turn by their bounds as arrays, and between two evaluations every
    card up to the next that may change the answer is counted at once (the state the test
    reads changes only when a card is evaluated). The answer is the one evaluating every card
    gives (tests/recommend/test_fast_paths.py)."""
    shown, excluded = _every_shown(catalog, ctx)
    speeds, values = shown.speed, shown.value
    bounded = np.isfinite(speeds)
    top_speed = float(speeds[bounded].max(initial=0.0))
    top_value = float(np.nanmax(values[bounded], initial=0.0))  # NaN where no value
    # the bound on each card's balanced metric (ranking.balanced: NaN value, speed alone),
    # -1 without a value; a few ulps from rank.balanced's scalar, well inside `margin`
    metric = np.where(np.isnan(values), -1.0, ranking.balanced(speeds, values, speed_weight))
    # Unbounded cards first (evaluated anyway, they set the scales), then the fastest and the
    # best-value bounds, then by the balanced bound (cards without a price last, the fastest
    # of them first); stable: the caller's order among equals.
    special = np.zeros(len(speeds), bool)
    if bounded.any():
        rows = np.flatnonzero(bounded)
        special[rows[np.argmax(speeds[rows])]] = True
        special[rows[np.argmax(np.nan_to_num(values[rows], nan=0.0))]] = True
    ranks = np.lexsort(
        (
            np.where(bounded, -speeds, 0.0),
            np.where(bounded, -metric, 0.0),
            bounded & ~special,
            bounded,
        )
    )
    # the cards one at a time from the list, the rest of them as a slice of the array (a list
    # indexes a column only once made an array: ~1,000 cards a cut on a large catalog)
    order = ranks.tolist()

    def margin() -> float:
        # Scores are rounded to 6 places of the top score, at most speed^w × value^(1−w) of
        # the largest bounds: keep clear of a tie (asked only for a priced card).
        return 2e-6 * rank.balanced(max(top_speed, speed), max(top_value, value), speed_weight)

    cards: list[_Card] = []
    census = _Census()
    heap: list[float] = []  # the best `limit` balanced metrics of cards that rank ahead
    speed = value = 0.0  # the best throughput and value of the cards evaluated
    # A card without a price scores its speed alone (ranking.balanced), and every score is
    # divided by the top one, so such a card is counted only when one evaluated without a
    # price is at least as fast: then it cannot be the top score.
    unpriced_speed = 0.0
    at = 0
    while at < len(order):
        if len(heap) >= limit:
            rest = ranks[at:]
            s, v = speeds[rest], values[rest]
            with np.errstate(invalid="ignore"):
                cut = (s <= speed) & np.where(
                    np.isnan(v),
                    s <= unpriced_speed,
                    (v <= value) & (metric[rest] < heap[0] - margin()),
                )
            n = len(rest) if cut.all() else int(np.argmin(cut))  # the counted run from `at`
            census.ranked += n
            census.unpriced += int(np.count_nonzero(~shown.priced[rest[:n]]))
            at += n
            if at == len(order):
                break
        i = order[at]
        at += 1
        card = shown.walk(i, ctx)
        if isinstance(card, ev.Exclusion):
            excluded.append((shown.gpus[i], card))
            continue
        cards.append(card)
        c = card.chosen
        # the speed and value balanced ranks it on (a row whose band leans high: at its low
        # end, rank.ranked_figures), which its bounds bound too
        ranked, got, _ = rank.ranked_figures(c)
        speed = max(speed, ranked)
        if got is None:
            unpriced_speed = max(unpriced_speed, ranked)
            continue
        value = max(value, got)
        if rank.ranks_ahead(c, "balanced"):
            heapq.heappush(heap, rank.balanced(ranked, got, speed_weight))
            if len(heap) > limit:
                heapq.heappop(heap)
    return cards, excluded, census


# ---------------------------------------------------------------- services


def _baseline(
    baseline: GpuSpec | None, ctx: ev.Context
) -> tuple[s.BaselineOut | None, float | None]:
    """The user's own device on the same job, as one card (never as copies of it); with a
    memory saver when only that lets it hold the job."""
    if baseline is None:
        return None, None
    calibration = ctx.calibration
    calibrated = calibration is not None and baseline.slug in calibration.by_slug
    source = calibration.source if calibration is not None else None
    one = dataclasses.replace(ctx, limits=dataclasses.replace(ctx.limits, exact_gpus=1))
    found = _evaluated(baseline, one)
    if isinstance(found, ev.Exclusion):
        note: str | None = found.reason
        if found.code == "does_not_fit":
            note = _baseline_too_small(baseline, ctx)
        out = s.BaselineOut(
            slug=baseline.slug,
            name=baseline.name,
            throughput=None,
            unit=None,
            calibrated=calibrated,
            basis="calibrated" if calibrated else "modelled",
            source=source,
            note=note,
        )
        return out, None
    res = min(found, key=lambda r: len(r.config.savers))
    assert res.perf is not None
    note = None
    if res.config.savers:
        labels = " and ".join(ev.SAVER_LABELS[x] for x in res.config.savers)
        note = f"your {baseline.name} holds this job only with {labels}; compared that way"
    scale, unit = shown_rate(res.work or ctx.work, res.perf.unit)
    out = s.BaselineOut(
        slug=baseline.slug,
        name=baseline.name,
        throughput=res.perf.throughput * scale,
        unit=unit,
        calibrated=calibrated,
        basis="calibrated" if calibrated else "modelled",
        source=source,
        note=note,
    )
    return out, res.perf.throughput


def _baseline_too_small(baseline: GpuSpec, ctx: ev.Context) -> str:
    """Why the user's device cannot hold the job, in the memory of the precision the device
    runs it at (a CPU without native bf16 runs fp32: "needs 17.1 GB" at bf16 had been quoted
    against it) and its usable memory, both in GB of 2^30 bytes as every figure a person
    reads."""
    run = ctx.work
    gate = ev.gate(baseline, run.precision, getattr(run, "runtime", None), ctx)
    if gate.precision is not None and gate.precision != run.precision:
        run = ev.job_variant(ctx, (run.precision, gate.precision, (), None, None))
    # the one usable figure rows and refusals give (ev.shown_memory: the runtime's claim,
    # its startup reserve inside the need)
    need, usable = ev.shown_memory(baseline, run, memory_breakdown(run).total)
    at = f" at {run.precision}, the precision it runs" if run is not ctx.work else ""
    return (
        f"your {baseline.name} cannot hold this job: it needs {gib(need)} GiB{at}, and has "
        f"{gib(usable)} GiB, even with memory savers; no speed-up is "
        "computed against it"
    )


def _ranked(
    request: s.RecommendationRequest,
    ctx: ev.Context,
    catalog: fleet.Catalog,
    missed: list[ev.ConfigResult] | None = None,
    brief: bool = False,
) -> tuple[
    list[rank.Candidate],
    list[rank.Candidate],
    list[dict[str, str]],
    dict[str, list[rank.Candidate]],
    _Census,
]:
    """Every card evaluated (or bounded and counted) and ranked: the rows shown in order,
    every candidate ranked, the exclusions, each shown row's alternatives, and the census of
    cards counted unevaluated (``missed``, ``brief``: see ``_evaluated``)."""
    cands: list[rank.Candidate] = []
    excluded: list[dict[str, str]] = []  # validated at once into the answer (_EXCLUDED)
    others: dict[str, list[rank.Candidate]] = {}  # by slug: one row per card
    # A balanced answer shows each card with the fewest cards (then savers) that run the job
    # (rank.best_per_card): that configuration is found without evaluating the others, which
    # only the rows shown list as alternatives. (A serving card's balanced pick breaks ties in
    # its count by price and speed, rank.serving_pick: every shape is evaluated.)
    # ... except a training job's, whose counts balanced weighs against each other when the
    # job has a length (rank.best_per_card): every configuration is evaluated
    lazy = _lazy(request) and ctx.work.task != "serving" and not ctx.work.training
    cards: dict[str, _Card] = {}
    census = _Census()
    ordered_gpus = list(catalog.gpus)  # by slug
    if _prunable(request, ctx):
        skipped: list[tuple[GpuSpec, ev.Exclusion]] = []
        if lazy:
            found, skipped, census = _bounded_balanced(
                catalog, ctx, request.limit, request.speed_weight
            )
            for card in found:
                cands.append(card.chosen)
                cards[card.chosen.gpu.slug] = card
            ordered_gpus = []
        elif request.objective in BOUNDED_OBJECTIVES:
            cands, skipped, census = _bounded(ordered_gpus, ctx, request.limit)
            ordered_gpus = []
        excluded = [_excluded(g, x) for g, x in skipped]
    for gpu in ordered_gpus:
        res: list[ev.ConfigResult] | ev.Exclusion | _Card
        res = (
            _Card.first(gpu, ctx)
            if lazy
            else _evaluated(gpu, ctx, missed=missed, every=request.group_by != "gpu", brief=brief)
        )
        if isinstance(res, ev.Exclusion):
            excluded.append(_excluded(gpu, res))
        elif isinstance(res, _Card):
            cands.append(res.chosen)
            cards[gpu.slug] = res
        else:
            cands.extend(rank.Candidate.of(r) for r in res)
    if request.group_by == "gpu" and not lazy:
        per_card = rank.best_per_card(cands, request.objective, request.speed_weight)
        others = {chosen.gpu.slug: alts for chosen, alts in per_card}
        cands = [chosen for chosen, _ in per_card]
    # every candidate scored, only the rows shown put in order (a partial sort)
    ordered = rank.rank(cands, request.objective, request.speed_weight, request.limit)
    if lazy:
        _evaluate_rest([cards[c.gpu.slug] for c in ordered], ctx)
    for c in ordered if lazy else ():
        card = cards[c.gpu.slug]
        others[c.gpu.slug] = card.alternatives()
        if card.dominated:
            census.dominated[c.gpu.slug] = len(card.dominated)
    return ordered, cands, excluded, others, census


def recommend(
    request: s.RecommendationRequest,
    gpus: list[GpuSpec],
    rules: compat.Rules,
    calibration: Calibration | None = None,
    baseline: GpuSpec | None = None,
    data_dir: Path = DATA_DIR,
    offers: Mapping[str, costs.GpuOffers] | None = None,
    explain_empty: bool = True,
    catalog: fleet.Catalog | None = None,
    priced_only: bool = False,
    job: WorkloadSpec | None = None,
) -> s.RecommendationResponse:
    """Rank every GPU in ``gpus`` for the request; list the others with the reason.

    An answer with no row explains itself (``empty``: the nearest configurations that would
    run, from the what-if variations) unless ``explain_empty`` is false, as it is for the
    re-rankings that explanation makes.

    With ``offers`` (what the service loaded from the database), costs come from concrete
    offers: the cheapest suitable instance to rent, a named purchase basis; a GPU with none
    has no price. Without, the catalog's per-GPU prices are used (tests of the engine).
    Under 'fastest', 'best_value' and 'cheapest', cards that cannot reach the rows shown are
    counted, not evaluated (``_bounded``).

    ``catalog``: the per-card terms its keeper holds for these GPUs, rules and calibration
    (fleet.Catalog, made for them in slug order); without it, or made for others, they are
    worked out for this request.

    ``priced_only``: cards without a price for the request's acquisition are left out, as a
    budget leaves them out (the deadline's re-ranks, which name an option to act on).

    ``job``: the asking request's resolved job, where this is one of its re-rankings: a
    variation that resolves to an equal job (another objective, a lifted limit) runs that
    spec itself, so the terms derived from it (``WorkloadSpec.derived``: its step operators,
    their columns per SM count, its share-of-batch jobs) are worked out once per request,
    not once per re-ranking."""
    work, warnings = _resolve(request, data_dir)
    if job is not None and work == job:
        work = job
    warnings += _job_size_warnings(request.constraints, work) + _count_warnings(request.constraints)
    warnings += request.constraints.unapplied_caps() + _weight_warnings(request)
    cons = request.constraints
    ctx = _context(
        work, request, request.objective, rules, calibration, offers=offers, priced_only=priced_only
    )
    missed: list[ev.ConfigResult] = []
    by_slug = sorted(gpus, key=_SLUG)
    if catalog is None or not catalog.serves(by_slug, rules, calibration):
        catalog = fleet.Catalog(tuple(by_slug), rules, calibration)
    ordered, ranked, excluded, others, census = _ranked(
        request, ctx, catalog, missed, brief=not explain_empty
    )

    def rerank(r: s.RecommendationRequest) -> s.RecommendationResponse:
        return recommend(
            r, gpus, rules, calibration, baseline, data_dir, offers, False, catalog, job=work
        )

    if work.task == "serving":
        # the same pipeline's answer, in serving's words (rows, curves, the closest misses)
        served = serving_plan.answer(
            request,
            ctx,
            warnings,
            ordered,
            ranked,
            _EXCLUDED.validate_python(sorted(excluded, key=_CODE_SLUG)),
            missed,
            others,
        )
        # an empty plan explains itself as every task's does: what each lever would let run
        return _explained(request, served, work, rerank, explain_empty)
    base_out: s.BaselineOut | None = None
    base_tput: float | None = None
    if baseline is not None:  # its context only where there is one
        base_ctx = _context(work, request, "fastest", rules, calibration, apply_filters=False)
        base_out, base_tput = _baseline(baseline, base_ctx)
    cutoff = stale_cutoff()
    jobs = rank.JobTerms()

    def fields(c: rank.Candidate, i: int) -> Fields:
        listed = others.get(c.gpu.slug) or []
        kept = rank.undominated(c, listed)
        out = row_fields(
            c, i, ordered[0], request.objective, work, base_tput, kept, rules, cutoff, jobs
        )
        out["alternatives_left_out"] = len(listed) - len(kept) + census.dominated.get(c.gpu.slug, 0)
        return out

    rows = _ROWS.validate_python([fields(c, i) for i, c in enumerate(ordered, start=1)])
    warnings += _fallback_warnings(ordered, work.precision)
    top_mem = _headline_memory(work, ctx.savers_allowed)
    response = s.RecommendationResponse(
        workload=resolved_out(work),
        memory=memory_out(top_mem, None),
        objective=request.objective,
        acquisition=cons.acquisition,
        framework=cons.framework,
        count=len(ranked) + census.ranked,
        counts=s.CountsOut(
            ranked=len(ranked) + census.ranked,
            excluded=len(excluded),
            unpriced=sum(1 for c in ranked if not rank.price_known(c)) + census.unpriced,
        ),
        recommendations=rows,
        excluded=_EXCLUDED.validate_python(sorted(excluded, key=_CODE_SLUG)),
        baseline=base_out,
        warnings=warnings,
        advice=rank.advice(
            ordered, work, defaulted_checkpointing=request.workload.gradient_checkpointing is None
        ),
    )

    def priced(r: s.RecommendationRequest) -> s.RecommendationResponse:
        return recommend(
            r, gpus, rules, calibration, baseline, data_dir, offers, False, catalog, True, work
        )

    if cons.max_hours is not None and work.dataset_samples is not None and explain_empty:
        # what it names is an option to buy or rent: never one without a price. Not in a
        # re-ranking (explain_empty false), read for its rows alone: each what-if variation of
        # an answer that missed the deadline had searched what would meet it again (ResNet-50
        # rented under 30 min: 6 CPU s, where 24 h took 0.5)
        response.deadline = deadline.summary(request, response, work, priced, ranked)
    # rows that all miss the latency target (they rank after any that meets it) are an answer
    # to another question: the variations say what would meet it, as for an empty answer
    too_slow = bool(rows) and explain_empty and rows[0].meets_latency_target is False
    return _explained(request, response, work, rerank, explain_empty, too_slow)


def _model_block(c: rank.Candidate, asked: str) -> str | None:
    """Why the model, not the card, keeps ``c`` from running ``asked``: the reason in the
    row's own fallback warning (compat.resolve_precision's "no fp8 for this model (<why>);
    estimated at bf16"), or None where the card itself has no ``asked``."""
    head, tail = f"no {asked} for this model (", f"); estimated at {c.work.precision}"
    for w in c.warnings:
        if w.startswith(head) and w.endswith(tail):
            return w[len(head) : -len(tail)]
    return None


def _fallback_warnings(ordered: list[rank.Candidate], asked: str) -> list[str]:
    """The answer's notes on the rows shown that run another precision than ``asked``, each
    naming the reason that applies: the model's (stock PyTorch has no fp8 convolutions, so
    SDXL at fp8 runs bf16 on an RTX 4090 that has FP8 tensor cores) apart from the card's.
    "fp8 cannot run on NVIDIA GeForce RTX 4090" had blamed the card for the model's reason.
    Only rows the answer shows are named, so every row a note points to carries the warning;
    summary._OTHER_ROWS reads the names before ": estimated at"."""
    groups: dict[str | None, list[rank.Candidate]] = {}
    for c in ordered:
        if c.work.precision != asked:
            groups.setdefault(_model_block(c, asked), []).append(c)
    out = []
    for why, rows in groups.items():
        names = ", ".join(dict.fromkeys(c.gpu.name for c in rows))
        at = ", ".join(sorted({c.work.precision for c in rows}))
        if why is None:
            out.append(
                f"{asked} cannot run on {names}: estimated at {at} (see those rows' warnings)"
            )
        else:
            out.append(
                f"no {asked} for this model on {names}: estimated at {at} because {why} (the "
                "model's reason, whatever the card; see those rows' warnings)"
            )
    return out


def _explained(
    request: s.RecommendationRequest,
    response: s.RecommendationResponse,
    work: WorkloadSpec,
    rerank: whatif.Ranker,
    explain_empty: bool,
    unmet: bool = False,
) -> s.RecommendationResponse:
    """``response`` with its what-if variations where asked, where it has no row or where
    ``unmet`` (every row misses the latency target), and an empty answer's explanation."""
    empty = not response.recommendations and explain_empty
    if request.what_if or empty or unmet:
        response.what_if = whatif.what_if(request, response, work, rerank)
    if empty:
        response.empty = whatif.empty_answer(response, deadline.needs(response.deadline))
    elif explain_empty:
        response.advice += whatif.unranked_savers_advice(response.excluded, response.count)
    return response


def check_providers(cons: s.ConstraintsIn, offers: Mapping[str, costs.GpuOffers]) -> None:
    """A cloud named in ``constraints.providers`` that no offer comes from is a typo or a
    cloud not imported: refused, naming the ones there are (it left every row unrentable and
    the answer led by a card nobody rents). Once per question, not per re-ranking."""
    if not cons.providers:
        return
    known = {o.provider for g in offers.values() for o in g.cloud}
    unknown = sorted(set(cons.providers) - known)
    if unknown:
        raise InvalidInput(
            no_offers_from(unknown, known),
            field="constraints.providers",
        )


def _weight_warnings(request: s.RecommendationRequest) -> list[str]:
    """A speed weight stated beside an objective that does not read it, said as other ignored
    fields are: only 'balanced' weighs speed against value."""
    if "speed_weight" not in request.model_fields_set or request.objective == "balanced":
        return []
    return [
        f"speed_weight applies to objective 'balanced' only; ignored under '{request.objective}'"
    ]


def _count_warnings(cons: s.ConstraintsIn) -> list[str]:
    """Exactly N GPUs above the most GPUs stated: N is what the engine runs (Limits lets the
    exact count raise the ceiling), said so the two limits are not read as both kept."""
    n, most = cons.num_gpus, cons.max_gpus
    if n is None or n <= most or "max_gpus" not in cons.model_fields_set:
        return []
    return [
        f"constraints.num_gpus {n} is above constraints.max_gpus {most}: every row runs "
        f"exactly {n} GPUs"
    ]


def _job_size_warnings(cons: s.ConstraintsIn, work: WorkloadSpec) -> list[str]:
    """What a deadline or a job budget is judged against: nothing without a dataset (ignored),
    an assumed job size when the request gave none (said, so the limit is read with it)."""
    out: list[str] = []
    given = (("max_hours", cons.max_hours), ("max_job_cost_usd", cons.max_job_cost_usd))
    if work.task == "serving":
        return out  # serving prices an hour of the load: serving.ask_warnings names the limits
    limits = [k for k, v in given if v is not None]
    if work.dataset_samples is None:
        out += [
            f"{k} needs dataset_samples (the job's length) to judge it; ignored" for k in limits
        ]
    elif limits and (work.dataset_basis or "").startswith("assumed"):
        out.append(
            f"{' and '.join(limits)} judged against an assumed job size "
            f"({(work.dataset_basis or '').removeprefix('assumed: ')}); give dataset_samples "
            "for your own"
        )
    return out


def _asked_gpus(request: s.EstimateRequest) -> int | None:
    """The GPU count an estimate asks for: ``num_gpus`` or ``constraints.num_gpus`` (either
    spelling; two counts that differ are refused rather than one silently winning)."""
    top, inner = request.num_gpus, request.constraints.num_gpus
    if top is not None and inner is not None and top != inner:
        raise InvalidInput(
            f"num_gpus {top} and constraints.num_gpus {inner} disagree: give one count",
            field="num_gpus",
        )
    return top if top is not None else inner


def estimate(
    request: s.EstimateRequest,
    gpu: GpuSpec,
    rules: compat.Rules,
    calibration: Calibration | None = None,
    data_dir: Path = DATA_DIR,
    offers: costs.GpuOffers | None = None,
    *,
    relax: bool = True,
) -> s.EstimateResponse:
    """One workload on one named GPU, in full detail (budgets and filters do not apply).
    ``relax``: where the card does not hold the job, say the changes that let it
    (``_fits_with``); False for those probes, which read the count alone (no deploy block, no
    second evaluation for the count's words)."""
    work, warnings = _resolve(request, data_dir)
    ctx = _context(
        work,
        request,
        "fastest",
        rules,
        calibration,
        apply_filters=False,
        offers=None if offers is None else {gpu.slug: offers},
    )
    asked = _asked_gpus(request)
    if work.task == "serving":
        # num_gpus: the GPUs in all, split into replicas × GPUs per replica as suits the load
        ask = dataclasses.replace(ctx.serving, group=asked)
        out = serving_plan.estimated(request, dataclasses.replace(ctx, serving=ask), warnings, gpu)
        # the serve command and service file /recommendations gives the same row
        if out.result is not None and relax:  # a probe (``_fits_with``) reads the count alone
            deploy.attach([out.result], out.workload, data_dir)
        elif relax and out.excluded is not None and out.excluded.code == "does_not_fit":
            fits = _fits_with(request, work, gpu, rules, calibration, data_dir, offers)
            out.advice = [*out.advice, *fits]
        return out
    if asked is not None:
        ctx = dataclasses.replace(ctx, limits=dataclasses.replace(ctx.limits, exact_gpus=asked))
    found = _evaluated(gpu, ctx)
    # one card's estimate: the fewest cards that hold the job (savers before more cards)
    res = (
        found
        if isinstance(found, ev.Exclusion)
        else min(found, key=lambda r: (r.num_gpus, len(r.config.savers)))
    )
    if isinstance(res, ev.Exclusion):
        offload = _offload_advice(gpu, work, res, asked, calibration, ctx)
        # the engine's misfit names the lever itself (ev.too_big); said here where it did not
        said = not offload or "model CPU offload" in res.reason
        reason = res.reason + ("" if said else "; fits with model CPU offload (see advice)")
        excl = s.Excluded(slug=gpu.slug, name=gpu.name, code=res.code, reason=reason)
        misfit = relax and res.code == "does_not_fit"
        fits = (
            _fits_with(request, work, gpu, rules, calibration, data_dir, offers) if misfit else []
        )
        return s.EstimateResponse(
            workload=resolved_out(work),
            gpu=gpu_out(gpu),
            result=None,
            excluded=excl,
            warnings=warnings,
            advice=offload + fits,
        )
    if asked is None and res.num_gpus > 1 and relax:  # not for a probe: it reads the count
        warnings = [*warnings, _count_picked(gpu, ctx, res.num_gpus)]
    cand = rank.Candidate.of(res)
    rank.rank([cand], "fastest")
    row = s.Recommendation.model_validate(
        row_fields(cand, 1, cand, rank.UNRANKED, work, None, rules=rules)
    )
    return s.EstimateResponse(
        workload=resolved_out(work),
        gpu=gpu_out(gpu, cand.pricing),
        result=row,
        warnings=warnings + cand.warnings + _unheld(request.constraints, row),
        advice=_estimate_advice(
            cand, work, defaulted=request.workload.gradient_checkpointing is None
        ),
    )


def _fits_with(
    request: s.EstimateRequest,
    work: WorkloadSpec,
    gpu: GpuSpec,
    rules: compat.Rules,
    calibration: Calibration | None,
    data_dir: Path,
    offers: costs.GpuOffers | None,
) -> list[str]:
    """Where the card does not hold the job: each variation a ranking's empty answer tries
    (whatif.variations: fp8 weights, 4-bit weights allowed, any GPU count, LoRA...) that lets
    this card hold it, estimated on the card ("Fits with fp8 weights: 2 × RTX 4090 hold it").
    A misfit had said only that the weights do not fit. Only changes to the job, 4-bit weights
    and the GPU count are tried: budgets, filters and the way of acquiring do not apply to an
    estimate, and a ranking objective moves no fit."""
    asked = _asked_gpus(request)
    as_ranked = s.RecommendationRequest(
        workload=request.workload,
        constraints=request.constraints.model_copy(update={"num_gpus": asked}),
    )
    tried_here = {"num_gpus", "max_gpus", "allow_4bit"}
    out: list[tuple[int, str]] = []
    fitted: list[str] = []  # the changes that let the card hold it
    for label, changes in whatif.variations(work, as_ranked, tight=True):
        lifted = changes.get("constraints", {})
        if "objective" in changes or not set(lifted) <= tried_here:
            continue
        if misfit.longer_fits(label, fitted):
            continue
        data = request.model_dump()
        data["workload"] = {**data["workload"], **changes.get("workload", {})}
        data["constraints"] = {**data["constraints"], **lifted}
        if "num_gpus" in lifted:
            data["num_gpus"] = None
        try:
            changed = s.EstimateRequest.model_validate(data)
            row = estimate(changed, gpu, rules, calibration, data_dir, offers, relax=False).result
        except (AppError, ValueError):
            continue  # a variation the request's other fields make invalid is skipped
        if row is not None:
            held = whatif.config_name(gpu.name, row.num_gpus)
            said = f"Fits with {label}: {held} hold{'s' if row.num_gpus == 1 else ''} it"
            mem = row.memory
            if misfit.is_combined(label) and mem.available_gb:
                # how close it comes, as the refusal beside it says the need as asked
                said += f" ({gib(mem.required_gb)} GiB of {gib(mem.available_gb)} GiB usable)"
            said += "."
            out.append((row.num_gpus, said))
            fitted.append(label)
    # the card asked about, alone, first: FLUX.1's LoRA on one RTX 4090 with a 4-bit base
    # had read after "batch 2 instead of 1: 2 × RTX 4090" (a stable sort keeps the list's order)
    return [said for _, said in sorted(out, key=lambda t: t[0])]


def _count_picked(gpu: GpuSpec, ctx: ev.Context, n: int) -> str:
    """Why an estimate that was given no count runs on ``n`` > 1 cards: one card's own
    refusal, said at the top (the count had shown only in the row and its tips)."""
    one = dataclasses.replace(ctx, limits=dataclasses.replace(ctx.limits, exact_gpus=1))
    found = _evaluated(gpu, one)
    why = f" ({found.reason})" if isinstance(found, ev.Exclusion) else ""
    return (
        f"one {gpu.name} cannot hold it{why}: estimated on the fewest that do, {n}; give "
        "num_gpus to fix the count"
    )


def _offload_advice(
    gpu: GpuSpec,
    work: WorkloadSpec,
    res: ev.Exclusion,
    asked: int | None,
    calibration: Calibration | None,
    ctx: ev.Context,
) -> list[str]:
    """Where a diffusion pipeline the default placement (every component on the GPU) does not
    fit would fit with one component resident at a time (workload.model_offload), at the
    job's precision or, where that does not fit, with fp8 weights on a card that runs them
    (pipeline_offload.levers): how, and what it costs. Not priced: the estimate stays the
    default pipeline's refusal."""
    if res.code != "does_not_fit" or asked not in (None, 1):
        return []
    if work.runtime not in (None, *TORCH_PROGRAM_RUNTIMES):  # diffusers' and ComfyUI's own
        return []
    own = ev.gate(gpu, work.precision, work.runtime, ctx)
    if own.precision is not None and own.precision != work.precision:
        work = dataclasses.replace(work, precision=own.precision)  # what the card runs
    eight = ev.gate(gpu, "fp8", work.runtime, ctx)
    fp8 = eight.exclusion is None and eight.precision == "fp8"
    usable = ev.usable_gb(gpu, work)
    found = pipeline_offload.levers(work, usable, fp8=fp8, backend=own.backend or "cuda")
    lever = pipeline_offload.fitting(found)
    if lever is None:
        return []
    off = lever.offload
    frozen = off.moved_bytes - dataclasses.replace(work, precision=lever.precision).weight_bytes
    copy = _host_copy(gpu, off.moved_bytes, work.batch_size, calibration)
    return [
        f"Fits with {lever.label} (diffusers enable_model_cpu_offload() in place of "
        f".to(\"cuda\"); ComfyUI's model management and A1111's --medvram work alike): only the "
        f"{'transformer' if guidance_distilled(work.model) else 'UNet'} stays on the GPU "
        f"through the steps, a peak of {gib(off.memory.total)} GiB "
        f"of the {gib(usable)} GiB usable, and the text encoders and VAE "
        f"({gib(frozen / GB)} GiB) move in only while they run. Its cost is not priced "
        f"here: {copy} enable_sequential_cpu_offload() holds less still but moves the weights "
        "layer by layer at every step, which diffusers' memory guide calls extremely slow."
    ]


def _host_copy(gpu: GpuSpec, moved: float, batch: int, calibration: Calibration | None) -> str:
    """What model offload copies host→device per pipeline call (``moved`` bytes), in time at
    the card's link."""
    gbs = host_bandwidth_gbs(gpu, calibration)
    size = f"{gib(moved / GB)} GiB"
    per = "each image" if batch == 1 else f"each call of {batch} images"
    said = (
        f"{per} copies every component in again (the pipeline moves them all back to the CPU "
        f"when it ends), {size}"
    )
    if gbs is None:
        return f"{said}."
    own = calibration.by_slug.get(gpu.slug) if calibration is not None else None
    if own is not None and own.h2d_pinned_gbs:
        link = "its measured pinned host→device rate"
    else:
        link = f"PCIe {gpu.pcie_gen or 4}.0 x{gpu.pcie_lanes or 16}" + (
            "" if gpu.pcie_gen and gpu.pcie_lanes else " (assumed)"
        )
    return (
        f"{said}, at least {moved / GB / gbs:,.1f} s over {link} at {gbs:,.0f} GB/s, more "
        "from pageable memory."
    )


def _estimate_advice(cand: rank.Candidate, work: WorkloadSpec, *, defaulted: bool) -> list[str]:
    """An estimate's advice, as a recommendation's: what the savers behind it buy and cost.
    Gradient checkpointing a fine-tuning recipe turns on (the request left it blank) is said
    on this card's own footing; the estimate had applied it without a word (Llama fine-tunes),
    where the answer's banner said it of its top pick."""
    out = []
    if defaulted and work.training and work.gradient_checkpointing:
        said = rank.recipe_checkpointing_said(cand, "this estimate")
        if said:
            out.append(said)
    return out + rank.advice([cand], work, defaulted_checkpointing=False)


def _usd(x: float) -> str:
    return f"${x:,.2f}"


def _per_hour(x: float) -> str:
    return f"${x:,.2f}/h"


def _gpus(x: float) -> str:
    return f"{x:g} GPUs"


def _unheld(cons: s.ConstraintsIn, row: s.Recommendation) -> list[str]:
    """The request's deadline, budgets and GPU cap the estimated configuration breaks: an
    estimate answers for the GPU named whatever its limits (recommendations filter by them),
    so it says where it breaks them rather than pass over them."""
    cost = row.cost
    most = float(cons.max_gpus) if "max_gpus" in cons.model_fields_set else None
    purchase_cap, hourly_cap = cons.applied_caps()  # the way not asked breaks no cap

    # (field, the limit, the row's figure, what the figure is, how a value is written)
    checks: list[tuple[str, float | None, float | None, str, Callable[[float], str]]] = [
        ("max_hours", cons.max_hours, row.time_to_finish_h, "it finishes in", ev.hours_text),
        ("max_job_cost_usd", cons.max_job_cost_usd, cost.job_cost_usd, "the job costs", _usd),
        ("max_hourly_usd", hourly_cap, cost.hourly_usd, "renting costs", _per_hour),
        ("max_purchase_usd", purchase_cap, cost.purchase_usd, "buying costs", _usd),
        # the default cap (8) is no limit the estimate was asked to keep: only a stated one
        ("max_gpus", most, float(row.num_gpus), "it runs", _gpus),
    ]
    return [
        f"constraints.{field}: {what} {say(have)}, over the {say(limit)} asked"
        for field, limit, have, what, say in checks
        if limit is not None and have is not None and have > limit
    ]

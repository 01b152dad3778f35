"""Task 'serving': the one pipeline's answer in serving's words.

The service ranks serving as every task (service._ranked: evaluate.plan and evaluate.admit
hand a serving job to app/domain/serving_step.py, which plans each card's shapes and solves
each with the continuous-batching model of app/domain/serving.py; the same filters, pricing,
budget and rank.rank). This module only formats what comes back: each row's shape, latency,
capacity, cost, curve, explanation and tips, and, when no card meets the targets, the closest
misses and what to relax.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from app.domain import bands, efficiency, llm_step, rank, serving_step, topology
from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import serving as sv
from app.domain.figures import given
from app.domain.gpu import GpuSpec
from app.domain.serving_step import Served
from app.domain.units import vram
from app.domain.workload import ModelSpec, ServingSpec, WorkloadSpec
from app.recommend import quality
from app.recommend import schemas as s
from app.recommend import serving_encoder as encoder_words
from app.recommend import serving_rows as words
from app.recommend.deploy import publisher_fp8
from app.recommend.rows import (
    gpu_out,
    offer_lines,
    time_band_out,
)
from app.recommend.workloads import resolved_out
from app.shipped.rules import load_efficiency
from app.vocab import (
    HF_CHECKPOINT_SERVERS,
    MOST_GPUS,
    QUANTIZATION_LABELS,
    RUNTIME_LABELS,
    RUNTIME_NAMES,
    RUNTIME_OWN_FORMATS,
)

CURVES_FOR = 5  # rows that get a throughput-latency curve


@dataclass(frozen=True)
class _Row:
    """One card's serving shape as the answer words it: what the serving evaluation found
    (``served``) and the score the ranking gave it (None: a near miss, not ranked)."""

    gpu: GpuSpec
    served: Served
    score: float | None = None
    warnings: tuple[str, ...] = ()  # the answer's own (a quantised format's quality cost)
    # the card's other shapes that meet the targets (rank.best_per_card's alternatives)
    others: tuple[Served, ...] = ()
    # the software's status for the job on this card (experimental: vLLM on Intel XPU)
    status: str = "supported"

    @property
    def result(self) -> sv.ServingResult:
        return self.served.result

    @property
    def runtime(self) -> sv.RuntimeProfile:
        return self.served.runtime

    @property
    def priced(self) -> serving_step.Price:
        return self.served.price

    @property
    def meets(self) -> bool:
        return self.served.meets

    @property
    def misses(self) -> list[str]:
        return list(self.served.misses)

    @property
    def usd_per_hour(self) -> float | None:
        return self.served.price.usd_per_hour


def _usable_gb(gpu: GpuSpec, row: _Row, tp: int = 1) -> float:
    """The one usable-memory rule (efficiency.usable_gb: vendors' GB are GiB, unified memory
    wired at 2/3 up to 32 GB, 3/4 above) at the share the row's runtime claims of the device
    at ``tp`` GPUs per replica (its gpu_memory_utilization, SGLang's mem_fraction_static from
    the GPU's memory and tp size), the figure an inference row on the same runtime shows."""
    rt = row.runtime
    share = efficiency.claimed_share(rt.memory_utilization, rt.reserve_rule, tp, gpu)
    return efficiency.usable_gb(gpu, efficiency.claim_on_device(share, rt.of_free))


def _reserve_note(row: _Row) -> list[str]:
    """What the row's workspace is where the runtime sizes it by its own startup rule (vLLM's
    sampler peak over the --max-num-seqs the plan deploys, TensorRT-LLM's warm-up forward):
    named in the words an inference row on the same runtime gives it (evaluate.admit)."""
    r, rt = row.result, row.runtime.on(row.gpu)
    if r.reserve_gb_per_gpu <= 0.0:
        return []
    return [
        efficiency.startup_reserve_note(
            rt.name,
            per_logit=rt.profile_bytes_per_logit,
            mode=rt.startup_activations,
            seqs=rt.max_batch,
            tokens=rt.chunk_tokens,
            gb=vram(r.reserve_gb_per_gpu),
        )
    ]


def _pool_note(row: _Row) -> str:
    """The memory a replica leaves its KV cache, per GPU. Only a runtime that claims a share of
    the device up front (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static,
    TensorRT-LLM's free_gpu_memory_fraction) reserves it: llama-server allocates the cache its
    -c sets and no more, and mlx_lm and Transformers grow theirs with the requests, so a Mac
    Studio's 366 GB had read as reserved by llama.cpp for four requests' 1.7 GB."""
    r, rt = row.result, row.runtime.on(row.gpu)
    # the breakdown beside it is in 10⁹ bytes: the pool in both units, so a cache of 39.6
    # (10⁹ B) does not read as overflowing a pool of "37.8 GB" (vendor GB)
    pool = f"{vram(r.kv_pool_gb_per_gpu):.1f} GiB ({r.kv_pool_gb_per_gpu:.1f} × 10⁹ B)"
    if rt.memory_utilization < 1.0 or rt.reserve_rule is not None:
        return f"per GPU; the runtime reserves {pool} for the KV cache"
    if rt.kv_at_start:
        # llama-server's -c is allocated whole at startup (llama-context.cpp, create_memory):
        # the kv_cache beside it is every slot's, not the running requests' (it had counted
        # 4 requests' 1.7 GB where the -c it deploys allocates 3.4 GB)
        slots = r.max_concurrency
        whole = slots * r.kv_held_gb * r.kv_copies / r.config.gpus_per_replica
        return (
            f"per GPU; {pool} is free for the KV cache: llama-server claims no share of memory, "
            f"and allocates at start the whole cache its -c sets, {slots} -np slots of "
            f"{vram(r.kv_held_gb):.2f} GiB each (one request's context, as the deploy command "
            f"sizes it): {vram(whole):.2f} GiB ({whole:.2f} × 10⁹ B), however few requests run"
        )
    name = RUNTIME_NAMES.get(rt.name, rt.name)
    return (
        f"per GPU; {pool} is free for the KV cache: {name} claims no share of memory up front, "
        "and its cache grows with the requests it runs"
    )


def replicas_words(replicas: int, gpus_per_replica: int) -> str:
    """A serving layout in words, counted nouns agreeing ("1 replica × 2 GPUs"; it had read
    "1 × 2 GPU")."""
    r = "replica" if replicas == 1 else "replicas"
    g = "GPU" if gpus_per_replica == 1 else "GPUs"
    return f"{replicas} {r} × {gpus_per_replica} {g}"


def _load_words(spec: ServingSpec) -> str:
    who = (
        f"{spec.concurrent_requests:,g} concurrent request"
        f"{'' if spec.concurrent_requests == 1 else 's'}"
        if spec.concurrent_requests is not None
        else f"{given(spec.requests_per_s or 0.0)} requests/s"
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


def asked_precision(w: s.WorkloadIn, resolved: str = "none") -> str | None:
    """The weight precision the request pins: its precision, else the one its named weight
    format runs at on its runtime (quality.serving_formats); ``resolved``: the format the
    resolved job names where the request left it blank (a release llama.cpp serves as it is:
    workloads._as_released)."""
    if w.precision is not None:
        return w.precision
    fmt = w.quantization or resolved
    return quality.serving_formats(w.runtime).get(fmt)


def allows_4bit(w: s.WorkloadIn, cons: s.ConstraintsIn) -> bool:
    """Whether the planner may pick 4-bit weights: constraints.allow_4bit, unless the workload
    names unquantised weights (weight format 'none', the form's "None"). The named format is
    the narrower ask, as a named 4-bit format pins that format (``asked_precision``)."""
    return bool(cons.allow_4bit) and w.quantization != "none"


def ask_warnings(w: s.WorkloadIn, cons: s.ConstraintsIn, task: str = "serving") -> list[str]:
    """What the request asked that the plan does not follow, said. Only the serving planner
    picks a weight format; one job's format is the one its workload names."""
    if cons.allow_4bit and task != "serving":
        return [
            "constraints.allow_4bit applies to serving, where the planner picks the weight "
            f"format; this {task} job keeps the format it names"
            + (
                " (name a 4-bit one in workload.quantization, such as awq, gptq or q4_k_m)"
                if task == "inference"
                else ""
            )
        ]
    out: list[str] = []
    if task == "serving" and cons.framework != "pytorch":
        # the serving runtimes are PyTorch programs (vLLM, SGLang, TensorRT-LLM's PyTorch
        # backend) or none (llama.cpp, MLX): no TensorFlow or JAX server is modelled
        out.append(
            f"constraints.framework {cons.framework} does not apply to serving: it runs on "
            "the serving runtimes (vLLM, SGLang, TensorRT-LLM, llama.cpp, MLX, Transformers), "
            "and no TensorFlow or JAX server is modelled"
        )
    if cons.allow_4bit and not allows_4bit(w, cons):
        out.append(
            "constraints.allow_4bit not applied: weight format 'none' asks for the model's "
            "unquantised weights"
        )
    if task == "serving":
        out += _job_fields_unread(w, cons)
    return out


def _job_fields_unread(w: s.WorkloadIn, cons: s.ConstraintsIn) -> list[str]:
    """The fields of a job of given length that serving does not read, named: a service is
    priced per hour of a steady load (and per million tokens), never as a job over a dataset,
    so a dataset, a deadline or a job budget had been dropped without a word."""
    given = (
        ("workload.dataset_samples", w.dataset_samples),
        ("constraints.max_hours", cons.max_hours),
        ("constraints.max_job_cost_usd", cons.max_job_cost_usd),
    )
    named = [k for k, v in given if v is not None]
    if not named:
        return []
    return [
        f"{', '.join(named)} not applied: serving prices an hour of a steady load (its rows "
        "give $/h and $ per million tokens), not a job of given length; for an offline job "
        "over a dataset ask task 'inference', whose rows give the time to finish and the "
        "job's cost and are held to max_hours and max_job_cost_usd"
    ]


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


def _weight_format(precision: str, rt: sv.RuntimeProfile) -> str:
    bits = rt.bits(precision)
    if bits is not None and rt.int4_format:
        return f"GGUF {rt.int4_format.upper()} ({bits:g} bits per weight)"
    named = rt.named_format
    if named is not None and named[0] == precision:
        label = QUANTIZATION_LABELS.get(named[1], named[1])
        how = f", read by {rt.name}'s own 4-bit kernels" if rt.int4_format == named[1] else ""
        return f"{label} ({named[2]:g} bits per quantised weight{how})"
    return sv.WEIGHT_FORMAT[precision]


def _tensor_parallel(c: sv.ServingConfig, rt: sv.RuntimeProfile) -> int:
    """GPUs that split every layer: all of a tensor-parallel replica's inside one server,
    each server's beyond it (the servers then run the layers as pipeline stages)."""
    return llm_step.span(rt.decode, c.gpus_per_replica)[0] if rt.multi_gpu == "tensor" else 1


def _serving_out(row: _Row, with_curve: bool) -> s.ServingOut:
    r = row.result
    c = r.config
    rt = row.runtime
    out_m, in_m = _per_million(r, row.usd_per_hour)
    return s.ServingOut(
        replicas=c.replicas,
        gpus_per_replica=c.gpus_per_replica,
        tensor_parallel=_tensor_parallel(c, rt),
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
        kv_cache_gb_held_per_request=r.kv_held_gb,
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


def _kv_each(r: sv.ServingResult, replicas: int) -> str:
    """Each request's KV cache as the runtime counts it: its whole length where it reserves
    that up front, else what it holds on average (serving._capacity; the warnings say where the
    replicas run more than the cache holds at full length)."""
    if not r.kv_admission.on_demand:
        return f"{vram(r.kv_gb_per_request):.2f} GiB each"
    said = (
        f"~{vram(r.kv_held_gb):.2f} GiB each, counted at its prompt + "
        f"{r.kv_admission.output_share:.0%} of its output"
    )
    # the warning beside it names the count at full length: "holds 35" next to "the 31 it
    # holds whole" had read as two answers for one cache
    full = r.reserve_full_concurrency
    if full is not None and full < r.max_concurrency:
        said += f"; {full * replicas:,} at their whole prompt + output"
    return said


def _p95_words(r: sv.ServingResult, spec: ServingSpec) -> str:
    """The p95 figures beside the means where the targets are judged at p95 (a B200 row's mean
    ITL of 48.8 ms sat beside a 100 ms target its p95, 94.6 ms, nearly missed)."""
    if spec.target_percentile != "p95" or r.ttft_p95_ms is None or r.itl_p95_ms is None:
        return ""
    return (
        f", at p95 (the percentile the targets are judged at) {r.ttft_p95_ms:,.0f} ms and "
        f"{r.itl_p95_ms:,.1f} ms"
    )


def _tp_link(gpu: GpuSpec, tp: int) -> str:
    """The link a tensor-parallel group's all-reduces ride, named as a training row names its
    group's (the step prices them on it: llm_step's ``tp_link``): 8 RTX A5000s at tensor
    parallel 8 over PCIe had read as an NVLink server's would."""
    return f" over {topology.link(gpu, tp).label}" if tp > 1 else ""


# Words of a serving row's load and cost lines that app.web.serving_lines reads to tell which
# lines only restate the row's cells: written from here so the two cannot drift apart
LOAD_LINE_END = "at saturation)."
LOAD_MEANS = "(means)"
COST_LINE_WORDS = "per million output tokens: the whole hour ÷ its output tokens at this load"
COST_LINE_MORE = "renting the offer below: $"


def _explain(row: _Row, spec: ServingSpec) -> list[str]:
    r = row.result
    c = r.config
    rt = row.runtime
    tp = _tensor_parallel(c, rt)
    split = (
        f" (tensor parallel {tp}{_tp_link(row.gpu, tp)})"
        if rt.multi_gpu == "tensor" and tp == c.gpus_per_replica
        else f" (tensor parallel {tp} in each of {c.gpus_per_replica // tp} servers, the layers "
        "split between the servers as pipeline stages: a token passes through them in turn)"
        if rt.multi_gpu == "tensor"
        else " (whole layers per GPU, a token through them in turn: their memory adds up, "
        "not their speed)"
    )
    shape = (
        f"{c.replicas} replica{'s' if c.replicas > 1 else ''} × {c.gpus_per_replica} GPU"
        f"{'s' if c.gpus_per_replica > 1 else ''}" + (split if c.gpus_per_replica > 1 else "")
    )
    lines = [
        f"{shape}, {c.weight_precision} weights, {c.kv_precision} KV cache, "
        f"{RUNTIME_LABELS.get(c.runtime, c.runtime)} "
        f"{rt.version}.",
        f"At {_load_words(spec)}: first token in ~{r.ttft_ms:,.0f} ms, then one token every "
        f"~{r.itl_ms:,.1f} ms {LOAD_MEANS}{_p95_words(r, spec)}; {r.output_tokens_per_s:,.0f} "
        f"output tokens/s (up to {r.max_output_tokens_per_s:,.0f} {LOAD_LINE_END}"
        if r.ttft_ms is not None and r.itl_ms is not None and r.output_tokens_per_s
        else f"Cannot carry {_load_words(spec)}.",
        f"The KV cache holds {r.max_concurrency * c.replicas:,} requests at once "
        f"({_kv_each(r, c.replicas)}); each step is bound by {r.bottleneck}.",
    ]
    out_m, in_m = _per_million(r, row.usd_per_hour)
    if out_m is not None and in_m is not None:
        basis = (
            ("renting the offer below" if row.priced.pricing is not None else "renting")
            if row.priced.basis == "rent"
            else f"owning the cards over {row.priced.usage.hours:,.0f} h of use"
        )
        whole = costs.usd_per_million_tokens(row.usd_per_hour, r.output_tokens_per_s)
        # under acquisition 'either' a row cheaper owned also carries its offer's rented
        # figure (the row's own usd_per_million_*): the ranked one leads, each basis named
        rent_h = row.priced.rent_usd_per_hour
        rented = (
            costs.usd_per_million_tokens(rent_h, r.output_tokens_per_s)
            if row.priced.basis != "rent" and row.priced.pricing is not None
            else None
        )
        also = (
            f"; {COST_LINE_MORE}{rented:,.2f} per million output tokens"
            if rented is not None
            else ""
        )
        ranked = ", the basis this row is ranked on" if rented is not None else ""
        lines.append(
            # short: on every row of an answer page near its size budget
            f"${whole or 0:,.2f} {COST_LINE_WORDS} ({basis}{ranked}{also}). By GPU time, "
            "decode vs prompts: "
            f"${out_m:,.2f} per million output, ${in_m:,.2f} per million input tokens."
        )
    placed = row.priced.placed
    if placed is not None and placed.per_instance > 1:
        lines.append(
            f"Up to {placed.per_instance} replicas share one {placed.choice.offer.gpus}-GPU "
            "instance; a tensor-parallel group never spans instances."
        )
    return lines + offer_lines(row.priced.pricing, placed.note if placed is not None else None)


# How each runtime is told to keep an 8-bit KV cache (the runtimes' server docs; llama.cpp has
# no fp8 cache: q8_0 keeps 8.5 bits a value, about the same size).
_KV8_HOW = {
    "vllm": "--kv-cache-dtype fp8",
    "sglang": "--kv-cache-dtype fp8_e4m3",
    "tensorrt-llm": "kv_cache_config dtype fp8",
    "llama.cpp": "--cache-type-k q8_0 --cache-type-v q8_0, with -np raised to match",
}


# How each server runs speculative decoding (its docs): draft heads or a draft model propose
# tokens the target model verifies in one pass, which pays where a decode step is bound by
# reading the weights, i.e. at a few requests a replica; at large batches the step is compute
# bound and the verification costs what it saves.
_SPECULATIVE = {
    "vllm": "vLLM --speculative-config with EAGLE-3 heads, or MTP for DeepSeek-V3/R1",
    "sglang": "SGLang --speculative-algorithm EAGLE3, or NEXTN/MTP for DeepSeek-V3/R1",
    "tensorrt-llm": "TensorRT-LLM's speculative_config: EAGLE-3, or MTP for DeepSeek-V3/R1",
}
SPECULATIVE_MAX_USERS = 8


# Runtimes that serve FP8 weights on a card with FP8 tensor cores, and how each is told to
# (their docs: vLLM's and SGLang's --quantization fp8 quantise 16-bit weights at load, or a
# published FP8 checkpoint loads as it is; TensorRT-LLM runs a Model Optimizer FP8 export).
_FP8_HOW = {
    "vllm": "a published FP8 checkpoint, or --quantization fp8",
    "sglang": "a published FP8 checkpoint, or --quantization fp8",
    "tensorrt-llm": "a Model Optimizer FP8 checkpoint",
}


def _fp8_room(row: _Row, model: ModelSpec | None) -> tuple[float, float] | None:
    """(16-bit, fp8) weights per GPU of the row's shape, in GB, where the row keeps 16-bit
    weights on a card that runs FP8 natively under a runtime that serves FP8 weights: the
    memory fp8 weights would free, from the plan's own weight rule (serving.held_weights), with
    no shape re-planned. None elsewhere, or where the request pinned the precision (``model``
    None)."""
    c = row.result.config
    gpu, rt = row.gpu, row.runtime
    if (
        model is None
        or c.weight_precision not in ("bf16", "fp16")
        or c.runtime not in _FP8_HOW
        or not gpu.fp8_tflops
        or sv.supports_weights(gpu, "fp8", rt, model) is not None
        or serving_step.fp8_block_error(
            model, "fp8", llm_step.span(rt.decode, c.gpus_per_replica)[0]
        )
    ):
        return None
    fp8 = sv.weights_per_gpu(model, "fp8", rt, c.gpus_per_replica) / 1e9
    return row.result.weights_gb_per_gpu, fp8


def _fp8_words(row: _Row, room: tuple[float, float]) -> str:
    """What fp8 weights would free on the row, and their known quality cost with its source."""
    w16, w8 = room
    c = row.result.config
    cost = quality.known_cost("fp8")
    return (
        f"FP8 weights ({_FP8_HOW[c.runtime]}), native on the {row.gpu.name}, would free "
        f"{vram(w16 - w8):.1f} GiB per GPU ({vram(w16):.1f} → {vram(w8):.1f} GiB of weights) "
        "for the "
        "KV cache or a smaller group; the plan keeps the published "
        f"{c.weight_precision} weights unless asked (workload.precision fp8)"
        + (f". Quality, on the source's own model: {cost}" if cost else "")
        + "."
    )


def _half_group_kv(r: sv.ServingResult, running: float) -> tuple[float, float]:
    """(pool, need): each GPU's room for the KV cache on half the replica's GPUs, which hold
    twice their share of the weights taken from the pool, and the cache ``running`` requests
    would put on each of them: split over the half group, or (latent attention, every
    tensor-parallel GPU holding the whole cache: ``ServingResult.kv_copies``) whole on each."""
    c = r.config
    half = c.gpus_per_replica / 2
    pool = r.kv_pool_gb_per_gpu - r.weights_gb_per_gpu
    copies = max(1.0, r.kv_copies * half / c.gpus_per_replica)
    return pool, running * r.kv_held_gb * copies / half


def _half_group_holds(r: sv.ServingResult, spec: ServingSpec) -> bool:
    """Whether half the replica's GPUs would hold its weights and the load's KV cache: halving
    the group doubles each GPU's share of the weights, taken from the pool (16 GB of Llama 3.1
    8B on two 12 GB cards had read "not for memory")."""
    pool, need = _half_group_kv(r, spec.concurrent_requests or 1)
    return pool > 0 and need <= pool


def kv8_can_matter(r: sv.ServingResult, spec: ServingSpec) -> bool:
    """Whether a cache of half the bytes a request could change what carries this load: under
    a rate load always (its requests queue for the slots, Erlang C, and more slots cut the
    wait); under concurrent clients only where the replicas fill more than half their slots (a
    cache twice as large then lets fewer replicas hold them), or where half the group's GPUs
    would hold the load's cache at 8 bits but not at 16. Elsewhere the plan already holds twice
    the load at 16 bits, and an fp8 cache's "twice the requests" frees nothing the load uses
    (Llama 3.3 70B on 4 H200s at 64 clients: 594 slots, the tip had said it all the same)."""
    load = spec.concurrent_requests
    if spec.requests_per_s is not None or not load:
        return True
    c = r.config
    running = load / max(1, c.replicas)
    if running > r.max_concurrency / 2:
        return True
    if c.gpus_per_replica < 2:
        return False
    pool, need = _half_group_kv(r, running)
    return 0 < pool < need <= 2 * pool


def _tips(row: _Row, spec: ServingSpec, model: ModelSpec | None = None) -> list[str]:
    """The row's tips; ``model``: the job's model where the request left the weight precision
    to the planner (the fp8 weights' tip; None: not offered)."""
    r = row.result
    c = r.config
    tips: list[str] = []
    room = _fp8_room(row, model)
    if room is not None:
        tips.append(_fp8_words(row, room))
    has_kv8 = c.runtime in _KV8_HOW or row.runtime.fp8_kv
    if (
        c.kv_precision != "fp8"
        and has_kv8
        and sv.supports_kv(row.gpu, "fp8") is None
        and kv8_can_matter(r, spec)
    ):
        how = _KV8_HOW.get(c.runtime, "its 8-bit KV cache setting")
        tips.append(
            f"An 8-bit KV cache ({how}) halves the cache, so one replica holds twice the requests."
        )
    users = (spec.concurrent_requests or 0.0) / max(1, c.replicas)
    if (
        c.runtime in _SPECULATIVE
        and 0 < users <= SPECULATIVE_MAX_USERS
        and r.bottleneck != "compute"
    ):
        tips.append(
            f"At {users:g} request{'s' if users != 1 else ''} a replica, every decode step reads "
            f"the weights for a token or two: speculative decoding ({_SPECULATIVE[c.runtime]}) "
            "drafts several tokens a step and checks them in one pass, about 2–3× the speed "
            "each user sees at the same price (NVIDIA's DeepSeek-R1 record on 8 B200s: 368 "
            "tokens/s per user with 3 MTP layers, TensorRT-LLM's tech blog; EAGLE-3 paper: "
            "3–6.5× at batch 1). Not modelled here: the ITL above is without it."
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
        and _half_group_holds(r, spec)
    ):
        # the smaller groups missed the targets, cost more, or (fastest) decode slower
        tips.append(
            f"The cache holds far more requests than the load: the {c.gpus_per_replica}-GPU "
            "group is there for the latency targets, the objective (fastest takes the lowest "
            "ITL) or the instance's price, not for memory; the alternatives show the other "
            "shapes and what they cost."
        )
    return tips


def _expert_layout_note(row: _Row, model: ModelSpec | None) -> list[str]:
    """What a mixture-of-experts row spread over a tensor-parallel group leaves out: the
    expert-parallel layouts with data-parallel attention that such models are served with
    (LMSYS's large-scale EP blog on DeepSeek; vLLM's data- and expert-parallel deployment
    docs), under which each GPU keeps only its own requests' KV cache and a share of the
    experts. The plan prices tensor parallelism alone, so at high load its concurrency and
    throughput are a floor; under latent attention every GPU of the group holds the whole
    cache (llm_step.kv_copies), the cap SGLang's DP-attention guide names. Said once per row,
    where the replica spans GPUs under tensor parallelism (a layer split has no such layout)."""
    c = row.result.config
    if model is None or (model.experts or 0) <= 1 or c.gpus_per_replica <= 1:
        return []
    if row.runtime.multi_gpu != "tensor":
        return []
    mla = (
        "; every GPU of the group holds the whole MLA latent KV cache, which caps concurrency"
        if model.attention == "mla"
        else ""
    )
    # the summary's caveat is what comes before " (source:": the claim, not the flags
    return [
        "mixture-of-experts serving: planned as tensor parallel only, without expert "
        "parallelism or data-parallel attention, so concurrency and throughput at high load "
        f"are a lower bound{mla} (source: SGLang --enable-dp-attention with EP and vLLM "
        "--data-parallel-size with --enable-expert-parallel, as LMSYS's DeepSeek blog, SGLang's "
        "DP-attention guide and vLLM's docs deploy such models)"
    ]


def _recommendation(
    row: _Row,
    position: int,
    spec: ServingSpec,
    with_curve: bool,
    table: efficiency.EfficiencyTable | None,
    fp8_for: ModelSpec | None,
    model: ModelSpec,
) -> s.Recommendation:
    """The row as the answer gives it; ``fp8_for``: the job's model where its 16-bit rows may
    say what fp8 weights would free (``_tips``); ``model``: the job's model (what its layout
    leaves out: ``_expert_layout_note``)."""
    r = row.result
    c = r.config
    n = r.total_gpus
    gpu = row.gpu
    tput = r.output_tokens_per_s or 0.0
    running = r.running(spec.concurrent_requests, spec.requests_per_s)
    kv_used = r.kv_gb_per_gpu(running)
    mem = s.MemoryOut(
        required_gb=round(r.used_gb_per_gpu(running), 3),
        available_gb=_usable_gb(gpu, row, c.gpus_per_replica),
        headroom_gb=None,
        num_gpus=c.gpus_per_replica,
        breakdown={
            "weights": round(r.weights_gb_per_gpu, 3),
            "kv_cache": round(kv_used, 3),
            "workspace": round(r.activations_gb_per_gpu, 3),
            "framework": round(r.framework_gb_per_gpu, 3),
        },
        notes=[_pool_note(row), *_reserve_note(row)],
    )
    mem.headroom_gb = round((mem.available_gb or 0) - mem.required_gb, 3)
    priced = row.priced
    rent_h = priced.rent_usd_per_hour
    cost, extra = words.served_cost(
        gpu,
        r,
        priced,
        _per_million(r, rent_h),
        costs.usd_per_million_tokens(rent_h, r.output_tokens_per_s),
    )
    itl_s = (r.itl_ms or 0.0) / 1e3
    latency = (
        (r.ttft_ms or 0.0) + (spec.output_tokens - 1) * (r.itl_ms or 0.0)
        if r.ttft_ms is not None
        else None
    )
    table_ = table if table is not None else load_efficiency()
    band = _band(row, table_, model)
    return s.Recommendation(
        rank=position,
        gpu=gpu_out(gpu, priced.pricing),
        num_gpus=n,
        fits=True,
        precision=c.weight_precision,
        runtime=row.runtime.name,
        framework_status=row.status,
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
        bottleneck=words.bottleneck_word(r.bottleneck),
        timing=s.TimingOut(
            step_time_s=itl_s,
            # the decode step at this load, by its parts (math, bytes, links), as an LLM
            # inference row gives them
            compute_s=r.step.compute_s if r.step is not None else 0.0,
            memory_s=r.step.memory_s if r.step is not None else 0.0,
            overhead_s=row.runtime.step_overhead_s,
            host_transfer_s=0.0,
            interconnect_s=r.step.comm_s if r.step is not None else 0.0,
            scaling_efficiency=1.0,
        ),
        cost=cost,
        score=row.score if row.score is not None else 0.0,
        uncertainty=words.uncertainty_out(
            tput,
            band,
            time_band_out(
                r.ttft_ms,
                serving_first_token_band(gpu, r.config, row.runtime, table_, model),
            ),
        ),
        provenance={
            "specs": "published (catalog)",
            "throughput": "modelled: continuous batching on datasheet bandwidth and compute "
            + (
                f"; GEMM efficiency {row.served.gemm_basis}"
                if row.served.gemm_basis
                else "with published efficiency priors"
            ),
            "memory": "modelled",
            "hourly_price": words.price_words(priced),
            # what the GEMMs' efficiency rests on (kernel profiles), as inference rows say
            **({"gemm_efficiency": row.served.gemm_basis} if row.served.gemm_basis else {}),
        },
        explanation=_explain(row, spec),
        tips=_tips(row, spec, fp8_for),
        warnings=words.row_warnings(
            row,
            gpu,
            _expert_layout_note(row, model)
            + words.spot_words(priced)
            + ([near] if (near := near_capacity(r, spec, band[0])) else []),
        ),
        serving=_serving_out(row, with_curve),
        alternatives=[_alternative(gpu, o.result, o.price, spec) for o in row.others],
        **extra,
    )


# The share of a row's modelled capacity past which its answer says the load is near it: the
# share an arrival-rate plan is sized to (sv.NEAR_CAPACITY, where its reason is)
NEAR_CAPACITY = sv.NEAR_CAPACITY


def near_capacity(r: sv.ServingResult, spec: ServingSpec, band_low: float) -> str | None:
    """What a row must say when the asked requests/s load is past ``NEAR_CAPACITY`` of the
    plan's capacity at saturation (1 H100 for 16 requests/s, 4,800 of 4,959 output tokens/s,
    had said nothing). Names the capacity at the low edge of the row's band (``band_low``: its
    throughput factor) where that does not carry the load. Ranked plans are sized within the
    share (sv.meets), so a closest miss says it: an answer's when no plan meets the load, an
    estimate's whose GPU count is fixed too few. A fixed number of concurrent clients (a closed
    loop) cannot outrun the servers, so only an arrival rate is weighed."""
    load, most = r.output_tokens_per_s, r.max_output_tokens_per_s
    if spec.requests_per_s is None or spec.concurrent_requests is not None:
        return None
    if not load or most <= 0 or load < NEAR_CAPACITY * most:
        return None
    low = most * band_low
    # short: the answer pages are near their size budget
    short = f"; its band's low edge carries {low:,.0f}, under the load" if low < load else ""
    return (
        f"the load is {100 * load / most:.0f} % of modelled capacity ({load:,.0f} of {most:,.0f} "
        "output tokens/s): under random arrivals queueing delay grows without bound towards "
        f"100 %{short}"
    )


def _band(
    row: _Row, table: efficiency.EfficiencyTable, model: ModelSpec
) -> tuple[float, float, str]:
    return serving_band(row.gpu, row.result.config, row.runtime, table, model)


def serving_band(
    gpu: GpuSpec,
    config: sv.ServingConfig,
    runtime: sv.RuntimeProfile,
    table: efficiency.EfficiencyTable,
    model: ModelSpec,
) -> tuple[float, float, str]:
    """The serving regime's calibrated band (benchmarks/accuracy.py: published TensorRT-LLM
    saturation and vLLM load points, each GPU and each model held out), widened where the row's
    runtime or architecture is not in that set, or its replica spans GPUs in a way those rows
    did not (rank.serving_band_inputs: a llama.cpp layer split), and where ``model`` is a
    mixture of experts or the weights are 4-bit: the base band is fitted on the dense,
    standard-format rows, the MoE and fp4 rows calibrating those terms instead.
    benchmarks/accuracy.py scores the held-out serving rows' bands as the app answers through
    it."""
    return bands.band(rank.serving_band_inputs(gpu, config, runtime, model=model), table)


# A serving row's time to first token is its prompt pass plus the wait behind other requests
# at that load (app/domain/serving.py); the prefill band was calibrated on prompt passes alone
SERVING_TTFT_NOTE = (
    "the prompt pass's band: the wait behind other requests' prompts at this load is "
    "modelled, not calibrated"
)


def serving_first_token_band(
    gpu: GpuSpec,
    config: sv.ServingConfig,
    runtime: sv.RuntimeProfile,
    table: efficiency.EfficiencyTable,
    model: ModelSpec,
) -> tuple[float, float, str]:
    """The band on a serving row's prefill rate, whose inverse is its time to first token
    (rows.time_band_out): serving_band's inputs in the calibrated ``prefill`` regime (published
    llama.cpp prompt rates and TensorRT-LLM first-token latencies), the same widenings."""
    x = rank.serving_band_inputs(gpu, config, runtime, "prefill", model=model)
    lo, hi, basis = bands.band(x, table)
    return lo, hi, f"{basis}; {SERVING_TTFT_NOTE}"


def _alternative(
    gpu: GpuSpec, res: sv.ServingResult, priced: serving_step.Price, spec: ServingSpec
) -> s.AlternativeOut:
    """Another shape of the same GPU that meets the targets, with the instance it rents; its
    memory as the row counts its own (the requests' KV cache, not the whole pool reserved)."""
    return words.alternative_out(
        res,
        priced,
        gpus_per_replica=res.config.gpus_per_replica,
        latency=(res.itl_ms, res.ttft_ms),
        required_gb=res.used_gb_per_gpu(res.running(spec.concurrent_requests, spec.requests_per_s)),
        throughput=res.output_tokens_per_s or 0.0,
        unit="output tokens/s",
    )


# A first token later than this is a queue, not a latency target worth suggesting.
QUEUE_WAIT_MS = 60_000.0


def _requests(n: int) -> str:
    return f"{n:,} request{'s' if n != 1 else ''}"


def _default_note(default: bool) -> str:
    return " (the default is MLPerf's; set your own)" if default else ""


# The most GPUs one replica spans (four nodes of 8, pipeline stages): more GPUs than this add
# replicas, never room for the model
WIDEST_REPLICA = max(serving_step.NODE_SPANS)

# What leaves a card out before it is tried: the request's budget, a price it needs, its filters
_LIMITS_LEFT_OUT = frozenset({*costs.PRICE_EXCLUSIONS, "filtered_out"})


def _relax(
    closest: list[_Row],
    model: ModelSpec,
    spec: ServingSpec,
    max_gpus: int,
    left_out: int = 0,
    wider: Mapping[int, list[str]] | None = None,
    exact: int | None = None,
    scale: ScaleOut | None = None,
) -> list[str]:
    """What to change when no configuration meets the targets (``scale``: the replicas the
    load needs, ``scale_out``); ``left_out``: cards left out
    for something else than holding the model (a budget, a missing price, the filters);
    ``wider``: the cards max_gpus alone leaves out, by the GPUs a replica of each needs;
    ``exact``: the request's constraints.num_gpus, which fixes the count whatever max_gpus
    says, so the lever is that field (raising max_gpus had been advised, which changes
    nothing)."""
    cap, more = _count_lever(max_gpus, exact)
    done = [r for r in closest if r.result.ttft_ms is not None and r.result.itl_ms is not None]
    tips: list[str] = []
    p95 = spec.target_percentile == "p95"
    if done and spec.itl_ms_target is not None:
        best = min(done, key=lambda r: (r.result.itl_p95_ms if p95 else r.result.itl_ms) or 1e9)
        itl = (best.result.itl_p95_ms if p95 else best.result.itl_ms) or 0.0
        if itl > spec.itl_ms_target:
            first = (best.result.ttft_p95_ms if p95 else best.result.ttft_ms) or 0.0
            # the fastest decode may queue its first tokens: raising the ITL target alone
            # would not make it meet (a 22 ms ITL beside a 4-minute TTFT had been offered)
            also = (
                f"; its first token takes ~{first:,.0f} ms, over the TTFT target too"
                if spec.ttft_ms_target is not None and first > spec.ttft_ms_target
                else ""
            )
            tips.append(
                f"raise the ITL target{_default_note(spec.itl_target_default)} to about "
                f"{itl:,.0f} ms (the fastest: {best.gpu.name}, {best.result.config.replicas}×"
                f"{best.result.config.gpus_per_replica}{also})"
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
    if scale is not None and scale.replicas is not None:
        tips.append(f"{more} for more replicas: {scale.words()}")
    elif any(
        r.result.total_gpus >= cap and serving_step.one_request_meets(r.gpu, r.served, spec, model)
        for r in closest[:3]
    ):
        tips.append(f"{more} for more replicas")
    if not closest and left_out:
        # cards that may hold it were left out before they were tried: say that, not that
        # none holds it (the answer's `empty` names each change that lets some run it)
        tips.append(
            f"{left_out} card{'s are' if left_out != 1 else ' is'} left out by the budget, a "
            "missing price or the filters before being tried (the excluded list says which)"
        )
        if exact is not None and cap < WIDEST_REPLICA:
            # _wider tracks only max_gpus's leave-outs: an exact count's lever is said here
            tips.append(f"{more}: no card tried holds the model on {_gpus(cap)}")
    elif not closest and cap < WIDEST_REPLICA:
        # no card holds the model at all: fewer requests cannot help, more GPUs can (a replica
        # spans up to WIDEST_REPLICA), as can fewer bytes a weight
        tips.append(f"{more}: no card holds the model on {_gpus(cap)}")
    tips += _wider_words(wider or {}, max_gpus)
    if not closest:
        tips.append(
            "pick a smaller model, or a quantised one (precision fp8/int4/fp4, or "
            "constraints.allow_4bit to let the planner choose 4-bit weights, at a quality cost)"
        )
    elif spec.concurrent_requests is not None:
        tips.append("serve fewer concurrent requests per deployment, or shorter outputs")
    return tips


@dataclass(frozen=True)
class ScaleOut:
    """The GPU count an empty answer's what-if lifts max_gpus to (whatif._sized_lift): the
    fewest GPUs per replica a card holds the model on within the ITL floor (``per_replica``,
    on ``gpu``), times the replicas the asked rate needs (``replicas``; None where no shape
    within the limits says it yet: the what-if re-ranks on ``per_replica`` first)."""

    gpus: int
    per_replica: int
    gpu: str
    replicas: int | None = None

    def words(self) -> str:
        r = self.replicas or 1
        return (
            f"{r} replica{'s' if r != 1 else ''} of {_gpus(self.per_replica)} ({self.gpu}) "
            f"carry the rate at {100 * NEAR_CAPACITY:.0f} % of their capacity, {_gpus(self.gpus)}"
        )


def scale_out(
    closest: list[_Row],
    spec: ServingSpec,
    model: ModelSpec,
    cap: int,
    wider: Mapping[int, list[str]],
) -> ScaleOut | None:
    """The count an expert names when no shape within ``cap`` GPUs carries an arrival rate:
    replicas of a closest shape whose one request per replica meets the targets (more of
    them help), on the fewest GPUs; else, where no card holds the model within the ITL floor on
    ``cap`` (``wider``: serving_step.decode_floor_ms), the fewest GPUs a replica of one that
    does spans, whose replicas the what-if's re-ranking then counts (a closest shape that
    one request already misses on is no lever)."""
    best: ScaleOut | None = None
    for r in closest[:3]:
        n = serving_step.replicas_needed(r.result, spec)
        if n is None:
            continue
        g = r.result.config.gpus_per_replica
        if n * g <= cap or n * g > MOST_GPUS:
            continue
        if not serving_step.one_request_meets(r.gpu, r.served, spec, model):
            continue
        if best is None or n * g < best.gpus:
            best = ScaleOut(n * g, g, r.gpu.name, n)
    if best is not None or spec.requests_per_s is None:
        return best
    more = [n for n in wider if cap < n <= MOST_GPUS]
    if more:
        n = min(more)
        return ScaleOut(n, n, _and(wider[n]))
    return None


def _advice(
    lead: _Row | None, wider: Mapping[int, list[str]], max_gpus: int, model: ModelSpec | None
) -> list[str]:
    """The answer's advice on its top pick: the cards max_gpus alone left out, where the top
    pick spans that many GPUs too (the ceiling binds; with no row the summary's relax names
    them), and what fp8 weights would free where the pick keeps 16-bit ones on a card with
    native FP8 (``_fp8_room``): the default keeps the published weights (issue 23), so the
    lever is said, not pulled."""
    if lead is None:
        return []
    out = []
    if lead.result.total_gpus >= max_gpus:
        out += [f"{w[0].upper()}{w[1:]}." for w in _wider_words(wider, max_gpus)]
    room = _fp8_room(lead, model)
    if room is not None:
        out.append(f"The top pick keeps 16-bit weights. {_fp8_words(lead, room)}")
    return out


def _wider(ctx: ev.Context, excluded: list[s.Excluded]) -> dict[int, list[str]]:
    """The cards the request's max_gpus alone leaves out (serving_step.more_gpus), by name,
    grouped by the GPUs a replica of each needs, the fewest first."""
    need = serving_step.more_gpus(ctx)
    out: dict[int, list[str]] = {}
    for e in excluded:
        if e.code == "filtered_out" and e.slug in need:
            out.setdefault(need[e.slug], []).append(e.name)
    return dict(sorted(out.items()))


def _wider_words(wider: Mapping[int, list[str]], max_gpus: int) -> list[str]:
    """Each GPU count beyond max_gpus that lets a card left out by it hold the model (and, under
    an ITL target, read its weights fast enough: ``serving_step.decode_floor_ms``)."""
    return [
        f"raise constraints.max_gpus from {max_gpus} to {n} to plan {_and(names)}: "
        f"{'it needs' if len(names) == 1 else 'they need'} {n} GPUs per replica"
        for n, names in wider.items()
    ]


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _gpus(n: int) -> str:
    return f"{n} GPU" if n == 1 else f"{n} GPUs"


def _count_lever(max_gpus: int, exact: int | None) -> tuple[int, str]:
    """The GPU count a serving answer was planned on and the change that allows more: a
    stated constraints.num_gpus runs exactly that many (above max_gpus too), else max_gpus
    caps the count."""
    if exact is not None:
        return exact, f"any GPU count instead of exactly {exact} (constraints.num_gpus)"
    return max_gpus, f"allow more than {_gpus(max_gpus)} (constraints.max_gpus)"


def _asked_format(
    request: s.RecommendationRequest | s.EstimateRequest, work: WorkloadSpec
) -> str | None:
    """The weight format the rows run: the request's, or the release's a runtime reads as it is
    (llama.cpp on gpt-oss's MXFP4: workloads._as_released names it on the resolved job)."""
    return work.quantization if work.quantization != "none" else request.workload.quantization


def _row(c: rank.Candidate, weight_format: str | None, others: list[rank.Candidate]) -> _Row:
    """A ranked candidate's row, with the quality cost of a quantised format said and the
    card's other shapes (``others``: rank.best_per_card's) as its alternatives."""
    assert c.serving is not None
    alts = tuple(o.serving for o in others if o.serving is not None)
    said = _said(c.serving, weight_format, c.work.released_format, c.work.preset)
    return _Row(c.gpu, c.serving, c.score, said, alts, c.framework_status)


def _near(r: ev.ConfigResult, weight_format: str | None) -> _Row:
    """A card's near miss (a "misses_targets" result) as a row of the closest."""
    assert r.serving is not None
    released = r.work.released_format if r.work is not None else None
    said = _said(r.serving, weight_format, released, r.work.preset if r.work else None)
    return _Row(r.gpu, r.serving, None, said, status=r.framework_status)


# Runtimes whose fp8 plan loads the named FP8 checkpoint (deploy.checkpoint)
_LOADS_FP8_REPO = frozenset(HF_CHECKPOINT_SERVERS)


def _said(
    served: Served, weight_format: str | None, released: str | None, preset: str | None = None
) -> tuple[str, ...]:
    """The quality costs a shape's weight and KV formats are known to carry (none said against
    the format the model was ``released`` in, nor against the FP8 checkpoint the model's own
    publisher ships where the row's deploy loads it: deploy.publisher_fp8)."""
    conf = served.result.config
    if served.weights_run_as is not None:
        # the format the row's weights run as (compat.weights_run_as, the rule inference rows
        # read): plain int4 under Transformers on a Mac is NF4, not GPTQ/AWQ
        weight_format = served.weights_run_as
    named = served.runtime.named_format
    if named is not None and named[0] == conf.weight_precision:
        # the named format the weights are in (gpt-oss's MXFP4 release, llama.cpp reading it)
        weight_format = named[1]
    if weight_format in (None, "none"):
        # a bare precision the runtime stores in its own format (MLX's int4 is its affine
        # 4-bit: vocab.RUNTIME_OWN_FORMATS), as inference rows say it
        own_format = RUNTIME_OWN_FORMATS.get((conf.runtime, conf.weight_precision))
        weight_format = own_format or weight_format
    own = (
        publisher_fp8(preset)
        if conf.weight_precision == "fp8" and conf.runtime in _LOADS_FP8_REPO
        else None
    )
    return quality.notes(conf.weight_precision, conf.kv_precision, weight_format, released, own)


def _curved(row: _Row, ctx: ev.Context, curve: bool = True) -> _Row:
    """The row's shape at saturation too, with its curve when ``curve``."""
    served = serving_step.with_curve(row.gpu, row.served, ctx, curve)
    return dataclasses.replace(row, served=served)


def _whole_model(work: WorkloadSpec, lead: _Row | None) -> s.MemoryOut:
    """The whole model's weights in the top row's format (``lead``), the one its per-GPU split
    divides; with no row, the published weights: 16-bit, or the format the model was released
    in (a what-if that allows 4-bit weights shows the 4-bit size its plan holds)."""
    if lead is not None:
        p, rt = lead.result.config.weight_precision, lead.runtime
        held = sv.held_weights(work.model, p, rt)
        label = sv.weights_name(p, _weight_format(p, rt))
    else:
        released = work.released_format
        as_released = quality.is_release(released, work.precision, work.quantization)
        p, label = (work.precision, released or "") if as_released else ("bf16", "bf16")
        table = work.efficiency
        bits = table.bits_per_weight.get(released or "") if as_released and table else None
        held = sv.weight_bytes(work.model, p, format_bits=bits)
    weights_gb = round(held / 1e9, 3)
    return s.MemoryOut(
        required_gb=weights_gb,
        available_gb=None,
        headroom_gb=None,
        num_gpus=1,
        breakdown={"weights": weights_gb},
        notes=[f"{label} weights of the whole model; each row shows its own per-GPU split"],
    )


def answer(
    request: s.RecommendationRequest,
    ctx: ev.Context,
    warnings: list[str],
    ordered: list[rank.Candidate],
    ranked: list[rank.Candidate],
    excluded: list[s.Excluded],
    missed: list[ev.ConfigResult],
    others: dict[str, list[rank.Candidate]] | None = None,
) -> s.RecommendationResponse:
    """The ranked serving candidates (``ordered``: the rows shown, of ``ranked``; ``others``:
    each shown card's other shapes, by slug, when one row is shown per card), the cards left
    out and the cards' near misses (``missed``) as a serving answer."""
    work = ctx.work
    assert work.serving is not None
    spec = work.serving
    cons = request.constraints
    fmt = _asked_format(request, ctx.work)
    alts = others or {}
    top = [_row(c, fmt, alts.get(c.gpu.slug, [])) for c in ordered]
    top = [_curved(r, ctx, i < CURVES_FOR) for i, r in enumerate(top)]
    encoder = work.model.family == "encoder"
    # fp8 weights are said, not planned, where the planner kept the published 16-bit ones
    fp8_for = None if ctx.serving.precision or encoder else work.model

    def rec(r: _Row, i: int, curve: bool) -> s.Recommendation:
        if encoder:  # an embedding model's rows in its own units (app/recommend/serving_encoder)
            return encoder_words.recommendation(r, i, spec, ctx)
        return _recommendation(r, i, spec, curve, work.efficiency, fp8_for, work.model)

    recs = [rec(r, i, i <= CURVES_FOR) for i, r in enumerate(top, start=1)]
    targets = encoder_words.target_words(spec) if encoder else _target_words(spec)
    load = encoder_words.load_words(spec) if encoder else _load_words(spec)
    wider = _wider(ctx, excluded)
    if recs:
        lead = top[0].result.config
        n = len(ranked)
        message = (
            f"{n} GPU type{'s carry' if n != 1 else ' carries'} "
            f"{load}{f' within {targets}' if targets else ''}; the top pick is {top[0].gpu.name}, "
            f"{replicas_words(lead.replicas, lead.gpus_per_replica)}."
        )
        summary = s.ServingSummaryOut(met=True, message=message, load=load)
    else:
        closest = [_near(r, fmt) for r in serving_step.closest_first(missed, spec)]
        near = [_curved(r, ctx) for r in closest[:3]]
        why = (
            f"closest: {near[0].gpu.name} {near[0].result.config.replicas}×"
            f"{near[0].result.config.gpus_per_replica} ({'; '.join(near[0].misses)})"
            if near
            else "no GPU in the catalog can even hold the model within the limits"
        )
        wide = {name for names in wider.values() for name in names}
        left_out = sum(1 for e in excluded if e.code in _LIMITS_LEFT_OUT and e.name not in wide)
        on = (
            f"on exactly {_gpus(cons.num_gpus)}"
            if cons.num_gpus is not None
            else f"within {_gpus(cons.max_gpus)}"
        )
        meets = f"meets {targets} at {load}" if targets else f"carries {load}"
        message = f"No configuration {on} {meets} — {why}."
        scale = (
            None
            if encoder or cons.num_gpus is not None
            else scale_out(near, spec, work.model, cons.max_gpus, wider)
        )
        if scale is not None and scale.replicas is not None:
            message = message[:-1] + f"; {scale.words()}."
        summary = s.ServingSummaryOut(
            met=False,
            message=message,
            load=load,
            relax=encoder_words.relax(closest, spec, cons.max_gpus, cons.num_gpus)
            if encoder
            else _relax(
                closest, work.model, spec, cons.max_gpus, left_out, wider, cons.num_gpus, scale
            ),
            closest=[rec(r, i, True) for i, r in enumerate(near, start=1)],
        )
        summary._scale = scale
    mem = _whole_model(work, top[0] if top else None)
    return s.RecommendationResponse(
        workload=resolved_out(work),
        memory=mem,
        objective=request.objective,
        acquisition=cons.acquisition,
        framework=cons.framework,
        count=len(ranked),
        counts=s.CountsOut(
            ranked=len(ranked),
            excluded=len(excluded),
            unpriced=sum(1 for c in ranked if not rank.price_known(c)),
        ),
        recommendations=recs,
        excluded=excluded,
        baseline=None,
        warnings=warnings,
        advice=_advice(top[0] if top else None, wider, cons.max_gpus, fp8_for),
        serving=summary,
    )


def estimated(
    request: s.EstimateRequest, ctx: ev.Context, warnings: list[str], gpu: GpuSpec
) -> s.EstimateResponse:
    """One GPU through the same plan and evaluate steps: its cheapest shape (with
    ``ctx.serving.group`` GPUs per replica when the request fixes it; rank.best_per_card picks
    it, its other shapes the alternatives), or its closest miss; budgets and filters do not
    apply."""
    work = ctx.work
    assert work.serving is not None
    planned = ev.plan(gpu, ctx)
    found: ev.Exclusion | None = None
    row: _Row | None = None
    fmt = _asked_format(request, ctx.work)
    if isinstance(planned, ev.Exclusion):
        found = planned
    else:
        results = [ev.evaluate(c, ctx) for c in planned]
        cands = [rank.Candidate.of(r) for r in results if r.ok]
        if cands:
            ((chosen, others),) = rank.best_per_card(cands, "cheapest")
            row = _row(chosen, fmt, others)
        else:
            found, near = serving_step.card_exclusion(results, ctx)
            if near is not None:
                row = _near(near, fmt)
    if row is not None:
        # one card's row scores 1, as every task's estimate (rank.rank of one candidate)
        row = dataclasses.replace(_curved(row, ctx), score=1.0)
        fp8_for = None if ctx.serving.precision else work.model
        rec = (
            encoder_words.recommendation(row, 1, work.serving, ctx)
            if work.model.family == "encoder"
            else _recommendation(row, 1, work.serving, True, work.efficiency, fp8_for, work.model)
        )
        return s.EstimateResponse(
            workload=resolved_out(work),
            gpu=rec.gpu,
            result=rec,
            warnings=warnings + rec.warnings,
        )
    why = found
    assert why is not None
    return s.EstimateResponse(
        workload=resolved_out(work),
        gpu=gpu_out(gpu),
        result=None,
        excluded=s.Excluded(
            slug=gpu.slug,
            name=gpu.name,
            code=why.code,
            reason=why.reason,
            detail=why.detail or None,
        ),
        warnings=warnings,
    )

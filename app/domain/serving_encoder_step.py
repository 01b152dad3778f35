"""Task 'serving' of an encoder (an embedding model, a reranker, BERT) as the engine's plan and
evaluate steps: the same pipeline a decoder's serving runs (serving_step), with the batcher of
app/domain/serving_encoder.py where the continuous-batching solve was.

* A shape is replicas of one GPU each: an encoder's weights (BGE-large: 0.67 GB in 16-bit)
  fit every card a replica is planned on, and the embedding servers scale out by replicas
  behind a load balancer (TEI runs one model per GPU; its docs shard nothing).
* Each shape is solved by ``serving_encoder.evaluate`` on the engine's own forward pass
  (``serving_encoder.engine_step``: perf.estimate of the encoder's batch inference) and
  judged by ``serving_encoder.meets`` against the request's latency (its ``ttft_ms_target``:
  one forward pass's first answer is its whole answer). It is then priced, budgeted and
  ranked as a decoder's shape is (serving_step.price, evaluate.budget, rank.rank).
* The result is carried in the decoder's ``ServingResult`` so the ranking and the answer read
  one type: ``ttft_ms`` is the request's latency, ``itl_ms`` None (there is no next token),
  ``output_tokens_per_s`` the embeddings (sequences) per second, ``input_tokens_per_s`` the
  tokens embedded per second, ``max_concurrency`` the sequences one batch carries, no KV cache.
  ``Served.encoder`` keeps the batcher's own result for the answer's words.

Pure: no I/O; the caller resolves the workload (with its efficiency table).
"""

from __future__ import annotations

import dataclasses
import math

from app.domain import compat, efficiency, perf, serving_step
from app.domain import evaluate as ev
from app.domain import serving as sv
from app.domain import serving_encoder as se
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.domain.workload import MemoryBreakdown, WorkloadSpec, memory_breakdown
from app.vocab import SINGLE_DEVICE_SEGMENTS

# the KV format field of an encoder's shape: it keeps no cache
NO_KV = "none"


def is_encoder_job(work: WorkloadSpec) -> bool:
    return work.task == "serving" and se.is_encoder(work.model)


def _precision(gpu: GpuSpec, ctx: ev.Context, backend: str) -> str | None:
    """The job's precision on the card: bf16 runs as fp16 where the card lacks bf16 (TEI's
    default dtype on a GPU is float16); None where the card runs neither."""
    p = ctx.work.precision
    if compat.precision_supported(gpu, p, ctx.rules, backend):
        return p
    if p == "bf16" and compat.precision_supported(gpu, "fp16", ctx.rules, backend):
        return "fp16"
    return None


def _load(ctx: ev.Context) -> se.EncoderLoad:
    assert ctx.work.serving is not None
    return se.load_of(ctx.work.serving)


def plan(gpu: GpuSpec, ctx: ev.Context) -> list[ev.Configuration] | ev.Exclusion:
    """The card's encoder shapes: 1 … max_gpus replicas of one GPU (exactly ``num_gpus`` where
    the request fixes it), none beyond a concurrency load's clients (they would sit idle);
    or why the card cannot serve: the request's filters and software gate, a precision the
    card lacks, a full batch that does not fit its memory."""
    if ctx.apply_filters:
        excl = ev.filtered_out(gpu, ctx.limits)
        if excl is not None:
            return excl
    # the card's backend and the server that runs on it, as a decoder's serving gates its
    # runtime (serving_step.software: TEI's image list, infinity where it has none)
    sw = serving_step.software(gpu, ctx)
    if isinstance(sw, ev.Exclusion):
        return sw
    backend = sw.backend
    precision = _precision(gpu, ctx, backend)
    if precision is None:
        return ev.Exclusion(
            "precision_unsupported", f"{gpu.name} runs neither {ctx.work.precision} nor fp16"
        )
    rt, load = se.RUNTIMES[sw.runtime], _load(ctx)
    work = dataclasses.replace(ctx.work, precision=precision)
    why = se.fits(gpu, work, rt, load)
    if why is not None:
        return ev.Exclusion("does_not_fit", why)
    full = _step(gpu, ctx, precision, rt)(se.batch_cap(rt, load), load.padded_to(rt))
    if not math.isfinite(full) or full <= 0.0:
        # a card the catalog gives no compute figures (the decoder's serving says the same)
        return ev.Exclusion("no_figures", sv.NO_FIGURES)
    exact = (
        ctx.serving.group
        if ctx.serving.group is not None
        else ctx.limits.exact_gpus
        if ctx.apply_filters
        else None
    )
    single = gpu.segment in SINGLE_DEVICE_SEGMENTS or backend == "mps"
    if exact is not None:
        if single and exact > 1:
            return ev.Exclusion(
                "does_not_fit", f"{gpu.name} runs as one device; {exact} GPUs were asked for"
            )
        counts = [exact]
    else:
        most = 1 if single else max(1, ctx.limits.max_gpus)
        users = ctx.work.serving.concurrent_requests if ctx.work.serving else None
        if users is not None:
            most = min(most, max(1, math.ceil(users)))
        counts = list(range(1, most + 1))
    return [
        ev.Configuration(
            gpu,
            num_gpus=n,
            precision=precision,
            runtime=rt.name,
            shape=sv.ServingConfig(1, n, precision, NO_KV, rt.name),
        )
        for n in counts
    ]


def _step(gpu: GpuSpec, ctx: ev.Context, precision: str, rt: se.EncoderRuntime) -> se.StepFn:
    """The engine's forward pass on the card, one per (card, precision, runtime) for all its
    replica counts (memoised batch shapes)."""
    key = ("encoder step", gpu.slug, precision, rt.name)
    hit: se.StepFn | None = ctx.memo.get(key)
    if hit is None:
        work = dataclasses.replace(ctx.work, precision=precision)
        hit = se.engine_step(gpu, work, rt, ctx.calibration)
        ctx.memo[key] = hit
    return hit


def profile(rt: se.EncoderRuntime) -> sv.RuntimeProfile:
    """The embedding server as the serving rows name it: a dynamic batcher (no continuous
    batching), its batch caps, one GPU a replica, no KV cache (fp8_kv False)."""
    return sv.RuntimeProfile(
        name=rt.name,
        version=rt.version,
        continuous_batching=False,
        memory_utilization=1.0,
        of_free=False,
        max_batch=rt.batch_requests or 0,
        chunk_tokens=rt.batch_tokens or 0,
        step_overhead_s=0.0,
        source=rt.source,
        multi_gpu="none",
        fp8_kv=False,
    )


def full_batch(
    gpu: GpuSpec,
    work: WorkloadSpec,
    precision: str,
    rt: se.EncoderRuntime,
    calibration: Calibration | None = None,
) -> tuple[WorkloadSpec, MemoryBreakdown, perf.PerfEstimate]:
    """A full batch as batch inference prices it: the job, its memory and its forward pass
    (its bottleneck, compute precision and the band the row takes)."""
    assert work.serving is not None
    load = se.load_of(work.serving)
    job = dataclasses.replace(
        work,
        task="inference",
        runtime=rt.kernels,
        precision=precision,
        batch_size=se.batch_cap(rt, load),
        seq_len=load.padded_to(rt),
    )
    return job, memory_breakdown(job), perf.estimate(gpu, job, calibration=calibration)


def as_serving(
    res: se.EncoderResult, shape: sv.ServingConfig, mem: MemoryBreakdown, est: perf.PerfEstimate
) -> sv.ServingResult:
    """The batcher's result in the serving result's fields (the module docstring's mapping)."""
    k = res.inputs
    return sv.ServingResult(
        config=shape,
        fits=True,
        reason=None,
        weights_gb_per_gpu=mem.weights,
        kv_pool_gb_per_gpu=0.0,
        activations_gb_per_gpu=mem.activations + mem.workspace,
        framework_gb_per_gpu=mem.framework,
        kv_gb_per_request=0.0,
        max_concurrency=res.batch_cap,
        ttft_ms=res.latency_ms,
        ttft_p95_ms=res.latency_p95_ms,
        itl_ms=None,
        itl_p95_ms=None,
        output_tokens_per_s=res.embeddings_per_s,
        input_tokens_per_s=res.tokens_per_s,
        max_output_tokens_per_s=res.max_requests_per_s * k,
        requests_per_s=res.requests_per_s,
        saturated=False,
        prefill_share=1.0,
        bottleneck=est.bottleneck,
        compute_precision=est.compute_precision,
        curve=(),
        notes=res.notes,
        load_share=res.load_share,
    )


def evaluate(config: ev.Configuration, ctx: ev.Context) -> ev.ConfigResult:
    """One encoder shape as the evaluate step: the batcher at the load, judged against the
    latency (a miss is excluded as "misses_targets" with what it reached attached), then
    priced and judged by the request's budget as a decoder's shape is."""
    gpu, spec = config.gpu, ctx.work.serving
    shape = config.shape
    assert spec is not None and shape is not None
    sw = serving_step.software(gpu, ctx)
    if isinstance(sw, ev.Exclusion):
        return ev.ConfigResult(config, sw)
    backend, status = sw.backend, sw.status
    rt = se.RUNTIMES[shape.runtime]
    step = _step(gpu, ctx, shape.weight_precision, rt)
    res = se.evaluate(step, rt, _load(ctx), shape.replicas)
    target, p95 = se.latency_target(spec)
    ok, misses = se.meets(res, target, p95)
    _, mem, est = full_batch(gpu, ctx.work, shape.weight_precision, rt, ctx.calibration)
    result = as_serving(res, shape, mem, est)
    priced = serving_step.price(gpu, 1, shape.replicas, ctx)
    reasons = (
        (priced.pricing.rent_reason, priced.pricing.buy_reason)
        if priced.pricing is not None
        else (None, None)
    )
    warnings = list(sw.framework_warnings)
    if sw.caveat is not None:
        warnings.append(sw.caveat)
    if shape.weight_precision != ctx.work.precision:
        warnings.append(
            f"{gpu.name} has no {ctx.work.precision} math: served at {shape.weight_precision}"
        )
    asked = spec.requests_per_s * res.inputs if spec.requests_per_s is not None else None
    served = serving_step.Served(
        result, profile(rt), priced, ok, tuple(misses), tuple(warnings), est.efficiency_basis,
        asked, spec.concurrent_requests, encoder=res,
    )  # fmt: skip
    return serving_step.settle(
        config,
        ctx,
        shape,
        served,
        reasons,
        backend,
        status,
        lambda: (
            dataclasses.replace(ctx.work, precision=shape.weight_precision),
            MemoryBreakdown(
                weights=mem.weights,
                workspace=mem.activations + mem.workspace,
                framework=mem.framework,
                num_gpus=1,
            ),
            efficiency.usable_gb(gpu),
            _perf(res, est, rt, backend, shape.replicas),
        ),
    )


def _perf(
    res: se.EncoderResult,
    est: perf.PerfEstimate,
    rt: se.EncoderRuntime,
    backend: str,
    replicas: int,
) -> perf.PerfEstimate:
    """The shape at the load as the ranking reads an estimate: embeddings per second over all
    replicas, one step a full batch, the request's latency as its first (and only) answer."""
    return dataclasses.replace(
        est,
        throughput=res.embeddings_per_s or 0.0,
        unit="embeddings/s",
        step_time_s=res.batch_ms / 1e3,
        num_gpus=replicas,
        scaling_efficiency=1.0,
        latency_ms=res.latency_ms,
        ttft_ms=res.latency_ms,
        ms_per_token=None,
        runtime=rt.name,
        backend=backend,
    )


def with_curve(gpu: GpuSpec, served: serving_step.Served, ctx: ev.Context) -> serving_step.Served:
    """The shown row's latency-throughput curve (serving_encoder.curve) on the same forward
    pass its figures were priced on."""
    enc, shape = served.encoder, served.result.config
    assert enc is not None
    rt = se.RUNTIMES[shape.runtime]
    step = _step(gpu, ctx, shape.weight_precision, rt)
    points = se.curve(step, rt, _load(ctx), shape.replicas)
    return dataclasses.replace(served, encoder=dataclasses.replace(enc, curve=points))

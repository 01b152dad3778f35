"""Task 'serving' of an encoder (an embedding model, a reranker) in its own words: the rows
app/domain/serving_encoder_step.py ranked, said as latency, embeddings (sequences) per second
and $ per million embeddings, not as first-token, inter-token latency and output tokens.

app/recommend/serving.py hands an encoder's rows here; the ranking, pricing, budget and the
answer's frame (counts, excluded cards, the summary) are the decoder's.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from app.domain import bands, efficiency, rank, serving_step
from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import serving_encoder as se
from app.domain import serving_encoder_step as encoder_step
from app.domain.figures import given
from app.domain.workload import ServingSpec
from app.recommend import schemas as s
from app.recommend import serving_rows as words
from app.recommend.rows import gpu_out, time_band_out

if TYPE_CHECKING:
    from app.recommend.serving import _Row

UNIT = "embeddings/s"


def load_words(spec: ServingSpec) -> str:
    """The load in an encoder's words: requests of one sequence of ``prompt_tokens``."""
    who = (
        f"{spec.concurrent_requests:,g} concurrent client"
        f"{'' if spec.concurrent_requests == 1 else 's'}"
        if spec.concurrent_requests is not None
        else f"{given(spec.requests_per_s or 0.0)} requests/s"
    )
    spread = f" (± {spec.prompt_tokens_spread:,})" if spec.prompt_tokens_spread else ""
    return f"{who}, one {spec.prompt_tokens:,}-token sequence{spread} a request"


def target_words(spec: ServingSpec) -> str:
    """The latency target in words; "" where none is set (the load alone is held)."""
    if spec.ttft_ms_target is None:
        return ""
    ms = spec.ttft_ms_target
    said = f"{ms:,.0f}" if ms >= 10 else f"{ms:.2g}"
    return f"latency ≤ {said} ms at {spec.target_percentile}"


def usd_per_million(res: se.EncoderResult, usd_per_hour: float | None) -> float | None:
    return res.usd_per_million(usd_per_hour)


def _encoder(row: _Row) -> se.EncoderResult:
    enc = row.served.encoder
    assert enc is not None
    return enc


def serving_out(row: _Row) -> s.ServingOut:
    r, enc = row.result, _encoder(row)
    c = r.config
    return s.ServingOut(
        kind="encoder",
        replicas=c.replicas,
        gpus_per_replica=1,
        tensor_parallel=1,
        multi_gpu="none",
        runtime=c.runtime,
        runtime_version=row.runtime.version,
        weight_precision=c.weight_precision,
        weight_format=c.weight_precision,
        kv_cache_precision=c.kv_precision,
        max_concurrency=enc.batch_cap * c.replicas,
        ttft_ms=enc.latency_ms,
        ttft_p95_ms=enc.latency_p95_ms,
        itl_ms=None,
        itl_p95_ms=None,
        output_tokens_per_s=None,
        input_tokens_per_s=enc.tokens_per_s,
        requests_per_s=enc.requests_per_s,
        max_output_tokens_per_s=0.0,
        usd_per_hour=row.usd_per_hour,
        price_basis=row.priced.basis,
        usd_per_million_output_tokens=None,
        usd_per_million_input_tokens=costs.usd_per_million_tokens(
            row.usd_per_hour, enc.tokens_per_s
        ),
        meets_slo=row.meets,
        misses=row.misses,
        kv_cache_gb_per_request=0.0,
        embeddings_per_s=enc.embeddings_per_s,
        max_embeddings_per_s=enc.max_requests_per_s * enc.inputs,
        usd_per_million_embeddings=enc.usd_per_million(row.usd_per_hour),
        batch_sequences=enc.batch_cap,
        batch_ms=enc.batch_ms,
        encoder_curve=[s.EncoderCurvePointOut(**dataclasses.asdict(p)) for p in enc.curve],
    )


def _explain(row: _Row, spec: ServingSpec) -> list[str]:
    enc, c = _encoder(row), row.result.config
    rt = se.RUNTIMES[c.runtime]
    how = (
        f"batches of up to {enc.batch_cap:,} sequences ({rt.name} counts "
        + (f"{rt.batch_tokens:,} tokens a batch, unpadded" if rt.batch_tokens else "sequences")
        + (", padded to the longest" if rt.padded else "")
        + ")"
    )
    lat = f"{enc.latency_ms or 0.0:,.1f} ms"
    p95 = (
        f" ({enc.latency_p95_ms or 0.0:,.1f} ms at p95)" if spec.target_percentile == "p95" else ""
    )
    out = [
        f"{c.replicas} replica{'s' if c.replicas != 1 else ''} of one {row.gpu.name} each on "
        f"{rt.name}: {how}; a full batch's forward pass takes {enc.batch_ms:,.1f} ms",
        f"at {load_words(spec)}: latency {lat}{p95}, {enc.embeddings_per_s or 0.0:,.0f} "
        f"embeddings/s ({enc.max_requests_per_s * enc.inputs:,.0f} at saturation)",
    ]
    if not rt.across_requests:
        out.append(
            f"{rt.name} behind a plain server runs one request at a time: no batching across "
            "clients"
        )
    return out


def _relax_one(row: _Row, spec: ServingSpec) -> str | None:
    enc = _encoder(row)
    lat = enc.latency_p95_ms if spec.target_percentile == "p95" else enc.latency_ms
    if lat is None or spec.ttft_ms_target is None or lat <= spec.ttft_ms_target:
        return None
    return (
        f"raise the latency target (serving.ttft_ms_target) to about {lat:,.0f} ms (the "
        f"fastest: {row.gpu.name}, {row.result.config.replicas} replica"
        f"{'s' if row.result.config.replicas != 1 else ''}), or embed shorter sequences"
    )


def relax(closest: list[_Row], spec: ServingSpec, max_gpus: int, exact: int | None) -> list[str]:
    """What to change when no shape meets the latency or carries the rate."""
    tips: list[str] = []
    fastest = sorted(closest, key=lambda r: _encoder(r).latency_ms or 1e18)
    said = _relax_one(fastest[0], spec) if fastest else None
    if said is not None:
        tips.append(said)
    if exact is not None:
        tips.append(f"any GPU count instead of exactly {exact} (constraints.num_gpus)")
    else:
        tips.append(f"allow more than {max_gpus} GPUs (constraints.max_gpus) for more replicas")
    if spec.concurrent_requests is not None:
        tips.append("fewer concurrent clients per deployment, or shorter sequences")
    elif not closest:
        tips.append("a smaller encoder, or shorter sequences")
    return tips


def recommendation(
    row: _Row, position: int, spec: ServingSpec, ctx: ev.Context, table_band: bool = True
) -> s.Recommendation:
    """The row as the answer gives it, in an encoder's units."""
    r, enc = row.result, _encoder(row)
    c, gpu, work = r.config, row.gpu, ctx.work
    rt = se.RUNTIMES[c.runtime]
    n = c.replicas
    tput = enc.embeddings_per_s or 0.0
    _, _, est = encoder_step.full_batch(gpu, work, c.weight_precision, rt, ctx.calibration)
    mem = s.MemoryOut(
        required_gb=round(r.used_gb_per_gpu(0.0), 3),
        available_gb=round(efficiency.usable_gb(gpu), 3),
        headroom_gb=None,
        num_gpus=1,
        breakdown={
            "weights": round(r.weights_gb_per_gpu, 3),
            "workspace": round(r.activations_gb_per_gpu, 3),
            "framework": round(r.framework_gb_per_gpu, 3),
        },
        notes=[f"per GPU, at a full batch ({enc.batch_cap:,} sequences); no KV cache"],
    )
    mem.headroom_gb = round((mem.available_gb or 0) - mem.required_gb, 3)
    priced = row.priced
    rent_h = priced.rent_usd_per_hour
    cost, extra = words.served_cost(
        gpu,
        r,
        priced,
        (None, costs.usd_per_million_tokens(rent_h, enc.tokens_per_s)),
        enc.usd_per_million(rent_h),
    )
    job = dataclasses.replace(
        work,
        task="inference",
        runtime=rt.kernels,
        precision=c.weight_precision,
        batch_size=enc.batch_cap,
    )
    lo, hi, basis = bands.band(rank.row_band_inputs(gpu, job, est, False), work.efficiency)
    band = (
        lo,
        hi,
        f"{basis}; the forward pass's band (batch inference under {rt.kernels}): the "
        "batcher's queueing is modelled, not calibrated",
    )
    return s.Recommendation(
        rank=position,
        gpu=gpu_out(gpu, priced.pricing),
        num_gpus=n,
        fits=True,
        precision=c.weight_precision,
        runtime=c.runtime,
        framework_status=row.status,
        memory=mem,
        throughput=s.ThroughputOut(
            value=tput, unit=UNIT, per_gpu=tput / n, compute_precision=r.compute_precision
        ),
        latency_ms=enc.latency_ms,
        time_to_first_token_ms=None,
        ms_per_output_token=None,
        meets_latency_target=row.meets,
        time_to_finish_h=None,
        bottleneck=words.bottleneck_word(r.bottleneck),
        timing=s.TimingOut(
            step_time_s=enc.batch_ms / 1e3,
            compute_s=est.compute_s,
            memory_s=est.memory_s,
            overhead_s=est.overhead_s,
            host_transfer_s=0.0,
            interconnect_s=0.0,
            scaling_efficiency=1.0,
        ),
        cost=cost,
        score=row.score if row.score is not None else 0.0,
        uncertainty=words.uncertainty_out(tput, band, time_band_out(enc.latency_ms, band)),
        provenance={
            "specs": "published (catalog)",
            "throughput": "modelled: the embedding server's dynamic batcher "
            f"({rt.source}) around the engine's forward pass",
            "memory": "modelled",
            "hourly_price": words.price_words(priced),
        },
        explanation=_explain(row, spec),
        tips=[],
        warnings=words.row_warnings(row, gpu, words.spot_words(priced)),
        serving=serving_out(row),
        alternatives=[_alternative(o, spec) for o in row.others],
        **extra,
    )


def _alternative(o: serving_step.Served, spec: ServingSpec) -> s.AlternativeOut:
    """Another replica count of the same card that meets the target."""
    res, enc = o.result, o.encoder
    assert enc is not None
    return words.alternative_out(
        res,
        o.price,
        gpus_per_replica=1,
        latency=(None, enc.latency_ms),
        required_gb=res.used_gb_per_gpu(0.0),
        throughput=enc.embeddings_per_s or 0.0,
        unit=UNIT,
    )

"""Response rows: a ranked candidate as the API's Recommendation, with explanation,
provenance and tips.

A row is written as plain fields, its parts nested as dicts, and validated once
(``s.Recommendation.model_validate``): a model per part is a Python call each, some 170 an
answer (a row's offer, costs, bands and each alternative), about a tenth of the open
question's time; validated once, the question's handler took 4-6 % less (issue 21, measured
in one process, the two row builders taking turns). The ``*_fields`` helpers are those parts;
``gpu_out``, ``memory_out``, ``chosen_offer_out`` and ``time_band_out`` the models for
callers that want one part alone."""

from __future__ import annotations

import dataclasses
from datetime import date
from operator import attrgetter

from app.config import Settings
from app.domain import bands, compat, rank, spot
from app.domain import cost as costs
from app.domain.evaluate import SAVER_LABELS, hours_text
from app.domain.figures import round3, sig_figs
from app.domain.gpu import GpuSpec
from app.domain.perf import (
    PerfEstimate,
    fp16_accumulate_words,
    model_flops_utilisation,
    shown_rate,
)
from app.domain.workload import MemoryBreakdown, WorkloadSpec
from app.offers.service import is_stale
from app.offers.service import stale_cutoff as offers_stale_cutoff
from app.recommend import checkpoints, quality
from app.recommend import schemas as s

# ---------------------------------------------------------------- response rows


Fields = dict[str, object]  # a model's fields, validated with the row


def gpu_out(g: GpuSpec, pricing: costs.Pricing | None = None) -> s.RankedGpu:
    return s.RankedGpu.model_validate(gpu_fields(g, pricing))


def gpu_fields(g: GpuSpec, pricing: costs.Pricing | None = None) -> Fields:
    """The GPU's fields; with the row's ``pricing``, its per-card prices are the ones the row
    pays (the chosen purchase offer, the chosen rental's price per GPU), not the catalog's
    street-else-launch price, which for a card sold used would be a list price years old."""
    buy, hourly = g.purchase_usd, g.hourly_usd
    if pricing is not None:
        buy = pricing.buy.usd if pricing.buy is not None else None
        rent = pricing.rent
        hourly = rent.usd_per_hour / rent.gpus_paid if rent is not None else None
    return {
        "slug": g.slug,
        "name": g.name,
        "vendor": g.vendor,
        "architecture": g.architecture,
        "segment": g.segment,
        "memory_gb": g.memory_gb,
        "memory_bandwidth_gbs": g.memory_bandwidth_gbs,
        "tdp_w": g.tdp_w,
        "compute_capability": g.compute_capability,
        "interconnect": g.interconnect,
        "purchase_usd": buy,
        "hourly_usd": hourly,
    }


def memory_out(mem: object, available: float | None) -> s.MemoryOut:
    return s.MemoryOut.model_validate(memory_fields(mem, available))


def memory_fields(mem: object, available: float | None) -> Fields:
    assert isinstance(mem, MemoryBreakdown)
    return {
        "required_gb": round3(mem.total),
        "available_gb": available,
        "headroom_gb": None if available is None else round3(available - mem.total),
        "num_gpus": mem.num_gpus,
        # round(v, 3), a zero as it is (the same value and sign): most parts of an inference
        # breakdown are zero, and round's correctly rounded decimal conversion is ~1 µs a
        # call (figures.round3 gives its value without it)
        "breakdown": {k: v if v == 0.0 else round3(v) for k, v in mem.parts().items()},
        "notes": list(mem.notes),
    }


def _price_provenance(c: rank.Candidate) -> tuple[str, str]:
    """(purchase price, hourly price): what the row's own prices rest on — the offer it rents
    and the purchase basis it buys at — not the catalog's reference prices."""
    p = c.pricing
    if p is None:
        return "unknown", "unknown"
    buy = (
        f"{p.buy.condition} price, {p.buy.source} ({p.buy.as_of})"
        if p.buy is not None
        else (p.buy_reason or "unknown")
    )
    rent = (
        f"{p.rent.offer.tier} offer, {p.rent.offer.provider} {p.rent.offer.instance_type} "
        f"({p.rent.offer.as_of})"
        if p.rent is not None
        else (p.rent_reason or "unknown")
    )
    return buy, rent


def _provenance(c: rank.Candidate) -> dict[str, str]:
    g = c.gpu
    src = c.perf.efficiency_source
    on = c.perf.measured_on
    # the machines are named only where measured (each row had formatted them, and a dict of
    # every source's words, for one of them)
    machines = ""
    if src == "measured":
        machines = f"{on} machine" + ("s" if on != 1 else "")
        tput = f"modelled, with efficiencies measured on {machines} of this GPU model"
    elif src == "family":
        tput = "modelled, with efficiencies measured on the same architecture family"
    else:
        tput = "modelled from datasheet figures and published efficiency priors"
    if src == "prior" and c.perf.efficiency_basis:
        tput = f"modelled from datasheet figures; GEMM efficiency {c.perf.efficiency_basis}"
    buy, rent = _price_provenance(c)
    out = {
        "specs": "published (catalog)",
        "peak_tflops": "derived from fp32 × the architecture's tensor ratio"
        if c.derived_peak
        else "published",
        "memory": "modelled",
        "throughput": tput,
        "purchase_price": buy,
        "hourly_price": rent,
        "energy": "TDP × N (GPU boards only)" if g.tdp_w is not None else "unknown",
    }
    # what the GEMMs' efficiency rests on (kernel profiles), and how many machines measured
    # this GPU model: shown as a badge on the answer page
    if c.perf.efficiency_basis:
        out["gemm_efficiency"] = c.perf.efficiency_basis
    # the same for the operator path's attention kernels (16-bit jobs with operators)
    if c.perf.attention_basis:
        out["attention_efficiency"] = c.perf.attention_basis
    if src == "measured" and on > 0:
        out["measured_on"] = machines
    return out


def chosen_offer_out(ch: costs.OfferChoice, note: str | None = None) -> s.ChosenOfferOut:
    return s.ChosenOfferOut.model_validate(offer_fields(ch, note))


def offer_fields(ch: costs.OfferChoice, note: str | None = None) -> Fields:
    """The instance a row rents; ``note`` replaces the choice's own (serving packs replicas)."""
    o = ch.offer
    return {
        "provider": o.provider,
        "instance_type": o.instance_type,
        "gpus": o.gpus,
        "instances": ch.instances,
        "usd_per_hour": o.usd_per_hour,
        "spot_usd_per_hour": o.spot_usd_per_hour,
        "tier": o.tier,
        "regions": o.regions,
        "as_of": o.as_of,
        "source": o.source,
        "note": note if note is not None else ch.note,
        "launchable": o.accelerator is not None,
        "accelerator": o.accelerator,
    }


def _seen_price_fields(o: costs.CloudOffer) -> Fields:
    return {
        "provider": o.provider,
        "usd_per_gpu_hour": o.usd_per_gpu_hour,
        "as_of": o.as_of,
        "source": o.source,
        "text": o.seen_text,
    }


def stale_cutoff(today: date | None = None) -> str:
    """The day before which GET /api/v1/offers calls a price stale, at the server's default
    ``offer_stale_days`` (app.offers.service.stale_cutoff): what a row's ``stale`` flags are
    judged against here; the app's routes judge them again at the server's own setting
    (orchestrate._mark_stale)."""
    return offers_stale_cutoff(_DEFAULTS, today)


# built once: a Settings per row (model_construct) had cost ~0.4 ms a row, a third of the
# open question's time
_DEFAULTS = Settings.model_construct()


def verdict_note(ch: costs.OfferChoice) -> str | None:
    """The rent side of a buy-versus-rent verdict in words when it pays for more GPUs than the
    job uses (a 1-GPU job whose only offer is an 8-GPU instance): the purchase is the GPUs
    used, the rent the whole instance."""
    if ch.gpus_paid <= ch.gpus_used:
        return None
    o = ch.offer
    what = f"{ch.instances}× {o.gpus}-GPU" if ch.instances > 1 else f"a whole {o.gpus}-GPU"
    return f"renting {what} {o.instance_type}, {ch.gpus_used} of {ch.gpus_paid} GPUs used"


def priced_parts(
    pricing: costs.Pricing,
    cost: costs.CostEstimate,
    per_million: tuple[float | None, float | None] = (None, None),
    note: str | None = None,
    blended: float | None = None,
    stale_before: str | None = None,
) -> tuple[Fields, Fields | None, Fields | None]:
    """What the chosen offers add to a row (its fields, and its costs' ``rent`` and ``buy``):
    the instance rented, each cost basis on its own, the buy-versus-rent verdict and, for
    LLMs, the price of a million output and input tokens on the rented basis
    (``per_million``, worked out by the caller from the rent). ``stale_before``: the day
    before which a price is stale (blank: the default cutoff, ``stale_cutoff``)."""
    cutoff = stale_before if stale_before is not None else stale_cutoff()
    parts: Fields = {"price_known": pricing.price_known}
    if pricing.seen:
        parts["seen_prices"] = [_seen_price_fields(o) for o in pricing.seen]
    rent: Fields | None = None
    buy: Fields | None = None
    if pricing.rent is not None:
        ch = pricing.rent
        parts["offer"] = offer_fields(ch, note)
        rent = {
            "usd_per_hour": ch.usd_per_hour,
            "spot": ch.spot,
            "job_usd": cost.rent_to_finish_usd,
            "startup_usd": cost.rent_startup_usd,
            "samples_per_usd": cost.samples_per_usd_rent,
            "as_of": ch.offer.as_of,
            "source": ch.offer.source,
            "stale": is_stale(ch.offer.as_of, cutoff),
        }
        out_m, in_m = per_million
        if blended is not None:
            parts["usd_per_million_output_tokens_blended"] = blended
        if out_m is not None:
            parts["usd_per_million_output_tokens"] = out_m
        if in_m is not None:
            parts["usd_per_million_input_tokens"] = in_m
    if pricing.buy is not None and pricing.purchase_usd is not None:
        b = pricing.buy
        buy = {
            "usd": pricing.purchase_usd,
            "unit_usd": b.usd,
            "condition": b.condition,
            "energy_usd_per_hour": cost.energy_usd_per_hour,
            "job_usd": cost.buy_to_finish_usd,
            "samples_per_usd": cost.samples_per_usd_buy,
            "as_of": b.as_of,
            "source": b.source,
            "stale": is_stale(b.as_of, cutoff),
            "note": b.note,
        }
    v = pricing.verdict(cost.energy_usd_per_hour)
    if v is not None and pricing.rent is not None:
        said: Fields = {
            "cheaper": "buy" if v.cheaper == "buy" else "rent",
            "break_even_hours": v.break_even_hours,
            "buy_total_usd": v.buy_total_usd,
            "rent_total_usd": v.rent_total_usd,
            "hours": v.hours,
        }
        notes: list[str] = []
        if v.over_budget is not None:
            # the totals may favour the way over budget: said why the verdict names the other
            kept = "renting" if v.cheaper == "rent" else "buying"
            notes.append(f"{kept}, the way within the budget: {v.over_budget}")
        # one bought card against a whole rented node: said, so the totals are read as such
        rented = pricing.rent
        if rented.gpus_paid > rented.gpus_used:
            said["rent_gpus_paid"] = rented.gpus_paid
            said["gpus_used"] = rented.gpus_used
            notes.append(verdict_note(rented) or "")
        notes.extend(v.caveats)
        if notes:
            said["note"] = "; ".join(n for n in notes if n)
        parts["verdict"] = said
    return parts, rent, buy


def _offer_parts(
    c: rank.Candidate, cost: costs.CostEstimate, stale_before: str | None = None
) -> tuple[Fields, Fields | None, Fields | None]:
    pricing, p, w = c.pricing, c.perf, c.work
    if pricing is None:
        return {"price_known": rank.price_known(c)}, None, None
    out_m = in_m = None
    blended = None
    if pricing.rent is not None and w.is_llm_inference:
        hourly = pricing.rent.usd_per_hour
        # one job's throughput is its output tokens: the whole hour over them is the blended
        # figure
        blended = out_m = costs.usd_per_million_tokens(hourly, p.throughput)
        if p.ttft_ms and w.seq_len and p.latency_ms and p.latency_ms > p.ttft_ms:
            # the split charges each kind of token the time it takes: the prompt its prefill,
            # the output the decode steps after it, so the two add up to the hour (the output's
            # share had been the whole hour, and the split came to 126 % of the price)
            prefill = w.seq_len * w.batch_size / (p.ttft_ms / 1000.0)
            in_m = costs.usd_per_million_tokens(hourly, prefill)
            decode = p.throughput * p.latency_ms / (p.latency_ms - p.ttft_ms)
            out_m = costs.usd_per_million_tokens(hourly, decode)
    parts = priced_parts(pricing, cost, (out_m, in_m), blended=blended, stale_before=stale_before)
    parts[0]["price_known"] = rank.price_known(c)  # the way asked, not either way
    return parts


def audio_window_s(work: WorkloadSpec) -> float | None:
    """Seconds of audio in one sample of a speech model (Whisper: an encoder-decoder whose
    preset gives its input in audio seconds, app.domain.seq2seq.encoder_tokens), else None."""
    m = work.model
    if m.family == "encoder-decoder" and m.input_size:
        return float(m.input_size)
    return None


def row_rate(work: WorkloadSpec, unit: str) -> tuple[float, str]:
    """shown_rate's factor and unit, a speech model's samples named for what they are: one
    sample of Whisper is one 30-second audio window ("30-s windows/s")."""
    scale, shown = shown_rate(work, unit)
    if shown != "samples/s":  # most rows (tokens/s): no window to name
        return scale, shown
    window = audio_window_s(work)
    if window is not None:
        return scale, f"{window:g}-s windows/s"
    return scale, shown


def _audio_rate(work: WorkloadSpec, throughput: float) -> float | None:
    """A speech model's rate in seconds of audio a second (inference and training alike):
    windows/s × the window."""
    window = audio_window_s(work)
    return None if window is None else throughput * window


def _with_audio(lines: list[str], work: WorkloadSpec, p: PerfEstimate) -> list[str]:
    """A speech row's explanation with what its samples are, after the line with its rate
    (rank.explain's "Expected … samples/s"): the rate in seconds of audio a second."""
    rate = _audio_rate(work, p.throughput)
    if rate is None:
        return lines
    at = next((i + 1 for i, x in enumerate(lines) if x.startswith("Expected ")), len(lines))
    # three significant figures, as the rate above it ("0.322 samples/s" over "9.666")
    fast = rank.significant(rate)
    # real time means something to a transcription job, not to a training one
    real = "" if work.training else f" ({fast}× real time)"
    said = (
        f"One sample is a {audio_window_s(work) or 0:g}-second audio window: {fast} "
        f"seconds of audio a second{real}."
    )
    return [*lines[:at], said, *lines[at:]]


def shown_cost(cost: costs.CostEstimate, scale: float) -> costs.CostEstimate:
    """The costs with work per dollar in the unit the row's throughput is shown in."""
    if scale == 1.0:
        return cost
    return dataclasses.replace(
        cost,
        samples_per_usd_rent=None
        if cost.samples_per_usd_rent is None
        else cost.samples_per_usd_rent * scale,
        samples_per_usd_buy=None
        if cost.samples_per_usd_buy is None
        else cost.samples_per_usd_buy * scale,
    )


def offer_lines(
    pricing: costs.Pricing | None, note: str | None = None, acquisition: str = "either"
) -> list[str]:
    """The chosen offers in words: what to rent (and any GPUs paid for but unused), at which
    purchase basis to buy, or that no price is known the way the question acquires."""
    if pricing is None:
        return []
    lines: list[str] = []
    if pricing.rent is not None:
        ch, o = pricing.rent, pricing.rent.offer
        shape = f"{ch.instances}× " if ch.instances > 1 else ""
        # several instances: the price is all of them together ($1.38/h read as each)
        total = f"${ch.usd_per_hour:,.2f}/h"
        if ch.instances > 1:
            each = ch.usd_per_hour / ch.instances
            # "for all 2" read as a slip: two instances are "both"
            every = "both" if ch.instances == 2 else f"all {ch.instances}"
            total = f"{total} for {every} (${each:,.2f}/h per {o.gpus}-GPU instance)"
        # a spot price is no on-demand one: "(8 GPUs, on-demand) at $80.00/h spot" read as both
        tier = o.tier
        if ch.spot:
            # an offer whose tier is spot already says it once ("(8 GPUs, spot, spot)")
            tier = "spot" if o.tier in (*costs.ON_DEMAND_TIERS, "spot") else f"{o.tier}, spot"
        lines.append(
            f"Rent {shape}{o.provider} {o.instance_type} ({o.gpus} GPU{'s' if o.gpus > 1 else ''},"
            f" {tier}) at {total}, as of {o.as_of}{_not_offered(pricing, 'rent')}."
        )
        why = note if note is not None else ch.note
        if why:
            lines.append(why[0].upper() + why[1:] + ".")
    elif pricing.rent_reason:
        lines.append(f"No rental: {pricing.rent_reason}.")
    if pricing.seen and pricing.rent is not None:
        lines.append(
            f"Also {pricing.seen[0].seen_text}: a quote, not a bookable offer: not ranked on."
        )
    if pricing.buy is not None:
        b = pricing.buy
        basis = {
            "new": "new street",
            "used": "used",
            "market": "market (new or used listings)",
            "launch": "launch",
        }[b.condition]
        # the data's caveat goes where the price is paid: one marketplace asking price for new
        # old stock is no "new street price" (an RTX 3080 12GB's $1,095 had read as one)
        if b.note and b.condition == "new":
            basis = "new"
        said = f"; {b.note}" if b.note else ""
        # the GPUs paid for: a module sold only as whole servers is bought 8 at a time, and
        # "Buy: 1× $39,625" had stood beside the row's $317,000 (Pricing.bought)
        lines.append(
            f"Buy: {pricing.bought or pricing.num_gpus}× ${b.usd:,.0f} ({basis} price, "
            f"{b.as_of}{said})"
            f"{_not_offered(pricing, 'buy')}."
        )
    elif pricing.buy_reason:
        # as for renting: a card with purchase prices of another kind (or only a stale launch
        # price under 'auto') says why none is used, not nothing
        lines.append(f"No purchase: {pricing.buy_reason}.")
    hourly = pricing.rent.usd_per_hour if pricing.rent is not None else None
    if not costs.priced_as_asked(acquisition, pricing.purchase_usd, hourly):
        lines.append(f"{costs.NO_PRICE_WORDS[acquisition]}: ranked on what it can do, not on cost.")
    return lines


def _not_offered(pricing: costs.Pricing, mode: str) -> str:
    """What an offer line adds where the budget took its way in out (Pricing.left_out): the
    price is shown, and said not to be what the row offers."""
    if pricing.left_out != mode or not pricing.left_out_why:
        return ""
    return f": not offered, {pricing.left_out_why}"


def row_fields(
    c: rank.Candidate,
    position: int,
    leader: rank.Candidate,
    objective: str,
    requested: WorkloadSpec,
    baseline_tput: float | None,
    alternatives: list[rank.Candidate] | None = None,
    rules: compat.Rules | None = None,
    stale_before: str | None = None,
    jobs: rank.JobTerms | None = None,
) -> Fields:
    """One row of the answer, as the fields its model (s.Recommendation) validates; ``rules``:
    the compatibility rules its tips read; ``stale_before``: priced_parts's (the caller's one
    cutoff for all its rows: each row's own had been ~1 % of the open question, the clock
    read and the local time worked out ten times); ``jobs``: the job terms its tips read,
    shared by the answer's rows (rank.JobTerms)."""
    alternatives = alternatives or []
    p = c.perf
    # a language model's training is shown in tokens/s; the estimate (and its rank) stays in
    # samples/s, so the time to finish is the engine's own
    scale, unit = row_rate(c.work, p.unit)
    cost = shown_cost(c.cost, scale)
    (lo, hi, basis), first_token = rank.row_bands(c)
    extra, rent_out, buy_out = _offer_parts(c, cost, stale_before)
    # training at a spot price: what checkpoints and restarts mean, worked out for those rows
    rent = c.pricing.rent if c.pricing is not None else None
    sp = None
    if rent is not None and rent.spot and requested.training:
        mbps, disk_source = checkpoints.disk_mbps(
            rent.offer.provider, rent.offer.instance_type
        ) or (None, None)
        sp = spot.spot_training(rent, c.work, cost.time_to_finish_h, mbps)
        if rent_out is not None:
            rent_out["interruption"] = _spot_fields(sp, disk_source)
    return {
        "rank": position,
        "gpu": gpu_fields(c.gpu, c.pricing),
        "num_gpus": c.n,
        "memory_savers": _saver_labels(c.savers),
        "micro_batch": c.micro_batch,
        "micro_batch_per_gpu": rank.per_gpu_micro_batch(c),
        "accumulation_steps": c.accumulation_steps,
        "fits": True,
        "precision": c.work.precision,
        "runtime": p.runtime,
        "backend": p.backend or None,
        "framework_status": c.framework_status,
        "memory": memory_fields(c.memory, c.available_gb),
        "throughput": {
            "value": p.throughput * scale,
            "unit": unit,
            "per_gpu": p.throughput * scale / c.n,
            "compute_precision": p.compute_precision,
            "samples_per_s": p.throughput if scale != 1.0 else None,
            "audio_seconds_per_s": _audio_rate(c.work, p.throughput * scale),
        },
        "latency_ms": p.latency_ms,
        "time_to_first_token_ms": p.ttft_ms,
        "ms_per_output_token": p.ms_per_token,
        "meets_latency_target": c.meets_latency,
        "time_to_finish_h": cost.time_to_finish_h,
        "bottleneck": p.bottleneck,
        "generation_bottleneck": p.decode_bottleneck or None,
        "timing": {
            "step_time_s": p.step_time_s,
            "compute_s": p.compute_s,
            "memory_s": p.memory_s,
            "overhead_s": p.overhead_s,
            "host_transfer_s": p.host_s,
            "interconnect_s": p.comm_s,
            "scaling_efficiency": p.scaling_efficiency,
        },
        "mfu": model_flops_utilisation(c.gpu, c.work, p) if c.work.training else None,
        # CostOut is CostEstimate's fields plus the cost of the chosen way to acquire.
        "cost": _fields(cost)
        | {
            "job_cost_usd": costs.job_cost(cost, c.acquisition),
            "job_cost_note": costs.job_cost_missing(cost, c.acquisition, c.gpu.name),
            "rent": rent_out,
            "buy": buy_out,
        },
        "score": c.score,
        "uncertainty": {
            "low": p.throughput * scale * lo,
            "high": p.throughput * scale * hi,
            "factor_low": lo,
            "factor_high": hi,
            "basis": basis,
            "time_to_first_token_ms": time_band_fields(p.ttft_ms, first_token),
        },
        "provenance": _provenance(c),
        "explanation": _with_audio(rank.explain(c, position, leader, objective), c.work, p)
        + offer_lines(c.pricing, acquisition=c.acquisition),
        "tips": rank.tips(c, requested, rules, jobs, _four_bit_cost(c)) + _bf16_words(c),
        "warnings": list(c.warnings)
        + _quality(c, requested, rules)
        + _known_gap(requested)
        + _host_ceiling(c)
        + _fp16_words(c)
        + [
            w
            for w in (
                spot_warning(c.pricing, requested.training, sp),
                ownership_warning(cost, c.acquisition, c.pricing),
            )
            if w
        ],
        "speedup_vs_baseline": (p.throughput / baseline_tput) if baseline_tput else None,
        **extra,
        # row_rate reads the job and the unit alone: the row's own where an alternative's are
        "alternatives": [
            _alternative_fields(
                a, (scale, unit) if a.work is c.work and a.perf.unit == p.unit else None
            )
            for a in alternatives
        ],
    }


def time_band_out(
    predicted_ms: float | None, rate_band: tuple[float, float, str] | None
) -> s.TimeBandOut | None:
    """The band on a row's time (its time to first token) from the band on the rate it is
    the inverse of (bands.time_band: a rate's ×lo–×hi is the time's ÷hi–÷lo)."""
    fields = time_band_fields(predicted_ms, rate_band)
    return None if fields is None else s.TimeBandOut.model_validate(fields)


def time_band_fields(
    predicted_ms: float | None, rate_band: tuple[float, float, str] | None
) -> Fields | None:
    if predicted_ms is None or rate_band is None:
        return None
    lo, hi, basis = rate_band
    low, high = bands.time_band(predicted_ms, lo, hi)
    return {
        "low": low,
        "high": high,
        "factor_low": 1.0 / hi,
        "factor_high": 1.0 / lo,
        "basis": basis,
    }


def spot_warning(
    pricing: costs.Pricing | None, training: bool, sp: spot.SpotTraining | None = None
) -> str | None:
    """What renting at a spot price means, when the row does: the provider can take the
    instances back at short notice, which a training job pays for in checkpoints and restarts
    (``sp``: their figures that need no interruption rate)."""
    if pricing is None or pricing.rent is None or not pricing.rent.spot:
        return None
    head = (
        "spot price: the provider can reclaim these instances at short notice (AWS gives a "
        "two-minute warning, Google Cloud and Azure 30 seconds)"
    )
    if not training:
        return f"{head}; requests in flight are lost and the server restarts elsewhere"
    lost = (
        "training must checkpoint and resume, losing the work since the last checkpoint plus "
        "the time to get an instance and read the state back"
    ) + _all_stop(pricing.rent)
    if sp is None:
        return f"{head}; {lost}, which the time and cost here do not include"
    return f"{head}; {lost}. {_spot_numbers(sp, pricing.rent.offer.provider)}"


def _all_stop(ch: costs.OfferChoice) -> str:
    """What spot means for one job over several instances: its collectives need every one,
    so a single reclaimed instance halts all of them, and each restart (the lost work, the
    wait for a replacement, the reload) is paid on every instance (32 GPUs' FSDP job on four
    spot instances had been warned as if each instance stood alone)."""
    if ch.instances < 2:
        return ""
    return (
        f"; one job spans all {ch.instances} instances ({ch.gpus_used} GPUs), so one reclaimed "
        f"instance stops the whole job and every restart's cost falls on all {ch.instances}"
    )


def ownership_warning(
    cost: costs.CostEstimate, acquisition: str, pricing: costs.Pricing | None = None
) -> str | None:
    """What a row that offers buying must say when its job takes longer than the hours its
    purchase is spread over (costs.outlasts_horizon): the value it ranks on and the verdict
    assume the hardware is kept only that long and then resold."""
    times = costs.outlasts_horizon(cost, acquisition)
    if times is None or cost.time_to_finish_h is None:
        return None
    usage = pricing.usage if pricing is not None else None
    period = (
        f" ({usage.years:g} year{'s' if usage.years != 1 else ''} × "
        f"{usage.hours_per_week:g} h a week)"
        if usage is not None
        else ""
    )
    return (
        f"bought, the job takes {cost.time_to_finish_h:,.0f} h of use, {times:,.1f}× the "
        f"{cost.horizon_hours:,.0f} h{period} the purchase is spread over: the buy value, "
        "resale and buy-versus-rent verdict assume the hardware is kept only that long, so "
        "finishing the job means owning it longer than the plan (and reselling it later, "
        "for less)"
    )


def _spot_numbers(sp: spot.SpotTraining, provider: str) -> str:
    said = (
        # sig_figs, not ",.3g": a 405B model's 4,870 GB read "4.87e+03 GB"
        f"A checkpoint holds {sig_figs(sp.checkpoint_gb)} GB (fp32 weights and optimizer state of "
        f"the trained parameters). No published interruption rate for {provider} spot GPUs "
        "is known, so the time and cost here leave checkpoints and restarts out"
    )
    f, extra = sp.break_even_overhead, sp.break_even_extra_h
    if f is not None and sp.on_demand_usd_per_hour is not None:
        said += (
            f"; spot stays cheaper than these instances on demand "
            f"(${sp.on_demand_usd_per_hour:,.2f}/h) unless they add more than "
            f"{spot.break_even_text(f, extra)}"
        )
    if sp.write_h_min is not None and sp.disk_mbps is not None:
        said += (
            f". Written to attached managed disks, one takes at least "
            f"{hours_text(sp.write_h_min)} at this instance type's documented {sp.disk_mbps:,.0f}"
            " MBps cap on disk throughput (a disk's own cap can be lower), and reading it back "
            "after an interruption as long again, on top of the work lost since the last "
            "checkpoint and the wait for a new instance"
        )
    else:
        said += (
            ". No storage throughput is sourced for this instance type, so the time to write "
            "and read it back is not given"
        )
    return (
        f"{said}. Checkpointing every √(2·C·M), C the time to write one and M the mean time "
        "between interruptions, keeps the waste near √(2C/M) plus the restart time over M "
        "(Young 1974, Daly 2006)."
    )


def _spot_fields(sp: spot.SpotTraining, disk_source: str | None) -> Fields:
    return {
        "checkpoint_gb": sp.checkpoint_gb,
        "on_demand_usd_per_hour": sp.on_demand_usd_per_hour,
        "break_even_overhead": sp.break_even_overhead,
        "break_even_extra_h": sp.break_even_extra_h,
        "disk_mbps": sp.disk_mbps,
        "checkpoint_write_h_min": sp.write_h_min,
        "disk_source": disk_source if sp.write_h_min is not None else None,
        "overhead_included": False,
    }


def _four_bit_cost(c: rank.Candidate) -> str | None:
    """The known quality cost, with its source, of the 4-bit format an LLM inference row's tip
    suggests (None elsewhere: no such tip)."""
    if not c.work.is_llm_inference:
        return None
    return quality.known_cost(rank.four_bit_quality_format(c))


def _quality(c: rank.Candidate, requested: WorkloadSpec, rules: compat.Rules | None) -> list[str]:
    """The known quality cost of the weights a row runs: quantised inference, or QLoRA's
    4-bit base. Weights with no format named are costed as the format the row's runtime runs
    them as where a rule names one (compat.weights_run_as: plain int4 under Transformers on a
    Mac is bitsandbytes NF4, not the GPTQ/AWQ-style INT4 its caveat says Metal lacks)."""
    run = c.work
    if requested.task == "fine-tuning" and requested.peft == "qlora":
        note = quality.cost_note("int4", "nf4")
    elif requested.task == "inference":
        fmt: str | None = requested.quantization
        if rules is not None:
            fmt = compat.weights_run_as(
                c.gpu, run.runtime, run.precision, rules, c.perf.backend, fmt
            )
        fmt = (
            fmt if fmt not in (None, "none") else quality.runtime_format(run.runtime, run.precision)
        )
        note = quality.cost_note(
            run.precision,
            fmt,
            released=requested.released_format,
            family=requested.model.family,
        )
    else:
        note = None
    return [note] if note else []


# What the engine is known to miss beyond a row's band, said on the rows it concerns (README,
# "What is known not to hold"): its band is calibrated on other regimes.
SEQ2SEQ_GAP = (
    "Encoder-decoder generation (Whisper, T5) is new to the engine: on faster-whisper's "
    "published Whisper runs it is 1.3–3.4× too fast (their transcripts' token counts assumed), "
    "beyond this row's band; read its speed as an upper bound."
)


# Mixture-of-experts training is priced as the engine's FSDP (or Megatron) layout over every
# expert's weights: no runtime's expert parallelism (experts on their own GPUs, tokens sent to
# them all-to-all) is modelled, and gathering every expert each step is the slower way to run.
MOE_TRAINING_GAP = (
    "mixture-of-experts training: expert parallelism is not modelled; all experts are sharded "
    "as dense weights are (FSDP, or the Megatron layout), a slow lower bound on what expert "
    "parallelism reaches"
)


def _known_gap(requested: WorkloadSpec) -> list[str]:
    if requested.task == "inference" and requested.model.family == "encoder-decoder":
        return [SEQ2SEQ_GAP]
    if requested.training and (requested.model.experts or 0) > 1:
        return [MOE_TRAINING_GAP]
    return []


def _host_ceiling(c: rank.Candidate) -> list[str]:
    """What a forward pass bound by the host's dispatch (an eager diffusion pipeline or CNN at
    batch 1) must say of its speed: it is the host's ceiling, priced at one per-op figure
    fitted on published runs (data/efficiency.yaml infer-diffusion, infer-cnn), so the fast
    cards meet at it (B200, H100, A100 and RTX 5090 all ~3.2 s an SDXL image) where a faster CPU
    or a newer PyTorch would move them apart; and overhead_s is only the host time the GPU's
    work leaves exposed. An LLM's decode loop and a training step have their own tips."""
    p, w = c.perf, c.work
    if p.bottleneck != "host overhead" or w.training or w.is_llm_inference or c.serving:
        return []
    if w.model.family == "encoder-decoder":
        return []  # Whisper's decoder loop: its own words (the stable-fast figure is diffusion's)
    return [
        "This speed is the host's, not the GPU's: the host dispatches each op of the pass, "
        "priced at one per-op figure fitted on published runs, so it moves with your CPU and "
        "PyTorch version, and the cards held at this ceiling come apart on a faster host "
        "(stable-fast timed an RTX 4090 on a cloud host below an RTX 4080 on a desktop). "
        f"timing.overhead_s ({_seconds(p.overhead_s)}) is the host time the GPU's work does "
        f"not hide, not the host's total, which spans most of the {_seconds(p.step_time_s)} "
        "step."
    ]


def _seconds(s: float) -> str:
    """A step's time to two or three figures: 3.19 s, 12.4 ms (a ResNet-50 step had read
    "0.01 s ... most of the 0.01 s step")."""
    return f"{s:,.2f} s" if s >= 1 else f"{s * 1e3:.3g} ms"


def _fp16_words(c: rank.Candidate) -> list[str]:
    """An fp16 row priced at GeForce's FP16-accumulate rate says so (perf.fp16_accumulate_words)."""
    if c.perf.compute_precision != "fp16":
        return []
    said = fp16_accumulate_words(c.gpu, c.work, c.perf)
    return [said] if said else []


def _bf16_words(c: rank.Candidate) -> list[str]:
    """A bf16 row on the same engine: fp16 runs faster on this card (the same words' other half)."""
    if c.perf.compute_precision != "bf16":
        return []
    said = fp16_accumulate_words(c.gpu, c.work, c.perf)
    return [said] if said else []


def _saver_labels(savers: tuple[str, ...]) -> list[str]:
    # most rows and alternatives have none: no comprehension (a call of its own) for them
    return [SAVER_LABELS.get(x, x) for x in savers] if savers else []


_COST_FIELDS = tuple(f.name for f in dataclasses.fields(costs.CostEstimate))
_COST_VALUES = attrgetter(*_COST_FIELDS)  # read in C: a comprehension was ~1 % of a request


def _fields(cost: costs.CostEstimate) -> dict[str, object]:
    """CostEstimate's fields (all plain values): dataclasses.asdict deep-copies each one."""
    return dict(zip(_COST_FIELDS, _COST_VALUES(cost), strict=True))


def _alternative_fields(c: rank.Candidate, rate: tuple[float, str] | None = None) -> Fields:
    """A shown row's other configuration (s.AlternativeOut); ``rate``: ``row_rate`` of its
    job and unit where the caller has it (its row's, when they run the same job: a card's
    alternatives mostly do, and row_rate reads nothing else)."""
    scale, unit = row_rate(c.work, c.perf.unit) if rate is None else rate
    rent = c.pricing.rent if c.pricing is not None else None
    return {
        "num_gpus": c.perf.num_gpus,
        "memory_savers": _saver_labels(c.savers) if c.savers else [],
        "micro_batch": c.micro_batch,
        "accumulation_steps": c.accumulation_steps,
        "required_gb": round3(c.memory.total),
        "throughput": c.perf.throughput * scale,
        "unit": unit,
        "scaling_efficiency": c.perf.scaling_efficiency,
        "time_to_finish_h": c.cost.time_to_finish_h,
        "purchase_usd": c.cost.purchase_usd,
        "hourly_usd": c.cost.hourly_usd,
        "job_cost_usd": costs.job_cost(c.cost, c.acquisition),
        "offer": offer_fields(rent) if rent is not None else None,
        "price_known": rank.price_known(c),
    }

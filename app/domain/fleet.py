"""A catalog's cards as columns (issue 21): for every card at once, the configuration a
balanced answer shows where it is the job as asked on the fewest cards that hold it
(``first_counts``: found with plan's and admit's own checks, without making the card's other
configurations), and that configuration's loose throughput bound (``loose_bounds``, as
``evaluate.loose_bounds`` bounds it).

The per-card terms are worked out once per catalog snapshot and software (``snapshot``, kept
in the ``Catalog`` that whoever keeps the catalog snapshot passes down: each card's software
gate, usable memory, whether it runs as one device, and for LLM inference its step terms as
one array, llm_step.CardRows); a request then adds its GPU-independent terms
(the job's memory per variant and count, its step shape) and compares and steps whole columns.
tests/recommend/test_fast_paths.py holds the configurations to plan's first admitted, the bounds
to ``evaluate.loose_bounds`` to the last bit, and the balanced answer to the full evaluation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from app.domain import compat, efficiency, llm_step, perf
from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain.calibration import Calibration
from app.domain.efficiency import EfficiencyTable
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec

Variant = tuple[str, str, bool]  # (precision the job runs at, backend, attention kernels)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One catalog's per-card terms under one software setting (``software``: framework,
    precision asked, runtime, model family, training or not, prompt GEMM path, weight format)
    and the efficiency table: the same for every request that shares them."""

    gpus: tuple[GpuSpec, ...]
    efficiency: EfficiencyTable | None  # the job's (WorkloadSpec.efficiency) they were made with
    gates: tuple[ev.Gate, ...]
    variants: tuple[Variant, ...]
    variant: NDArray[np.intp]  # each card's index in ``variants``; -1: its gate excludes it
    place: NDArray[np.intp]  # each card's row in ``card_rows`` (-1: gated out)
    avail: NDArray[np.float64]  # usable GB under the job's runtime (0 where gated out)
    single: NDArray[np.bool_]  # runs as one device (plan's max_n = 1)
    vendors: NDArray[np.str_]
    segments: NDArray[np.str_]
    # the gated-in cards' LLM step terms (``card_rows``), made on first use
    rows: list[llm_step.CardRows] = field(default_factory=list)
    # whether each card's runtime splits the job by whole layers (``layer_split``), on first use
    splits: list[NDArray[np.bool_]] = field(default_factory=list)
    # each card's prices at a count under a table of prices (``count_rates``), with the table
    # and the count, on first use
    rates: list[tuple[object, int, CountRates]] = field(default_factory=list)

    def runs_at(self, precision: str) -> NDArray[np.bool_]:
        """The cards whose gate runs the job at ``precision``."""
        # a lookup per card (the extra row: the gated-out cards' -1), not np.isin's sort
        return np.array([v[0] == precision for v in self.variants] + [False])[self.variant]

    def card_rows(self, ctx: ev.Context) -> llm_step.CardRows:
        """Each gated-in card's LLM step terms under its gate's precision and backend
        (perf.llm_card), in ``place`` order: made once per snapshot."""
        if not self.rows:
            terms = []
            for i in np.flatnonzero(self.variant >= 0).tolist():
                gpu, v = self.gpus[i], self.variants[self.variant[i]]
                run = ev.job_variant(ctx, _key(ctx, v))
                terms.append(perf.llm_card(gpu, run, perf.efficiencies(gpu, ctx.calibration), v[1]))
            self.rows.append(llm_step.card_rows(terms))
        return self.rows[0]

    def layer_split(self, ctx: ev.Context) -> NDArray[np.bool_]:
        """Whether each card's runtime runs a decode step split by whole layers rather than
        tensor parallel (``_splits``; False where gated out): a per-card term of the
        snapshot (its runtime, gate precision and backend, the efficiency table), made once
        per snapshot, not once per card a request asks (~20 a request for the open
        question, each a profile look-up)."""
        if not self.splits:
            on = np.flatnonzero(self.variant >= 0).tolist()
            split = np.zeros(len(self.gpus), bool)
            split[on] = [_splits(ctx, self, i) for i in on]
            self.splits.append(split)
        return self.splits[0]


Software = tuple[object, ...]


@dataclass(frozen=True, slots=True)
class Catalog:
    """A catalog snapshot's cards (in the order the service ranks them: by slug) with the rules
    and calibration they are estimated under, and each software setting's per-card terms
    (``snapshot``), made on first use and kept here. Whoever keeps the catalog snapshot keeps
    this with it (app/recommend/orchestrate.py: per catalog, reports and data stamp) and passes
    it down; a caller that keeps none makes one per request. Shared between requests and
    threads: the terms only ever are added (two threads may make the same one; either is it)."""

    gpus: tuple[GpuSpec, ...]
    rules: compat.Rules
    calibration: Calibration | None
    snapshots: dict[Software, Snapshot] = field(default_factory=dict, compare=False, repr=False)

    def serves(
        self, gpus: Sequence[GpuSpec], rules: compat.Rules, calibration: Calibration | None
    ) -> bool:
        """Made for these cards (in this order), rules and calibration, compared by value (the
        same objects compare at once)."""
        return self.gpus == tuple(gpus) and self.rules == rules and self.calibration == calibration


SNAPSHOTS_PER_CATALOG = 64  # software settings kept per catalog (a handful are in use)


def software(ctx: ev.Context) -> Software:
    """What a snapshot's terms depend on besides the catalog, the rules and the calibration:
    the gate's inputs (framework, precision asked, runtime, model family and convolutions),
    the memory the runtime keeps back (training or not, and for inference the model's
    vocabulary and widths, which size a serving runtime's startup activations: ev.usable_gb,
    and where the runtime has a startup rule the batch, whose sequences it deploys at
    --max-num-seqs) and the LLM card terms' (prompt GEMM path, weight format)."""
    work = ctx.work
    m = work.model
    widths = None if work.training else (m.vocab_size, m.hidden_size, m.intermediate_size)
    runtime = getattr(work, "runtime", None)
    # a batch-1 request's usable memory had been kept for a batch-256 one on the same software
    # (vLLM's sampler rows: an A10 credited 21.25 GB instead of 19.97)
    rows = (
        work.batch_size
        if widths is not None
        and runtime is not None
        and efficiency.has_startup_rule(efficiency.serving_spec(work.efficiency, runtime))
        else None
    )
    return (
        ctx.framework,
        work.precision,
        getattr(work, "runtime", None),
        m.family,
        # the gate's fp8 answer follows the network's convolutions (ModelSpec.conv_layers):
        # FLUX.1's DiT and SDXL's UNet share the family, not the answer
        m.conv_layers,
        work.training,
        widths,
        rows,
        work.prompt_gemm,
        work.weight_bits,
        # the rest of the gate's key (ev.gate): the format the job names, the task's FP8
        # weight-only path, routed experts
        work.quantization,
        work.is_llm_inference,
        (m.experts or 0) > 1,
        # llama.cpp pinned to its Vulkan build: another gate and other efficiency rows
        work.gpu_backend,
    )


def snapshot(catalog: Catalog, ctx: ev.Context) -> Snapshot:
    """The catalog's per-card terms for the request's software, made once per catalog
    (``ctx`` is a request on ``catalog``'s cards, rules and calibration)."""
    key = software(ctx)
    work = ctx.work
    hit = catalog.snapshots.get(key)
    if hit is not None and hit.efficiency == work.efficiency:
        return hit
    runtime = getattr(work, "runtime", None)
    gpus = catalog.gpus
    gates: list[ev.Gate] = []
    variants: dict[Variant, int] = {}
    variant, avail, single = [], [], []
    for gpu in gpus:
        g = ev.gate(gpu, work.precision, runtime, ctx)
        gates.append(g)
        if g.exclusion is not None:
            variant.append(-1)
            avail.append(0.0)
            single.append(True)
            continue
        assert g.backend is not None and g.precision is not None
        v = (g.precision, g.backend, g.flash_attention)
        variant.append(variants.setdefault(v, len(variants)))
        run = ev.job_variant(ctx, (work.precision, g.precision, (), None, None))
        avail.append(ev.usable_gb(gpu, run))
        single.append(g.multi_gpu is False or ev.max_devices(gpu, g.backend, 2) == 1)
    which = np.array(variant, np.intp)
    place = np.cumsum(which >= 0) - 1
    place[which < 0] = -1
    snap = Snapshot(
        gpus=gpus,
        efficiency=work.efficiency,
        gates=tuple(gates),
        variants=tuple(variants),
        variant=which,
        place=place,
        avail=np.array(avail, np.float64),
        single=np.array(single, bool),
        vendors=np.array([g.vendor for g in gpus], str),
        segments=np.array([g.segment for g in gpus], str),
    )
    if len(catalog.snapshots) >= SNAPSHOTS_PER_CATALOG:
        catalog.snapshots.clear()
    catalog.snapshots[key] = snap
    return snap


class CountRates(NamedTuple):
    """``ev.count_rates`` of a snapshot's cards at one count, as columns (a row per card)."""

    # whether it has a price the way asked (costs.priced_as_asked), by acquisition
    known: dict[str, NDArray[np.bool_]]
    # purchase, per hour, the boards' power (W) and the horizon a purchase is spread over,
    # four to a row, NaN where none (all four where it has no price)
    rates: NDArray[np.float64]


# columns of prices a snapshot keeps (a table of prices per rental policy and usage, and a
# count: a handful are in use)
RATES_PER_SNAPSHOT = 16


def count_rates(snap: Snapshot, ctx: ev.Context, n: int) -> CountRates | None:
    """Each card's prices on ``n`` of it with no configuration of its own (``ev.count_rates``),
    as columns made once per snapshot, table of prices (an offers snapshot's, under one rental
    policy, usage and purchase basis: ``ev.price_table``) and count, not read card by card on
    every request (~110 cards: the open question 0.36 M instructions less); None where the
    request's prices are its own (``ev.price_table``)."""
    table = ev.price_table(ctx)
    if table is None:
        return None
    for made, k, got in snap.rates:
        if made is table and k == n:
            return got
    rent, buy, purchase, hourly, power, hours = ev.count_rates(snap.gpus, n, ctx)
    has_rent, has_buy = np.array(rent, bool), np.array(buy, bool)
    got = CountRates(
        {"rent": has_rent, "buy": has_buy, "either": has_rent | has_buy},
        np.array([purchase, hourly, power, hours], np.float64).T.copy(),
    )
    if len(snap.rates) >= RATES_PER_SNAPSHOT:
        snap.rates.clear()
    snap.rates.append((table, n, got))
    return got


def price_rows(
    snap: Snapshot,
    ctx: ev.Context,
    cards: NDArray[np.intp],
    counts: NDArray[np.int64],
    configs: Sequence[ev.Configuration | None],
    own: Sequence[int],
) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """``ev.price_columns`` of row ``j``'s configuration (``configs[j]``, or where that is None
    card ``cards[j]`` of the snapshot on ``counts[j]`` GPUs) as arrays: whether it has a price
    the way asked, and its rates four to a row. The rows with no configuration of their own
    (all but ``own``'s) read the snapshot's columns at their count (``count_rates``) in one
    gather, any other is priced as ``ev.price_columns`` prices it: the same floats."""
    acq = ctx.limits.acquisition
    # each count's columns stacked, a row's place in them its count's offset plus its card
    found: list[CountRates] = []
    offset = np.zeros(int(counts.max(initial=0)) + 1, np.intp)
    slow = np.zeros(len(cards), bool)
    slow[list(own)] = True
    for k in set(counts.tolist()):
        got = count_rates(snap, ctx, k) if k >= 1 else None
        if got is None:
            slow |= counts == k
            continue
        offset[k] = len(found) * len(snap.gpus)
        found.append(got)
    if found:
        at = offset[counts] + cards
        known = np.concatenate([g.known[acq] for g in found])[at]
        rates = np.concatenate([g.rates for g in found])[at]
        kwh = ctx.limits.electricity_usd_per_kwh
        kwh_price = costs.DEFAULT_ELECTRICITY_USD_PER_KWH if kwh is None else kwh
        rates[:, 2] = rates[:, 2] / 1000.0 * kwh_price  # price_columns' tdp × n ÷ 1000 × $
    else:
        known, rates = np.zeros(len(cards), bool), np.empty((len(cards), 4))
    rest = np.flatnonzero(slow).tolist()
    if rest:
        gpus, n = snap.gpus, counts.tolist()
        priced, flat = ev.price_columns(
            [configs[j] for j in rest], [gpus[cards[j]] for j in rest], [n[j] for j in rest], ctx
        )
        known[rest] = priced
        rates[rest] = np.array(flat, np.float64).reshape(len(rest), 4)
    return known, rates


def _key(ctx: ev.Context, v: Variant) -> ev.JobKey:
    return (ctx.work.precision, v[0], (), None, None)


def first_counts(snap: Snapshot, ctx: ev.Context) -> NDArray[np.int64] | None:
    """Each card's count where its shown configuration is the job as asked on the fewest
    cards that hold it, 0 where that may be another configuration (the card is then planned
    in full); None where it may be another for every card (a price to check, an exact count,
    a stated layout, serving). That is the case on one card, where admit has nothing left to
    check (``ev.admitted_as_planned``), and for inference (no saver to try) on more, where it
    has the memory per GPU left. Plan's and admit's checks, in their order, over whole
    columns: the filters, the gate, the job's gated features (QLoRA, 8-bit optimiser states:
    admit checks them), the job's memory on one card against each card's usable memory, then
    for inference the fewest cards that hold it and the memory per GPU on them."""
    lim, work = ctx.limits, ctx.work
    if lim.exact_gpus is not None or (ctx.apply_filters and lim.needs_price):
        return None
    if getattr(work, "megatron", None) is not None or work.task == "serving":
        return None
    if ctx.copies:
        return None  # copies: plan lays out each count (ev.copies_of)
    count = np.zeros(len(snap.gpus), np.int64)
    ok = snap.variant >= 0
    if ctx.apply_filters and lim.vendors:
        ok &= np.isin(snap.vendors, lim.vendors)
    if ctx.apply_filters and lim.segments:
        ok &= np.isin(snap.segments, lim.segments)
    # the variants' GPU-independent terms, each card reading its own variant's (the extra row
    # is the gated-out cards' -1: never ok)
    keys = [_key(ctx, v) for v in snap.variants]
    runs = [ev.job_variant(ctx, key) for key in keys]
    # a gated feature (admit checks it) or training (a saver may let fewer cards hold it)
    featured = [
        bool(compat.job_features(r.peft, r.optimizer, paged=r.paged_optimizer, runtime=r.runtime))
        for r in runs
    ]
    ones = [
        None if f else ev.variant_memory(ctx, key, r, 1, v[1], v[2])
        for f, key, r, v in zip(featured, keys, runs, snap.variants, strict=True)
    ]
    ok &= ~np.array([*featured, True])[snap.variant]
    total = np.array([math.nan if o is None else o.total for o in ones] + [math.nan])
    fits = ok & (total[snap.variant] <= snap.avail)
    training = np.array([r.training for r in runs] + [True])
    if "micro_batch" in ctx.savers_allowed:
        # a training job that fits one card with less than ev.ROOM spare may be planned at a
        # smaller micro-batch (ev._refined): plan it in full
        fits &= ~(training[snap.variant] & (total[snap.variant] > (1.0 - ev.ROOM) * snap.avail))
    count[fits] = 1
    more = np.flatnonzero(ok & ~fits & ~training[snap.variant])
    if not len(more):
        return count
    framework = np.array([math.nan if o is None else o.framework for o in ones] + [math.nan])
    which = snap.variant[more]
    n = _fewest(total[which], framework[which], snap.avail[more])
    n[(n > lim.max_gpus) | ((n > 1) & snap.single[more])] = 0  # more than it may span
    # past two cards a layer split may hold the job on fewer than the power of two: the count
    # below it that holds it (ev._fewest_layers, what ev.plan takes)
    # each variant's memory at each count, asked once: the cards below share them
    at: dict[tuple[int, int], float] = {}
    llm = np.array([r.is_llm_inference for r in runs] + [False])[which]
    for j in np.flatnonzero((n > 2) & llm & snap.layer_split(ctx)[more]).tolist():
        i = int(more[j])
        k, w = int(n[j]), int(snap.variant[i])
        room = float(snap.avail[i])
        for m in range(k // 2 + 1, k):
            need = at.get((w, m))
            if need is None:
                v = snap.variants[w]
                need = at[w, m] = ev.variant_memory(ctx, keys[w], runs[w], m, v[1], v[2]).total
            if need <= room:
                k = m
                break
        n[j] = k
    _leave_unsplit(snap, ctx, runs, n, more, which, llm)
    # the memory per GPU of each card's variant at its count (each pair's asked once, the
    # cards that share it read it), against the card's usable memory: one comparison of columns
    some = np.flatnonzero(n > 0)
    pairs = list(zip(which[some].tolist(), n[some].tolist(), strict=True))
    for k, m in set(pairs) - at.keys():
        v = snap.variants[k]
        at[k, m] = ev.variant_memory(ctx, keys[k], runs[k], m, v[1], v[2]).total
    per_gpu = np.array([at[p] for p in pairs], np.float64)
    held = per_gpu <= snap.avail[more[some]]
    count[more[some[held]]] = n[some[held]]
    return count


def _leave_unsplit(
    snap: Snapshot,
    ctx: ev.Context,
    runs: list[WorkloadSpec],
    n: NDArray[np.int64],
    more: NDArray[np.intp],
    which: NDArray[np.intp],
    llm: NDArray[np.bool_],
) -> None:
    """``first_counts``' counts ``n`` of cards ``more`` (variants ``which``) set to 0 where the
    count's tensor-parallel degree cannot split the model's heads under the card's runtime
    (ev.unsplit_counts), so that plan takes the next count that can or leaves the card out:
    the columns had run Phi-4 on 4 and 8 GPUs under vLLM, whose 10 KV heads split over
    neither."""
    multi = np.flatnonzero((n > 1) & llm)
    split = {w: ev.heads_split_everywhere(runs[w], ctx) for w in set(which[multi].tolist())}
    for j in multi.tolist():
        w = int(which[j])
        if split[w]:
            continue  # most models: every count splits
        unsplit = ev.unsplit_counts(snap.gpus[int(more[j])], runs[w], snap.variants[w][1], ctx)
        if int(n[j]) in unsplit:
            n[j] = 0


def _splits(ctx: ev.Context, snap: Snapshot, i: int) -> bool:
    """Whether card ``i``'s runtime runs a decode step by whole layers (an LLM inference job
    then splits so)."""
    v = snap.variants[snap.variant[i]]
    run = ev.job_variant(ctx, _key(ctx, v))
    return perf.profile_for(snap.gpus[i], run, v[1], "decode").span != "tensor"


def _fewest(
    total: NDArray[np.float64], framework: NDArray[np.float64], avail: NDArray[np.float64]
) -> NDArray[np.int64]:
    """``ev.min_gpus`` of jobs that do not fit on one card (each card's job's size on one and
    the framework's share of it), for each card's usable memory:
    the fewest GPUs, a power of two, whose shares of the shardable memory fit beside the
    framework's own on each (0: none, the framework alone fills a card)."""
    room = avail - framework
    with np.errstate(divide="ignore"):
        k = np.ceil((total - framework) / np.where(room > 0, room, 1.0))
    # the smallest power of two >= k, exactly: k = m × 2^e with 0.5 <= m < 1
    m, e = np.frexp(k)
    n = np.where(m == 0.5, e - 1, e)
    shifted = np.left_shift(np.int64(1), np.minimum(n, 62).astype(np.int64))
    return np.where((room > 0) & np.isfinite(k), shifted, 0)


def configuration(
    snap: Snapshot, ctx: ev.Context, count: NDArray[np.int64], i: int
) -> ev.Configuration:
    """Card ``i``'s configuration from its count (``first_counts``, > 0 here): as plan makes
    it (its gate and job variant with it)."""
    variant = (snap.gates[i], _key(ctx, snap.variants[snap.variant[i]]))
    return ev.Configuration(snap.gpus[i], int(count[i]), (), None, variant)


@dataclass(frozen=True, slots=True)
class Stepped:
    """What ``stepped`` took: every card's loose bound (``loose_bounds``), and the prompt and
    decode steps of the cards it stepped (``row``: each card's row in them, -1 where none),
    from which a one-GPU configuration's estimate is made without stepping it again
    (``one_gpu_estimate``)."""

    bounds: NDArray[np.float64]
    # (prompt, decode) steps, one pair a set
    steps: list[tuple[llm_step.StepColumns, llm_step.StepColumns]]
    step: NDArray[np.intp]  # each card's set in ``steps`` (-1: not stepped)
    row: NDArray[np.intp]  # its row in that set


def plan(
    snap: Snapshot, ctx: ev.Context, count: NDArray[np.int64], i: int
) -> list[ev.Configuration] | None:
    """``ev.plan`` of card ``i`` where ``first_counts`` found its count and the job is
    inference: one step of plan's ladder (no saver to try), so every count of COUNTS from the
    fewest cards that hold it up to the most the card may span (``single``: one; else the
    request's max_gpus), with the card's gate and job variant. None where it is not found or
    the job trains (plan tries savers: the caller plans it)."""
    n = int(count[i])
    if n <= 0:
        return None
    v = snap.variants[snap.variant[i]]
    key = _key(ctx, v)
    if ev.job_variant(ctx, key).training:
        return None
    top = 1 if snap.single[i] else ctx.limits.max_gpus
    gpu, variant = snap.gpus[i], (snap.gates[i], key)
    # COUNTS are the powers of two in order: those up to ``top`` are its first bit_length ones
    upto = ev.COUNTS[: top.bit_length()]
    counts = upto if n in ev.COUNTS else (n, *upto)  # a layer split's fewest
    # never a tensor-parallel degree the runtime cannot split the model's heads over (Phi-4's
    # 10 KV heads under vLLM: not 4 or 8 GPUs), as plan skips it
    unsplit = ev.unsplit_counts(gpu, ev.job_variant(ctx, key), v[1], ctx)
    return [
        ev.Configuration(gpu, k, (), None, variant)
        for k in counts
        if n <= k <= top and k not in unsplit
    ]


def one_device_misfit(snap: Snapshot, ctx: ev.Context, i: int) -> ev.Exclusion | None:
    """``ev.plan``'s exclusion of card ``i`` where it runs as one device (``single``) and the
    job, inference of no stated count or layout, does not fit on one: plan's one ladder step
    finds no count (its most is one), and says so (``ev.too_big``); the card's gate and
    usable memory are the snapshot's. None otherwise (the caller plans the card)."""
    lim, work = ctx.limits, ctx.work
    if snap.variant[i] < 0 or not snap.single[i] or lim.exact_gpus is not None:
        return None
    if work.task == "serving" or getattr(work, "megatron", None) is not None:
        return None
    gpu = snap.gpus[i]
    if ctx.apply_filters and ev.filtered_out(gpu, lim) is not None:
        return None
    v = snap.variants[snap.variant[i]]
    key = _key(ctx, v)
    run = ev.job_variant(ctx, key)
    if run.training:
        return None
    total = ev.variant_memory(ctx, key, run, 1, v[1], v[2]).total
    avail = float(snap.avail[i])  # ev.usable_gb(gpu, run): too_big's reason reads it too
    if total <= avail:
        return None
    return ev.too_big(gpu, ctx, run, total, 1, avail)


def loose_bounds(
    snap: Snapshot, ctx: ev.Context, count: NDArray[np.int64]
) -> NDArray[np.float64] | None:
    """``ev.loose_bounds`` of every card's configuration from ``first_counts`` (the rows with
    count 0 are not read), stepped from the snapshot's card rows, one step per precision the
    job runs at (its GPU-independent terms); None unless the job is LLM inference of a model
    without routed experts (the caller then asks ``ev.loose_bounds``)."""
    done = stepped(snap, ctx, count)
    return None if done is None else done.bounds


def stepped(snap: Snapshot, ctx: ev.Context, count: NDArray[np.int64]) -> Stepped | None:
    """``loose_bounds``, with the steps taken for them (``Stepped``)."""
    out = np.full(len(snap.gpus), math.inf)
    sets = _sets(snap, ctx, count > 0)
    if sets is None:
        return None
    steps = []
    step = np.full(len(snap.gpus), -1, np.intp)
    row = np.full(len(snap.gpus), -1, np.intp)
    for k, (job, run, on) in enumerate(sets):
        cards = np.flatnonzero(on)
        rows = snap.card_rows(ctx)
        n = count[cards].astype(np.float64)
        cols = llm_step.dense_columns(job, rows, snap.place[cards], n)
        t, pre, dec = perf.stepped_parts(cols, run)
        out[cards] = np.where(np.isfinite(t) & (t > 0), t, math.inf)
        steps.append((pre, dec))
        step[cards] = k
        row[cards] = np.arange(len(cards))
    return Stepped(out, steps, step, row)


def bounds_at(
    snap: Snapshot, ctx: ev.Context, cards: list[int], counts: list[int]
) -> list[float] | None:
    """``ev.loose_bounds`` of card ``cards[j]``'s configuration at ``counts[j]`` GPUs as
    ``plan`` makes it (the job as asked, its gate's variant), stepped from the snapshot's
    card rows as ``stepped`` steps them (a card may come more than once); None where
    ``stepped`` would be (the caller then proves nothing from them)."""
    at = np.array(cards, np.intp)
    n = np.array(counts, np.float64)
    on = np.zeros(len(snap.gpus), bool)
    on[at] = True
    sets = _sets(snap, ctx, on)
    if sets is None:
        return None
    out = np.full(len(at), math.inf)
    rows = snap.card_rows(ctx)
    for job, run, members in sets:
        mine = np.flatnonzero(members[at])
        cols = llm_step.dense_columns(job, rows, snap.place[at[mine]], n[mine])
        t = perf.stepped_bounds(cols, run)
        out[mine] = np.where(np.isfinite(t) & (t > 0), t, math.inf)
    bounds: list[float] = out.tolist()
    return bounds


def _sets(
    snap: Snapshot, ctx: ev.Context, found: NDArray[np.bool_]
) -> list[tuple[llm_step.ReplicaJob, WorkloadSpec, NDArray[np.bool_]]] | None:
    """The cards of ``found`` in sets stepped as one set of columns each (their jobs' GPU-
    independent terms and step shape); None unless the job is LLM inference of a model
    without routed experts."""
    precisions = {v[0]: _key(ctx, v) for v in snap.variants}
    # The precisions whose jobs have the same GPU-independent terms (a model's BF16 and FP16
    # weights: two bytes each) and step shape are stepped as one set of columns: the columns
    # read nothing else of the job, and a set costs about the same whatever its rows (some
    # 60 whole-column operations for ~20 or ~90 cards alike).
    sets: list[tuple[llm_step.ReplicaJob, WorkloadSpec, NDArray[np.bool_]]] = []
    for precision, key in precisions.items():
        on = found & snap.runs_at(precision)
        if not on.any():
            continue
        run = ev.job_variant(ctx, key)
        if not run.is_llm_inference:
            return None
        job = perf.llm_job(run)
        if job.experts:
            return None
        same = next((x for x in sets if x[0] == job and _shape(x[1]) == _shape(run)), None)
        if same is None:
            sets.append((job, run, on))
        else:
            same[2][:] |= on
    return sets


def one_gpu_estimate(
    snap: Snapshot, ctx: ev.Context, count: NDArray[np.int64], done: Stepped, i: int
) -> perf.PerfEstimate | None:
    """The estimate ``evaluate`` makes of card ``i``'s configuration from ``first_counts``
    where it is one GPU, from the steps its bound took (one GPU has no links: the same
    replica); None where it is more or was not stepped, or where its bound is not finite (a
    card without a peak to run a phase at: the estimate says so, not the steps)."""
    if count[i] != 1 or done.step[i] < 0 or not math.isfinite(done.bounds[i]):
        return None
    gpu, v = snap.gpus[i], snap.variants[snap.variant[i]]
    prompt, decode = done.steps[done.step[i]]
    run, eff = ev.job_variant(ctx, _key(ctx, v)), perf.efficiencies(gpu, ctx.calibration)
    est = perf.llm_one_gpu_estimate(
        run, prompt, decode, int(done.row[i]), snap.card_rows(ctx).terms[snap.place[i]], eff, v[1]
    )
    # its time is the card's one-GPU time its other counts' scaling efficiencies divide by
    perf.keep_single(gpu, run, eff, v[1], est.step_time_s)
    return est


def _shape(run: WorkloadSpec) -> tuple[int, int, int]:
    """What ``perf.stepped_bounds`` reads of the job besides its replica terms."""
    return run.batch_size, run.seq_len, run.output_tokens

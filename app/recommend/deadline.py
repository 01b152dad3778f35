"""constraints.max_hours said in words: whether anything finishes the job in time, and when
nothing does, what would (more GPUs, a faster card, a shorter job).

Each suggestion is a re-rank of the catalog with one thing changed (app/recommend/whatif.py's
mechanism, ``limit=1``), so what it names is what the engine would answer, not a guess. The
ranker it is given ranks only options with a price (a card with none cannot be bought or rented
to meet the deadline), so "the fastest option" is the fastest one can act on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from app.domain.evaluate import COUNTS
from app.domain.evaluate import hours_text as hours
from app.domain.figures import duration, limit_duration
from app.domain.rank import Candidate, uncertainty
from app.domain.workload import WorkloadSpec
from app.errors import AppError
from app.numbers import sig_figs
from app.recommend import schemas as s
from app.recommend.whatif import Ranker, changed_request

MOST_GPUS = COUNTS[-1]


# How each line of ``would`` opens: the change it names, then what it does. All but a shorter
# job finish the whole job in time; the verdict of an empty answer names the first of those.
MORE_GPUS = "more GPUs"
FASTER_CARD = "a faster card"
COPIES = "copies side by side"
LARGER_BATCH = "a larger batch"
SHORTER_JOB = "a shorter job"
# How a row's warning opens where its estimate meets the deadline and its band's slow end
# does not (slow_end_warnings): the verdict finds it by this
MAY_MISS = "may miss the "
# The rungs a missed inference deadline tries the batch at, as multiples of the request's: an
# offline job at batch 1 leaves the card idle between one sample's small kernels (an LLM's
# decode step reads every weight for one sequence), so the same hardware gets through the
# dataset several times faster at a larger batch; each rung is one re-rank, and the engine's
# memory check refuses a batch no card holds.
BATCH_RUNGS = (4, 16, 64, 256)
# Past a million times the deadline the answer stops counting: the message says "over a
# million times", and a count of copies or a share of the dataset past it (1,843,200,000,000,000
# copies, 0.000000000000054 % of the samples) is no plan anyone can act on.
MISSED_BY_TOO_MUCH = 1e6


def _row(r: s.Recommendation) -> str:
    n = f"{r.num_gpus} × " if r.num_gpus > 1 else ""
    return f"{n}{r.gpu.name}"


def _job_cost(r: s.Recommendation, acquisition: str) -> str:
    """' ($788,000 rented)': what the suggestion costs for the whole job, where the question
    rents: a cheapest answer weighs a change by it (256 × B200 for 28 days is no small ask)."""
    rent = r.cost.rent
    if acquisition not in ("rent", "either") or rent is None or rent.job_usd is None:
        return ""
    return f" (${rent.job_usd:,.0f} rented)"


def _outlay(r: s.Recommendation, acquisition: str) -> str:
    """' ($788,000 rented)' or ' ($750 to buy)': what a suggestion costs on the basis asked,
    the rented job where the question rents, else the cards' purchase price."""
    rented = _job_cost(r, acquisition)
    buy = r.cost.buy
    if rented or acquisition not in ("buy", "either") or buy is None:
        return rented
    return f" (${buy.usd:,.0f} to buy)"


def _copies_cost(r: s.Recommendation, copies: int, cons: s.ConstraintsIn) -> str:
    """' (buying: 18 cards, $86,400) without the limits on max_gpus, max_purchase_usd': what
    ``copies`` copies of row ``r`` cost on the bases the question asks for, and the limits they
    go past. Renting copies for 1/copies of the time each costs the same; buying them buys
    every card (9 × 2 RTX 5090 under a $10,000 budget and 2 GPUs had read "the same cost")."""
    acq = cons.acquisition
    rent, buy = r.cost.rent, r.cost.buy
    said: list[str] = []
    over: list[str] = []
    if copies * r.num_gpus > cons.max_gpus:
        over.append("max_gpus")
    if acq in ("rent", "either") and rent is not None:
        said.append(
            "renting: about the same cost, spread over more instances, plus each one's "
            "minute of start-up"
        )
        if cons.max_hourly_usd is not None and copies * rent.usd_per_hour > cons.max_hourly_usd:
            over.append("max_hourly_usd")
    if acq in ("buy", "either") and buy is not None:
        said.append(f"buying: {copies * r.num_gpus} cards, ${copies * buy.usd:,.0f}")
        if cons.max_purchase_usd is not None and copies * buy.usd > cons.max_purchase_usd:
            over.append("max_purchase_usd")
        # purchase plus the job's energy: the energy is the same GPU-hours, split
        job = None if buy.job_usd is None else buy.job_usd + (copies - 1) * buy.usd
        if cons.max_job_cost_usd is not None and job is not None and job > cons.max_job_cost_usd:
            over.append("max_job_cost_usd")
    cost = f" ({'; '.join(said)})" if said else ""
    return cost + (f" without the limits on {', '.join(over)}" if over else "")


def _share(part: float) -> str:
    """A share as a percentage a person reads: whole percents from 1 %, two significant
    figures below it (543 of 1,000,000 samples had read "0%"), never in exponent notation
    (``:.2g`` wrote a share under a millionth as "1e-05%"), and under a millionth said as
    that (two significant figures of 1.5e-20 are twenty digits long)."""
    if part >= 0.01:
        return f"{part:.0%}"
    if part * MISSED_BY_TOO_MUCH < 1:
        return f"under {sig_figs(100 / MISSED_BY_TOO_MUCH)}%"
    return f"{sig_figs(part * 100, 2)}%"


def needs(d: s.DeadlineOut | None) -> str | None:
    """'to finish within 30.0 days it needs more GPUs: 256 × B200 takes 28.5 days (…)': the
    first change in ``would`` that meets a missed deadline with the whole job, as an empty
    answer's verdict names it before lifting the deadline (a 21,000-hour job had been offered
    "no deadline" while 256 × B200 met its 30 days); None where the deadline is met or no
    change meets it (a shorter job is another job)."""
    if d is None or d.met:
        return None
    line = next((w for w in d.would if not w.startswith(SHORTER_JOB)), None)
    within = limit_duration(d.max_hours)
    return None if line is None else f"to finish within {within} it needs {line}"


def _top(
    rank: Ranker, request: s.RecommendationRequest, changes: dict[str, Any]
) -> s.Recommendation | None:
    try:
        answer = rank(changed_request(request, changes))
    except (AppError, ValueError):
        return None
    return answer.recommendations[0] if answer.recommendations else None


def _fastest_within(
    rank: Ranker, request: s.RecommendationRequest, cap: int
) -> tuple[s.Recommendation, float] | None:
    """The fastest priced option with up to ``cap`` GPUs and the deadline lifted, and its time."""
    row = _top(
        rank,
        request,
        {
            "constraints": {"num_gpus": None, "max_gpus": cap, "max_hours": None},
            "objective": "fastest",
        },
    )
    took = None if row is None else row.time_to_finish_h
    return None if row is None or took is None else (row, took)


def fewest_gpus(
    rank: Ranker, request: s.RecommendationRequest, limit: float
) -> tuple[int, s.Recommendation, float] | None:
    """The smallest GPU cap on the engine's count ladder (above the request's own count) whose
    fastest option finishes within ``limit``: (that cap, the option, its time), or None when
    even the most GPUs miss. The fastest time can only fall as the cap rises (a higher cap
    adds options and removes none), so the ladder is searched by halves: a few re-ranks."""
    cons = request.constraints
    floor = cons.num_gpus if cons.num_gpus is not None else cons.max_gpus
    caps = [c for c in COUNTS if c > floor]
    best: tuple[int, s.Recommendation, float] | None = None
    lo, hi = 0, len(caps) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        found = _fastest_within(rank, request, caps[mid])
        if found is not None and found[1] <= limit:
            best = (caps[mid], *found)
            hi = mid - 1
        else:
            lo = mid + 1
    return best


def larger_batch(
    rank: Ranker, request: s.RecommendationRequest, batch: int, samples: float, limit: float
) -> tuple[int, s.Recommendation, float] | None:
    """The smallest batch on ``BATCH_RUNGS`` × ``batch`` (no larger than the job's samples)
    whose fastest option within the request's other limits finishes within ``limit``: (that
    batch, the option, its time), or None when no rung does."""
    for rung in BATCH_RUNGS:
        size = batch * rung
        if size > samples or size > s.MAX_BATCH_SIZE:
            break
        changes = {
            "workload": {"batch_size": size},
            "constraints": {"max_hours": None},
            "objective": "fastest",
        }
        row = _top(rank, request, changes)
        took = None if row is None else row.time_to_finish_h
        if row is not None and took is not None and took <= limit:
            return size, row, took
    return None


def slow_end(r: s.Recommendation) -> float | None:
    """A row's time to finish at the slow end of its throughput band (its time ÷ the band's
    low factor), or None without a time."""
    t, low = r.time_to_finish_h, r.uncertainty.factor_low
    return None if t is None or low <= 0 else t / low


def past(slow: float, limit: float) -> str:
    """A slow-end time past ``limit``, told apart from it: "up to 2.0 h" under a 2.0 h
    deadline (2.04 h) read as meeting it, so a time that rounds to the deadline's words gains
    a fourth figure, or says it is just over."""
    said = hours(slow)
    if said != hours(limit):
        return said
    finer = duration(slow, 4)  # one figure more, and no further: 2.0001 h is "just over"
    return finer if finer != duration(limit, 4) else f"just over {said}"


def slow_end_warnings(
    rows: list[s.Recommendation], limit: float
) -> list[tuple[s.Recommendation, float]]:
    """Rows that meet ``limit`` on their estimate but not at the slow end of their band, with
    that time; each such row is warned (8 × B200 at 46 min under an hour's deadline, its band
    reaching 1.3 h, read as safely met), and every row with a time carries its slow end and
    whether it may miss (``slow_end_hours``, ``may_miss_deadline``): the warning alone was a
    sentence in the row's folded details, which neither a client nor a reader of the table
    could find."""
    risky: list[tuple[s.Recommendation, float]] = []
    for r in rows:
        slow = slow_end(r)
        if slow is None or (r.time_to_finish_h or 0.0) > limit:
            continue
        r.slow_end_hours = slow
        r.may_miss_deadline = slow > limit
        if not r.may_miss_deadline:
            continue
        r.warnings.append(
            f"{MAY_MISS}{limit_duration(limit)} deadline: up to {past(slow, limit)} at the "
            "slow end of its range"
        )
        risky.append((r, slow))
    return risky


# What each objective orders the rows kept by, as the deadline's rule says it
_ORDER = {
    "fastest": "the shortest time to finish first",
    "cheapest": "the lowest cost to finish first",
    "best_value": "the most work per dollar first",
    "balanced": "speed and cost weighed together",
}


def rule(objective: str, limit: float, rows: Sequence[s.Recommendation]) -> tuple[str, int | None]:
    """How the deadline keeps and orders rows, in words, and the rank of the first row shown
    that meets it even at the slow end of its range (None where none does). Rows are kept on
    their estimate, the engine's central figure, not on the slow end: the calibrated bands
    hold about 80 % of published measurements, so a deadline met only at the slow end would
    be a margin of one run in ten bought at the user's expense (a 0.58× band near halves the
    deadline and puts a dearer card first). The margin is the user's to choose, so each row
    says its slow end and the first row that keeps it is named."""
    within = limit_duration(limit)
    text = (
        f"a row is kept where its estimate, the engine's central figure, finishes within "
        f"{within}, and the rows kept are ordered by the objective "
        f"({_ORDER.get(objective, objective)}); each row's range is calibrated to hold about 80 % "
        "of published measurements, so about one run in ten is slower than its slow end, and a "
        "row whose slow end misses the deadline says it may miss it"
    )
    safe = next((r for r in rows if r.slow_end_hours is not None and not r.may_miss_deadline), None)
    if safe is not None and safe.slow_end_hours is not None:
        text += (
            f"; for a margin, {_row(safe)} (#{safe.rank}) meets it even at its slow end, "
            f"up to {hours(safe.slow_end_hours)}"
        )
        return text, safe.rank
    if rows:
        text += "; no row shown meets it even at its slow end"
    return text, None


def slow_misses(ranked: Iterable[Candidate], limit: float) -> int:
    """How many ranked configurations meet ``limit`` on their estimate but not at the slow
    end of their band (``slow_end``'s rule on the engine's candidates): every one ranked, not
    only the rows the answer's ``limit`` shows, so the count no longer grew with the rows
    asked for (ResNet-50 training within 24 h: 0 at limit 8, 1 at limit 10)."""
    n = 0
    for c in ranked:
        t = c.cost.time_to_finish_h
        if t is None or t > limit:
            continue
        low = uncertainty(c)[0]
        n += low > 0 and t / low > limit
    return n


def summary(
    request: s.RecommendationRequest,
    answer: s.RecommendationResponse,
    work: WorkloadSpec,
    rank: Ranker,
    ranked: Sequence[Candidate] | None = None,
) -> s.DeadlineOut:
    """``ranked``: every configuration the answer ranked (counts.ranked), which ``may_miss``
    counts; None: the rows shown alone."""
    limit = request.constraints.max_hours
    assert limit is not None
    left_out = sum(1 for x in answer.excluded if x.code == "misses_deadline")
    if answer.recommendations:
        msg = f"every row finishes within {limit_duration(limit)}"
        risky = slow_end_warnings(answer.recommendations, limit)
        # a shown row is one of those ranked: the larger count only guards a mismatch
        may_miss = max(len(risky), slow_misses(ranked, limit)) if ranked is not None else len(risky)
        # "of the 94 ranked": the count is over every configuration ranked, not the rows shown
        counted = answer.counts.ranked if answer.counts is not None else len(ranked or ())
        of = f" of the {counted} ranked" if ranked is not None else ""
        if risky:
            row, slow = risky[0]
            many = may_miss > 1
            msg += (
                f" on its estimate, but {may_miss}{of} may miss it at the slow end of "
                f"{'their' if many else 'its'} range ({_row(row)}: up to {past(slow, limit)}"
                f"{', and others' if many else ''})"
            )
        elif may_miss:
            msg += (
                f" on its estimate, but {may_miss}{of}, none of them a row shown, may miss it "
                f"at the slow end of {'their' if may_miss > 1 else 'its'} range"
            )
        if left_out:
            # "9 GPU types", not "9 card(s)": the count is of the excluded list's GPU types
            kinds = "GPU type" if left_out == 1 else "GPU types"
            msg += f"; {left_out} {kinds} left out as too slow"
        said, safe = rule(request.objective, limit, answer.recommendations)
        return s.DeadlineOut(
            max_hours=limit,
            met=True,
            message=msg,
            left_out=left_out,
            may_miss=may_miss,
            rule=said,
            safe_rank=safe,
        )
    lifted = {"constraints": {"max_hours": None}, "objective": "fastest"}
    fastest = _top(rank, request, lifted)
    if fastest is None or fastest.time_to_finish_h is None:
        return s.DeadlineOut(
            max_hours=limit,
            met=False,
            message="nothing with a price runs the job within the other limits, with or "
            "without the deadline",
            left_out=left_out,
            rule=rule(request.objective, limit, ())[0],
        )
    took = fastest.time_to_finish_h
    would: list[str] = []
    cons = request.constraints
    acq = cons.acquisition
    # More GPUs: the fewest on the engine's count ladder that meet the deadline, where the
    # request capped or fixed the count (512 B200s had been named where 8 already met it).
    if cons.num_gpus is not None or cons.max_gpus < MOST_GPUS:
        found = fewest_gpus(rank, request, limit)
        if found is not None:
            cap, wide, took_wide = found
            # a stated num_gpus fixes the count whatever max_gpus says, so the lever is that
            # field at the row's count (raising max_gpus had been advised beside num_gpus 1)
            lever = (
                f"constraints.num_gpus {wide.num_gpus}"
                if cons.num_gpus is not None
                else f"constraints.max_gpus {cap}"
            )
            # it says what it optimises (the fewest GPUs that finish in time), as an empty
            # answer's "up to 64 GPUs" names its objective's pick beside it
            would.append(
                f"{MORE_GPUS}: {_row(wide)} takes {hours(took_wide)}{_job_cost(wide, acq)} "
                f"({lever}), the fewest that finish in time"
            )
    # A faster card: one the request's filters or budget keep out.
    open_up: dict[str, Any] = {
        k: None
        for k in ("vendors", "segments", "max_purchase_usd", "max_hourly_usd", "max_job_cost_usd")
        if getattr(cons, k) is not None
    }
    if open_up:
        # the cheapest option that finishes in time once those limits are lifted, not the
        # fastest: a student's $500 ResNet-50 card within a day had been told of 8 × H200 NVL
        # (1.4 h) where a $750 MI100 meets it; the least money past the budget is the lever,
        # as an empty answer's lifted budget is ranked cheapest first
        faster = _top(rank, request, {"constraints": open_up, "objective": "cheapest"})
        took_faster = None if faster is None else faster.time_to_finish_h
        if faster is not None and took_faster is not None and took_faster <= limit:
            named = ", ".join(open_up)
            would.append(
                f"{FASTER_CARD}: {_row(faster)} takes {hours(took_faster)}"
                f"{_outlay(faster, acq)} without the limits on {named}, the cheapest that "
                "finishes in time"
            )
    # Copies side by side: one-job inference shares nothing between samples, so copies of the
    # fastest option on disjoint shares of the dataset divide its time (an LLM's extra GPUs
    # split one model's layers instead, which does not speed up a model one card holds; other
    # models' extra GPUs are copies already, inside one instance, so these are more instances).
    # Not where the request already runs its extra GPUs as copies (workload.extra_gpus): the
    # fastest option is copies already, and more of them is "more GPUs" above.
    samples = (work.dataset_samples or 0) * (work.epochs or 1.0)
    # A larger batch on the same limits: named before copies, as it asks for no more cards.
    if work.task == "inference" and samples > 0:
        batched = larger_batch(rank, request, work.batch_size, samples, limit)
        if batched is not None:
            size, row, took_b = batched
            would.append(
                f"{LARGER_BATCH}: batch {size:,} instead of {work.batch_size:,}: {_row(row)} "
                f"takes {hours(took_b)}{_job_cost(row, acq)}"
            )
    # took ÷ limit overflows to infinity for a deadline near zero (1e-300 h), and past a
    # million (1e-12 h) the count is twenty digits long: no copies are named past the
    # message's own threshold
    ratio = took / limit
    if (
        work.task == "inference"
        and request.workload.extra_gpus != "copies"
        and ratio < MISSED_BY_TOO_MUCH
    ):
        copies = math.ceil(ratio)
        would.append(
            f"{COPIES}: {copies:,} × ({_row(fastest)}), each on 1/{copies:,} of the "
            f"samples, take {hours(took / copies)}{_copies_cost(fastest, copies, cons)}"
        )
    # A shorter job: the share of the dataset the fastest option gets through in time.
    if samples > 0:
        fits = samples * limit / took
        would.append(
            f"{SHORTER_JOB}: {_row(fastest)} gets through {fits:,.0f} of the {samples:,.0f} "
            f"samples ({_share(fits / samples)}) in {limit_duration(limit)}"
        )
    message = (
        f"nothing finishes within {limit_duration(limit)}: the fastest priced option within the "
        f"other limits, {_row(fastest)}, takes {hours(took)} "
        f"({f'{sig_figs(ratio)}×' if ratio < MISSED_BY_TOO_MUCH else 'over a million times'} "
        "the deadline)"
    )
    return s.DeadlineOut(
        max_hours=limit,
        met=False,
        message=message,
        rule=rule(request.objective, limit, ())[0],
        left_out=left_out,
        fastest_hours=took,
        fastest=_row(fastest),
        would=would,
    )

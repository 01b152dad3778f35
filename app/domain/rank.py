"""Objectives, scores, explanations, tips and uncertainty for GPUs that can run the job."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from app import vocab
from app.domain import bands, compat, formats, ranking, topology
from app.domain import cost as costs
from app.domain.efficiency import unified, wired_share
from app.domain.evaluate import SAVER_LABELS, ConfigResult, hours_text, usable_gb
from app.domain.figures import sig_figs
from app.domain.gpu import GpuSpec
from app.domain.llm_step import expert_split, vocabulary_params
from app.domain.perf import (
    NCHW_RUNTIMES,
    PerfEstimate,
    phase_regime,
    profile_for,
    runs_nchw,
    shown_rate,
)
from app.domain.serving import RuntimeProfile, ServingConfig
from app.domain.serving_step import Served
from app.domain.units import gib, vram
from app.domain.workload import (
    MemoryBreakdown,
    ModelSpec,
    WorkloadSpec,
    memory_breakdown,
)
from app.vocab import (
    FOUR_BIT_PRECISIONS,
    LLAMACPP_VULKAN_RUNTIME,
    OBJECTIVES,
    QUANTIZATION_LABELS,
    TORCH_PROGRAM_RUNTIMES,
)

__all__ = ["OBJECTIVES"]

# Balanced = speed score^w × value score^(1−w): with w = ½ the geometric mean, so a card
# twice as fast and a card twice the value per dollar tie. Users may move w (speed_weight).
DEFAULT_SPEED_WEIGHT = 0.5


@dataclass(slots=True)  # thousands per request with offers: cheap to build
class Candidate:
    gpu: GpuSpec
    work: WorkloadSpec  # at the precision it really runs on this GPU
    memory: MemoryBreakdown
    available_gb: float
    perf: PerfEstimate
    cost: costs.CostEstimate
    warnings: list[str] = field(default_factory=list)
    derived_peak: bool = False
    framework_status: str = "supported"
    score: float = 0.0
    speed_score: float = 0.0
    value_score: float | None = None
    meets_latency: bool | None = None
    acquisition: str = "either"  # narrowed to what passed the budget filters
    savers: tuple[str, ...] = ()  # memory savers the engine added (evaluate.SAVERS)
    micro_batch: int | None = None
    accumulation_steps: int = 1
    pricing: costs.Pricing | None = None  # the offers chosen, when priced from offers
    serving: Served | None = None  # task 'serving': the shape, its runtime and prices

    @property
    def n(self) -> int:
        return self.perf.num_gpus

    @classmethod
    def of(cls, r: ConfigResult) -> Candidate:
        """The rankable part of an evaluated configuration that can run the job."""
        assert r.ok and r.work and r.memory and r.perf and r.cost
        # positional, in field order: thousands per request, and keywords cost a third more
        return cls(
            r.gpu,
            r.work,
            r.memory,
            r.available_gb,
            r.perf,
            r.cost,
            list(r.warnings),
            r.derived_peak,
            r.framework_status,
            0.0,
            0.0,
            None,
            r.meets_latency,
            r.acquisition,
            r.config.savers,
            r.config.micro_batch if r.accumulation_steps > 1 else None,
            r.accumulation_steps,
            r.pricing,
            r.serving,
        )


def metric(
    c: Candidate, objective: str, speed_weight: float = DEFAULT_SPEED_WEIGHT
) -> float | None:
    """Larger is better for every objective."""
    if c.serving is not None:
        speed, value, _ = serving_columns(c.serving, objective)
        if objective == "fastest":
            return speed
        if objective == "balanced":
            return balanced(speed, value, speed_weight)
        return value  # best value: output tokens per dollar; cheapest: hours of the load
    if objective != "balanced":
        return metric_of(objective, c.perf.throughput, c.cost, c.acquisition)
    v = costs.value(c.cost, c.acquisition)
    return c.perf.throughput if v is None else balanced(c.perf.throughput, v, speed_weight)


def metric_of(
    objective: str, throughput: float, cost: costs.CostEstimate, acquisition: str
) -> float | None:
    """'fastest', 'best_value' or 'cheapest' from a throughput and its costs: never smaller
    for a higher throughput at the same prices, nor for more acquisition modes to choose
    from (what a bound on them bounds)."""
    if objective == "fastest":
        return throughput
    if objective == "best_value":
        return costs.value(cost, acquisition)
    price = costs.job_cost(cost, acquisition)
    if price is None:
        price = costs.upfront(cost, acquisition)
    return 1.0 / price if price else None


balanced = ranking.balanced_py  # speed^w × value^(1−w), one card at a time (bounds, tests)


def needs_price(objective: str) -> bool:
    """Objectives that rank by cost; the others rank unpriced GPUs too (price_known false)."""
    return objective in vocab.PRICE_OBJECTIVES


def price_known(c: Candidate) -> bool:
    """Whether the row is priced the way its question acquires (costs.priced_as_asked): a
    serving shape on the basis it is ranked on, any other row on its purchase or its hour."""
    if c.serving is not None:
        return c.serving.price.basis is not None
    if c.pricing is not None:
        hourly = c.pricing.rent.usd_per_hour if c.pricing.rent is not None else None
        return costs.priced_as_asked(c.acquisition, c.pricing.purchase_usd, hourly)
    return costs.priced_as_asked(c.acquisition, c.cost.purchase_usd, c.cost.hourly_usd)


def rank(
    cands: list[Candidate],
    objective: str,
    speed_weight: float = DEFAULT_SPEED_WEIGHT,
    limit: int | None = None,
) -> list[Candidate]:
    """Score in (0, 1], best = 1; ties broken by slug so the order is deterministic.
    ``speed_weight`` is the balanced objective's weight on speed (value gets the rest).
    Every candidate is scored; ``limit``: only the first ``limit`` are ordered and returned
    (a partial sort, app.domain.ranking).

    Software the rules call experimental for this job (QLoRA on ROCm/XPU, JAX on Metal) is
    listed after every GPU where it is supported, as a latency miss is. A GPU without a price
    cannot be scored on value: under a mixed objective it is listed after every priced one
    rather than ranked on speed alone."""
    if not cands:
        return []
    lists = _column_lists(cands, objective)
    few = (
        ranking.rank_few(*lists, objective, speed_weight, limit)
        if len(cands) <= ranking.FEW
        else None
    )
    if few is None:
        r = ranking.rank_columns(
            ranking.columns(*lists), objective, speed_weight, limit, keep_unpriced=True
        )
        few = (r.order.tolist(), r.score.tolist(), r.speed_score.tolist(), r.value_score.tolist())
    order, scores, speeds, values = few
    for c, score, speed, value in zip(cands, scores, speeds, values, strict=True):
        c.score = score
        c.speed_score = speed
        c.value_score = None if value != value else value  # NaN: no value score
    return [cands[i] for i in order]


def columns(cands: list[Candidate], objective: str = "best_value") -> ranking.Columns:
    """The candidates' metrics as columns, one row each, in their order (a serving row's
    value depends on the objective: ``serving_columns``)."""
    return ranking.columns(*_column_lists(cands, objective))


def _column_lists(
    cands: list[Candidate], objective: str
) -> tuple[
    list[float],
    list[float | None],
    list[float | None],
    list[int],
    list[str],
    list[bool | None],
    list[bool],
    list[float] | None,
    list[bool] | None,
]:
    """``columns``' per-row lists, in ``ranking.columns``' order of arguments."""
    speeds: list[float] = []
    values: list[float | None] = []
    prices: list[float | None] = []
    firsts: list[float] = []  # serving: the first token's latency, the tie-break of a speed
    for c in cands:
        if c.serving is not None:
            speed, value, price = serving_columns(c.serving, objective)
            speeds.append(speed)
            values.append(value)
            prices.append(price)
            firsts.append(c.serving.result.ttft_ms or 0.0)
            continue
        firsts.append(0.0)
        speed, value, price = ranked_figures(c)
        speeds.append(speed)
        values.append(value)
        prices.append(price)
    rigs = [host_unpriced(c) for c in cands]
    return (
        speeds,
        values,
        prices,
        [c.perf.num_gpus for c in cands],
        [c.gpu.slug for c in cands],
        [c.meets_latency for c in cands],
        [c.framework_status == "experimental" for c in cands],
        firsts if any(firsts) else None,
        rigs if any(rigs) else None,
    )


def ranks_ahead(c: Candidate, objective: str) -> bool:
    """Whether ``c`` is in the first class of ``ranking.rank_columns``'s order, listed before
    any row of a lower score: it meets any latency target, runs supported software and, under
    an objective that weighs money, is not a rig priced without its host. The service's fast
    paths bound the rows shown by such rows only."""
    if c.meets_latency is False or c.framework_status == "experimental":
        return False
    return objective == "fastest" or not host_unpriced(c)


def host_unpriced(c: Candidate) -> bool:
    """Whether ``c`` is ranked on a bought price that leaves its host out
    (compat.host_unpriced): bought, or under 'either' where buying is the better value (a
    rented instance's price has its host in it)."""
    acq = c.acquisition
    if acq == "either" and c.serving is None:
        buy, rent = c.cost.samples_per_usd_buy, c.cost.samples_per_usd_rent
        buys = buy is not None and (rent is None or buy >= rent)
    else:
        buys = acq == "buy"
    paid = c.pricing.buy if c.pricing is not None else None
    return compat.host_unpriced(c.gpu, c.n, buys, paid)


def serving_columns(
    s: Served, objective: str = "best_value"
) -> tuple[float, float | None, float | None]:
    """A serving shape's (speed, value, price) as the objectives read them. Every shape that
    meets the targets carries the asked load for an hour: the price is that hour's (the basis
    the acquisition allows), the speed the tokens per second each request sees, 1 ÷ the
    inter-token latency (serving_step.Served.speed). The value is what the objective weighs
    against money: 'best_value' the output tokens per dollar (serving_step.Served.value, the
    inverse of the row's blended $/M output tokens: under a concurrency load a faster shape
    produces more in the same hour; under a rate load every shape produces the same tokens,
    so it orders as 1 ÷ $/h); 'cheapest' and 'balanced' the hours of the load per dollar,
    1 ÷ $/h — balanced mixes that with the speed, which the tokens per dollar would count a
    second time (under a concurrency load they grow with it), so ITL^w × ($/h)^(1−w) as
    before 2026-12-03. Among equal scores the first token's latency decides (``columns``)."""
    hour = s.hourly
    if objective == "best_value":
        return s.speed, s.value, hour
    return s.speed, (1.0 / hour if hour else None), hour


def best_per_card(
    cands: list[Candidate], objective: str, speed_weight: float = DEFAULT_SPEED_WEIGHT
) -> list[tuple[Candidate, list[Candidate]]]:
    """The configuration each card is shown with, and its other configurations.

    Fastest takes the count that finishes soonest (scale-out pays when it speeds the job up);
    best value and cheapest take the count their own metric prefers, which penalises cards
    that do not pay for themselves. Balanced weighs a training job with a length (a time and
    a cost to finish, every configuration priced) by its own trade, speed^w × value^(1−w),
    with the time and the money to finish (``_finish_score``): 8 cards that finish 8× sooner
    for about the same money beat one (a 94-day single-B200 plan lost to 8 B200s in 11 days
    for less), extra cards that cost more than they speed up lose (8 bought cards are 8
    purchases). A job with no length, or a card with an unpriced
    configuration, keeps the fewest cards that hold the job (every extra card that adds speed
    is shown as an alternative, one click away: ``undominated``), as does inference, whose
    extra cards are replicas of a job that already runs (they are not waited on). A serving
    card's configurations are its shapes that meet the targets, picked the same way
    (``serving_pick``).
    """
    groups: dict[str, list[Candidate]] = {}
    for c in cands:
        groups.setdefault(c.gpu.slug, []).append(c)
    out: list[tuple[Candidate, list[Candidate]]] = []
    for group in groups.values():
        if group[0].serving is not None:
            key = serving_pick(objective)
            pool = _without_idle_losers(group) if objective == "balanced" else group
            chosen = min(pool, key=key)
            rest = sorted((c for c in group if c is not chosen), key=serving_pick("balanced"))
            out.append((chosen, rest))
            continue
        if objective == "balanced" and not all(_weighed(c) for c in group):
            chosen = min(group, key=_fewest_cards_key)
        elif objective == "balanced":
            # the highest score; among equal scores the fewest cards, then savers
            chosen = max(
                group, key=lambda c: (_finish_score(c, speed_weight), -c.n, -len(c.savers))
            )
        else:
            chosen = card_pick(group, objective)
        others = sorted((c for c in group if c is not chosen), key=lambda c: (c.n, c.savers))
        out.append((chosen, others))
    return out


# Savers that change what the job computes or trains (8-bit optimizer states; frozen text
# encoders with no caption or crop augmentation), not only how it is scheduled: a pick keeps
# the job as asked where it can, whatever they would gain in speed.
RECIPE_SAVERS = frozenset({"adam8bit", "cache_encodings"})


def _fewest_cards_key(c: Candidate) -> tuple[int, int, float, int]:
    """Balanced's pick where a card's configurations are not all weighed (``_weighed``): the
    fewest cards; then the job as asked (``RECIPE_SAVERS``); then the fastest, since the same
    cards at the same price differ only in speed; then the fewest savers. Savers that only
    reschedule the same update (checkpointing, micro-batches) are no reason to run slower:
    64 bought RTX PRO 6000s had been shown at 27 % scaling (FSDP over all 64, micro-batches
    of 2 a GPU) for having one saver where checkpointing's, sharded within each server at 8 a
    GPU, ran 2.5× faster with one saver too."""
    recipe = sum(1 for x in c.savers if x in RECIPE_SAVERS)
    return (c.n, recipe, -c.perf.throughput, len(c.savers))


def _without_idle_losers(group: list[Candidate]) -> list[Candidate]:
    """A serving card's shapes less those with idle replicas (``Served.idle_replicas``: more
    replicas than a concurrency load's users, planned where the request fixes the GPU count)
    that a shape on no more GPUs, every replica busy and no request waiting, outruns. An idle
    replica serves nobody: the shape's service is its busy replicas', and what it saves is the
    price of booking GPUs that do nothing on smaller instances. Balanced picks the fewest GPUs,
    then the cheapest, so at one user on exactly 2 × H100 SXM two one-GPU copies (one idle,
    7.49 ms a token) had won on cudo's 1-GPU instances' $0.06/h less over one tensor-parallel
    copy on its 2-GPU instance (5.30 ms). An idle-replica shape that is the faster (one GPU
    decoding faster than a layer split over two) stays in: its service is better."""

    def outrun(c: Candidate) -> bool:
        s = c.serving
        if s is None or s.idle_replicas == 0:
            return False
        return any(
            o.serving is not None
            and o.serving.idle_replicas == 0
            and not o.serving.result.saturated
            and o.n <= c.n
            and o.serving.speed > s.speed
            for o in group
        )

    return [c for c in group if not outrun(c)] or group


# Under 'fastest', speeds within 5 % are a tie: closer than any estimate here can tell apart
# (a product rule, not a constant of the physics). So more of one card must pay for itself:
# each card added must add at least 5 % of one card's speed (``card_pick``). Eight host-bound
# B100s ran an eager Stable Diffusion batch of 8 2.4 % faster than one (each GPU's process
# dispatches every kernel) and used to be the answer; and the verdict names the cheapest of
# the rows shown within 5 % of the pick (app/recommend/summary.py).
FASTEST_TIE = 1.05


def card_pick(group: list[Candidate], objective: str) -> Candidate:
    """The configuration of one card's ``group`` that 'fastest', 'best value' or 'cheapest'
    shows: the highest metric, among equals the fewest cards. Under 'fastest', from the fewest
    cards up, a larger count replaces the pick only where each card it adds adds at least
    FASTEST_TIE − 1 of the pick's speed per card (a faster configuration on as many cards
    always does)."""
    if objective != "fastest":
        return max(group, key=lambda c: (metric(c, objective) or 0.0, -c.n))
    runs = sorted(
        ((metric(c, objective) or 0.0, c) for c in group), key=lambda sc: (sc[1].n, -sc[0])
    )
    best, pick = runs[0]
    for speed, c in runs[1:]:
        gain = speed - best
        if gain > 0 and gain >= (FASTEST_TIE - 1) * best / pick.n * (c.n - pick.n):
            best, pick = speed, c
    return pick


def undominated(chosen: Candidate, others: list[Candidate] | None) -> list[Candidate]:
    """A card's other configurations (fewest cards first) less those another one listed
    dominates (``_dominates``): an LLM's second card at batch 1 holds half the layers, and the
    one token passes through both in turn (a batch of one cannot be split), so it ran no faster
    for twice the price and had read as an option. The ranking never reads them; they are
    what the row lists."""
    listed = [chosen]
    for o in others or ():
        if not any(_dominates(a, o) for a in listed):
            listed.append(o)
    return listed[1:]


# The share of a card's usable memory below which a row is tight (the headroom tip's threshold)
TIGHT_SHARE = 0.15


def _tight(c: Candidate) -> bool:
    return c.available_gb - c.memory.total < TIGHT_SHARE * c.available_gb


def _dominates(a: Candidate, b: Candidate) -> bool:
    """``b`` is no faster than ``a`` (within FASTEST_TIE: closer than an estimate here tells
    apart) and costs more: its price to finish, else its way in (``metric_of``'s 'cheapest'),
    else, unpriced, more of the same card. Not where ``b`` buys what ``a`` lacks: room in
    memory where ``a`` is tight, or a latency target ``a`` misses."""
    if a.perf.unit != b.perf.unit or b.perf.throughput > a.perf.throughput * FASTEST_TIE:
        return False
    if (_tight(a) and not _tight(b)) or (a.meets_latency is False and b.meets_latency):
        return False
    pa, pb = _price(a), _price(b)
    if pa is not None and pb is not None:
        return pb > pa
    return b.n > a.n


def _price(c: Candidate) -> float | None:
    price = costs.job_cost(c.cost, c.acquisition)
    return price if price is not None else costs.upfront(c.cost, c.acquisition)


# The throughput bound's own slack (tests/recommend/test_fast_paths.py holds an estimate
# within 1e-12 of it) and then some: a proof of domination never rests on the last bits.
_BOUND_SLACK = 1.0 + 1e-9


def outruns(a: Candidate) -> tuple[float, float] | None:
    """(throughput, price): ``a`` dominates (``_dominates``) any configuration of its unit at
    most that fast and priced above that, whatever that one's memory and latency, as ``a`` is
    not tight and meets any latency target (neither can be what the other buys); None where
    it is tight, misses the target or has no price to compare."""
    price = _price(a)
    if price is None or _tight(a) or a.meets_latency is False:
        return None
    return a.perf.throughput * FASTEST_TIE / _BOUND_SLACK, price


def dominated_by(edge: tuple[float, float] | None, bound: float, price: float | None) -> bool:
    """Whether a configuration of the unit of the one ``edge`` is of (``outruns``) is dominated
    by it, at most ``bound`` fast (a throughput bound) at ``price`` (one its speed does not
    move: the job has no length)."""
    return edge is not None and price is not None and bound <= edge[0] and price > edge[1]


def _weighed(c: Candidate) -> bool:
    """Whether balanced trades ``c``'s speed against its money within its card: a training
    job with a rented cost to finish (a length, an hourly price) where renting is asked.
    Bought cards are not: their price does not grow with the job, so at w = ½ a second card
    that doubles the speed for twice the money ties with one (2 × RTX 4080 bought for a
    7-minute QLoRA job, where one finishes in 14); they keep the fewest cards that hold it."""
    return c.work.training and c.acquisition != "buy" and bool(c.cost.rent_to_finish_usd)


def _finish_score(c: Candidate, speed_weight: float) -> float:
    """Balanced's trade between one card's rented configurations of a job with a length: the
    time to the result (the same work over the throughput, after the instance's start-up,
    costs.RENT_STARTUP_H) against the money to rent them until it finishes, which grows with
    the cards and the hours. The start-up is waited for and paid on every card whatever the
    count: 4 B200s that finish a LoRA job in 17 s against one in 50 s save 33 s of 110 for
    2.8 times the money (they had been picked on the run alone, 3 times as fast)."""
    job = c.cost.rent_to_finish_usd
    hours = c.cost.time_to_finish_h
    assert job and hours  # _weighed
    return balanced(1.0 / (hours + costs.RENT_STARTUP_H), 1.0 / job, speed_weight)


def serving_pick(objective: str) -> Callable[[Candidate], tuple[float, ...]]:
    """The order a serving card's shapes are picked in (the first is shown, the rest are its
    alternatives; every one meets the targets and carries the same load). Fastest: the lowest
    inter-token latency (the speed it ranks by), then the first token, then the price;
    cheapest: the lowest price per hour (a priced shape before an unpriced one), then the
    fastest; best value: the most output tokens per dollar (the value it ranks by; a priced
    shape before an unpriced one), then the lowest price per hour, then the fastest;
    balanced, as every task: the fewest GPUs, then the cheapest, then the fastest (a shape
    with idle replicas that a busy one outruns is not picked: ``_without_idle_losers``). Fewer
    GPUs, then plan order (higher-precision weights and KV first) break what ties remain.
    Under a rate load every shape produces the same tokens, so best value picks as cheapest,
    the pick before 2026-12-03. Under every objective a shape that runs all the concurrent
    requests at once comes before one where some wait for a slot: with the latency targets
    lifted, a 2-slot shape for 64 users had met them and, a few cents an hour cheaper, won."""

    def numbers(c: Candidate) -> tuple[float, float, float, float, float, float]:
        assert c.serving is not None
        hour = c.serving.hourly
        value = c.serving.value
        r = c.serving.result
        return (
            float(r.saturated),
            math.inf if hour is None else hour,
            -value if value is not None else math.inf,  # lower first: the most per dollar
            -c.serving.speed,
            r.ttft_ms if r.ttft_ms is not None else math.inf,
            float(c.n),
        )

    def fastest(c: Candidate) -> tuple[float, ...]:
        queued, hour, _, slow, ttft, n = numbers(c)
        return (queued, slow, ttft, hour, n)

    def cheapest(c: Candidate) -> tuple[float, ...]:
        queued, hour, _, slow, _, n = numbers(c)
        return (queued, hour, slow, n)

    def best_value(c: Candidate) -> tuple[float, ...]:
        queued, hour, less, slow, _, n = numbers(c)
        return (queued, less, hour, slow, n)

    def fewest(c: Candidate) -> tuple[float, ...]:
        queued, hour, _, slow, _, n = numbers(c)
        return (queued, n, hour, slow)

    if objective == "fastest":
        return fastest
    if objective == "best_value":
        return best_value
    return fewest if objective == "balanced" else cheapest


# The 4-bit weight formats a runtime itself loads, as its users name them: the tip names what
# the row's runtime can run (an MLX user converts with mlx_lm.convert -q, not to a GGUF file).
FOUR_BIT_FORMATS = {
    "llama.cpp": "GGUF Q4_K_M",
    "mlx": "MLX 4-bit, mlx_lm.convert -q",
    "vllm": "AWQ/GPTQ",
    "sglang": "AWQ/GPTQ",
    "transformers": "AWQ/GPTQ/bitsandbytes",
    # trtllm-serve runs pre-quantised checkpoints: Model Optimizer's INT4-AWQ export, not an
    # AutoAWQ or GGUF file (deploy._needs says the same on a 4-bit serving row)
    "tensorrt-llm": "INT4-AWQ, a Model Optimizer export",
}
# The graph frameworks load no AWQ, GPTQ or GGUF weights (the service refuses such a format
# under them: "loads in PyTorch runtimes and llama.cpp"), so their rows' tip names where the
# 4-bit weights run instead of promising them in place.
FOUR_BIT_ELSEWHERE = "AWQ/GPTQ under Transformers or vLLM, or GGUF Q4_K_M under llama.cpp; not {}"
# Apple GPUs: Transformers' AWQ and GPTQ kernels have no Metal backend (data/frameworks.yaml
# `transformers-weights:awq`, Hugging Face's quantization overview), so a Mac row under any
# runtime but MLX or llama.cpp names the two that run 4-bit weights there (a 70B-on-a-Mac
# answer had said "AWQ/GPTQ/bitsandbytes", which the engine itself then refused).
FOUR_BIT_ON_MPS = "MLX 4-bit or GGUF Q4_K_M, under mlx-lm or llama.cpp"

# Below this share of a decode step's bytes the weights do not set its pace: 4-bit weights are
# then a memory saving, not a speed-up (Llama 3.1 8B at batch 32 and 8,000 tokens reads 16 GB
# of weights beside ~35 GB of KV cache a step: ~1.3× faster, where "nearly 3.5×" was said).
WEIGHTS_DOMINATE = 0.5
# Below this ratio of the end-to-end gain to generation's own, the tip says both: a long
# prompt's prefill is compute-bound and 4-bit weight-only kernels (W4A16) do not shorten it.
PROMPT_DILUTES = 0.9


def decode_bytes(w: WorkloadSpec, copies: int = 1) -> tuple[float, float] | None:
    """(weights, KV cache) bytes one decode step of the LLM inference ``w`` reads over all its
    GPUs, at generation's mean context (the prompt and half the output): each copy's weights
    once — an MoE's routed experts as far as its share of the batch touches them
    (1 − (1 − k/e)^batch, llm_step.ReplicaJob.weights_read's rule) — and each sequence's KV
    cache once (a paged or preallocated cache; an eager loop's extra copies are not counted).
    An untied input embedding is gathered row by row, not streamed (``input_table_bytes``).
    None where the model has no KV shape."""
    return _decode_bytes(w, copies, untied_input_params(w.model))


def _decode_bytes(w: WorkloadSpec, copies: int, untied: float) -> tuple[float, float] | None:
    """``decode_bytes`` with the model's untied input embedding (``untied_input_params``)
    worked out by the caller, which reads it too (``four_bit_terms``)."""
    m = w.model
    kv = m.kv_values(w.seq_len + w.output_tokens / 2)
    if not kv or not m.params:
        return None
    dense, experts = expert_split(m)
    if experts:
        k, e = m.active_experts or 0, m.experts or 1
        experts *= 1.0 - (1.0 - k / e) ** max(1.0, w.batch_size / max(1, copies))
    read = dense - untied + experts  # the untied table is among the dense parameters
    weights = (w.weight_bytes - _table_bytes(w, untied)) / (m.params - untied) * read
    return weights * max(1, copies), kv * formats.kv_bytes(w.kv_format) * w.batch_size


def untied_input_params(m: ModelSpec) -> float:
    """A decoder's untied input embedding (V·h), the table a step gathers rows of rather than
    reads whole (llm_step.vocabulary_params); 0 where it is tied to the head or unknown."""
    return vocabulary_params(m)[1]


def input_table_bytes(w: WorkloadSpec) -> float:
    """The untied input embedding's stored bytes, the same at any weight format the table is
    kept in (16-bit beside quantised linears; a GGUF file's own mean)."""
    return _table_bytes(w, untied_input_params(w.model))


def _table_bytes(w: WorkloadSpec, untied: float) -> float:
    """``input_table_bytes`` of a table of ``untied`` parameters."""
    return untied * formats.table_value_bytes(w.precision, w.own_bits, format_bits=w.format_bits)


# (the job's weights over their size at 4 bits, ``decode_bytes``, the untied input table's
# bytes over all copies in the job's file and in the 4-bit one: read by neither format's step)
FourBitTerms = tuple[float, tuple[float, float] | None, float, float]


def four_bit_terms(w: WorkloadSpec, copies: int = 1) -> FourBitTerms:
    """What ``four_bit_tip`` reads of the job alone: its weights over their size at 4 bits
    (the job's own bits at int4: what w.with_precision("int4").weight_bytes reads, without
    building a WorkloadSpec per row) and the bytes a decode step reads (``decode_bytes``)."""
    four = formats.weight_bytes(w.model, "int4", w.own_bits, format_bits=w.format_bits)
    k = max(1, copies)
    # the untied table once (a walk of the model's parameters), not once for each term here
    untied = untied_input_params(w.model)
    table4 = untied * formats.table_value_bytes("int4", w.own_bits) * k
    ratio = w.weight_bytes / four if four else 1.0
    return ratio, _decode_bytes(w, copies, untied), _table_bytes(w, untied) * k, table4


class JobTerms:
    """The job terms an answer's tips read (``four_bit_terms``), worked out once for the rows
    that share a job (an answer's rows run one or two: one per precision the cards run) rather
    than once a row (~1 % of the open question). Made per answer and dropped with it; a row's
    job is found by identity, as the rows of one answer share the job objects."""

    def __init__(self) -> None:
        self._four: list[tuple[WorkloadSpec, int, FourBitTerms]] = []

    def four_bit(self, w: WorkloadSpec, copies: int) -> FourBitTerms:
        for x, k, terms in self._four:
            if x is w and k == copies:
                return terms
        terms = four_bit_terms(w, copies)
        self._four.append((w, copies, terms))
        return terms


# How a format's quality entry that holds no figure begins (data/quality.yaml measured: false):
# the tip then says it as it is, not "on the source's own model"
NO_FIGURE = "no published"


def four_bit_quality_format(c: Candidate) -> str:
    """The weight format whose known quality cost the 4-bit tip names (data/quality.yaml's
    key): the GGUF file where the tip names GGUF Q4_K_M first (llama.cpp, a Mac under any
    runtime but MLX), MLX's own 4-bit under MLX, else the W4A16 int4 of AWQ/GPTQ, as a row
    running 4-bit weights says."""
    if c.work.runtime == "mlx":
        return "mlx_4bit"  # the tip names MLX's own 4-bit (FOUR_BIT_FORMATS), not AWQ/GPTQ
    gguf = c.work.runtime == "llama.cpp" or (c.perf.backend == "mps" and c.work.runtime != "mlx")
    return "q4_k_m" if gguf else "int4"


def four_bit_names(runtime: str, backend: str | None) -> str:
    """The 4-bit weight formats a row on ``runtime`` and ``backend`` can run, as its tip and
    the answer's advice name them (``FOUR_BIT_FORMATS``; where else they run, for a graph
    framework's row; MLX or GGUF on a Mac)."""
    if runtime in vocab.GRAPH_FRAMEWORK_RUNTIMES:
        return FOUR_BIT_ELSEWHERE.format(vocab.RUNTIME_NAMES.get(runtime, runtime))
    if backend == "mps" and runtime not in ("mlx", "llama.cpp"):
        return FOUR_BIT_ON_MPS
    return FOUR_BIT_FORMATS.get(runtime, "AWQ/GPTQ/GGUF Q4")


def four_bit_tip(
    c: Candidate, terms: FourBitTerms | None = None, quality: str | None = None
) -> str:
    """What 4-bit weights would buy a 16/32-bit LLM inference row: their size, from the
    engine's own weight bytes (16-bit embeddings and head kept: ~2.8× for Llama 3 8B, not
    3.5×), and a speed-up only where reading the weights sets the decode step's pace
    (bandwidth-bound, weights ≥ WEIGHTS_DOMINATE of the bytes it reads): generation then runs
    (W + KV) ÷ (W ÷ ratio + KV) faster, a ceiling (the step's other parts do not shrink), and
    end to end less where the prompt's prefill, which they do not speed up, is a large part.
    ``quality``: the format's known cost with its source (``four_bit_quality_format``), said
    as the FP8 tip says its own: a 4-bit suggestion had named no quality trade at all."""
    w, p = c.work, c.perf
    names = four_bit_names(w.runtime, p.backend)
    if quality and quality.startswith(NO_FIGURE):
        said = f" Quality: {quality}."  # no figure held: there is no source's model to name
    else:
        said = f" Quality, on the source's own model: {quality}." if quality else ""
    ratio, read, table, table4 = terms if terms is not None else four_bit_terms(w, p.copies)
    head = f"4-bit weights ({names}) are ~{ratio:.1f}× smaller"
    if (p.decode_bottleneck or p.bottleneck) != "memory bandwidth" or read is None:
        return head + "." + said
    weights, kv = read
    share = weights / (weights + kv)
    # the input table is in both formats' files (16-bit in the 4-bit one) and neither step
    # reads it whole
    gen = (weights + kv) / ((weights + table) / ratio - table4 + kv)
    if share < WEIGHTS_DOMINATE:
        return (
            f"{head}, but here the KV cache is {1 - share:.0%} of the bytes each decode step "
            f"reads: generation would run only ~{gen:.1f}× faster{_end_to_end(p, gen)}.{said}"
        )
    # "~2.8× smaller … up to ~3.2× faster" read as a speed-up beyond the bytes saved: the
    # file's ratio counts the input table, which a step gathers rather than reads
    why = (
        " (the files' input embedding is gathered a row a token, not read whole)"
        if table > 0 and round(gen, 1) > round(ratio, 1)
        else ""
    )
    return (
        f"{head}; they are {share:.0%} of the bytes each decode step reads here{why}, so "
        f"generation would run up to ~{gen:.1f}× faster{_end_to_end(p, gen)}.{said}"
    )


def _end_to_end(p: PerfEstimate, gen: float) -> str:
    """' (~1.1× end to end, the prompt's time unchanged)' where generation ``gen`` times
    faster leaves the whole request less than PROMPT_DILUTES of that faster: 4-bit
    weight-only kernels do not shorten the compute-bound prefill; '' otherwise."""
    if p.ttft_ms is None or p.step_time_s <= 0:
        return ""
    prompt = min(p.ttft_ms / 1e3, p.step_time_s)
    whole = p.step_time_s / (prompt + (p.step_time_s - prompt) / gen)
    if whole >= PROMPT_DILUTES * gen:
        return ""
    return f" (~{whole:.1f}× end to end, the prompt's time unchanged)"


def recipe_checkpointing_said(c: Candidate, who: str) -> str:
    """What gradient checkpointing a fine-tuning recipe turned on (the request left it blank)
    costs and buys, on the row's own footing (its GPUs, micro-batch, savers and backend's
    context: the whole batch on one GPU is a job no row runs, and its figures dwarfed the
    memory the answer shows); "" where it saves nothing worth saying. ``who``: "the top pick"
    (an answer's banner) or "this estimate"."""
    run, be = c.work, c.perf.backend or "cuda"
    with_ckpt = memory_breakdown(run, num_gpus=c.n, backend=be).total
    without = memory_breakdown(
        run.with_flags(gradient_checkpointing=False), num_gpus=c.n, backend=be
    ).total
    on, off = c.memory.total, c.memory.total + without - with_ckpt
    if off <= on + 0.05:
        return ""
    where = "on its GPU" if c.n == 1 else f"on each of its {c.n} GPUs"
    more = "half" if run.peft in ("lora", "qlora") else "a third"  # no weight gradients
    return (
        f"Gradient checkpointing is on, as fine-tuning recipes run it: {who} needs "
        f"{gib(on)} GiB {where} instead of {gib(off)} GiB, for about {more} more "
        "compute (turn it off with gradient_checkpointing: false)."
    )


def advice(
    ordered: list[Candidate], requested: WorkloadSpec, *, defaulted_checkpointing: bool
) -> list[str]:
    """Banner lines: what the memory savers behind the answer buy, and what they cost."""
    out: list[str] = []
    if not ordered:
        return out
    top = ordered[0]
    # the recipe's default (fine-tuning), not the saver the engine turned on for a row: that
    # one the savers' line says
    if requested.training and requested.gradient_checkpointing and defaulted_checkpointing:
        said = recipe_checkpointing_said(top, "the top pick")
        if said:
            out.append(said)
    if top.savers:
        asked = requested.with_precision(top.work.precision)
        # in the card's backend's context (an Arc's 0.5 GB, not CUDA's), as the row's own
        plain = memory_breakdown(asked, num_gpus=top.n, backend=top.perf.backend or "cuda").total
        labels = " and ".join(SAVER_LABELS.get(x, x) for x in top.savers)
        cards = (
            f"one {vram(top.available_gb):.0f} GiB {top.gpu.name}"
            if top.n == 1
            else (f"{top.n}× {top.gpu.name} ({vram(top.available_gb):.0f} GiB each)")
        )
        # "as asked" had named a batch the engine assumed, beside a question that gave none
        b = asked.batch_size
        whole = (
            f"for the whole batch of {b:,} at once"
            if b > 1
            else ("without them" if len(top.savers) > 1 else "without it")
        )
        # the plain job is sized sharded over the row's GPUs; a row that runs replicated
        # (plain data parallel at a micro-batch) can need more a GPU than that, and "153.5 GB
        # instead of 93.6 GB" read as the savers costing memory (first-time user's review):
        # said only where the savers are what saves
        if plain > top.memory.total:
            out.append(
                f"With {labels}, {cards} is enough: {gib(top.memory.total)} GiB per GPU "
                f"instead of {gib(plain)} GiB {whole}."
            )
    if top.accumulation_steps > 1 and top.micro_batch is not None:
        out.append(
            f"The batch of {requested.batch_size} runs as {top.accumulation_steps} gradient-"
            f"accumulation steps of {top.micro_batch}"
            + (f" ({_per_gpu_said(top)})" if top.n > 1 else "")
            + ": the same update, smaller kernels."
        )
    if requested.is_llm_inference and top.n > 1 and requested.precision in ("bf16", "fp16"):
        full = memory_breakdown(requested).total
        # only where one card cannot hold the 16-bit model: several GPUs picked for speed (one
        # MI300X holds a 70B) need no fewer-cards remedy (regression hunt)
        if full > usable_gb(top.gpu, requested):
            q4 = memory_breakdown(requested.with_precision("int4")).total
            # the formats the top pick's runtime runs, and the quality cost its row's 4-bit
            # tip names with a source: "AWQ/GPTQ/GGUF Q4 … at some quality cost" had been said to a
            # TensorFlow question and with no figure (an expert audit, forty-first session)
            names = four_bit_names(top.work.runtime, top.perf.backend)
            out.append(
                f"4-bit weights ({names}) would need about {gib(q4)} GiB instead "
                f"of {gib(full)} GiB: fewer cards, at the quality cost the 4-bit tip below "
                "names with its source."
            )
    return out


def _regime(work: WorkloadSpec) -> str:
    """The band regime: the efficiency regime of the step (one split by family), LLM decode
    apart."""
    if work.is_llm_inference and not work.training:
        return "decode"
    return phase_regime(work)


def leans_high(c: Candidate) -> float | None:
    """The low factor of ``c``'s band where the band says the estimate likely overstates the
    speed (bands.LEANS_HIGH: a vendor's convolution library the calibration set never
    measured, priced at the GEMM rate, none of its own costs charged), else None. Only a
    convolution regime's row of a vendor with such a reason, whose network convolves, can say
    so: checked first, so the other rows read no band."""
    if c.serving is not None or c.gpu.vendor not in bands.CONV_LEAN_VENDORS:
        return None
    if _regime(c.work) not in bands.CONV_REGIMES or not c.work.model.conv_layers:
        # the "train" regime holds BERT, T5 and ViT training too, and "infer-diffusion"
        # FLUX.1's DiT, whose time is GEMMs and attention: their band names the GEMM library
        # and no lean (bands.BandInputs.convolutions)
        return None
    low, _, basis = uncertainty(c)
    return low if bands.LEANS_HIGH in basis else None


def ranked_share(c: Candidate) -> float:
    """The share of ``c``'s estimate it is ranked on under every objective, its work per
    dollar and its cost to finish alike: 1, or the low factor of a band that says the estimate
    likely overstates the speed (``leans_high``). The engine knows the direction of such a
    row's error and not its size (RDNA 4's MIOpen convolutions were timed an order of
    magnitude slow, ROCm/rocm-libraries#2567; MI300X's slower than H100's on the same shapes,
    ROCm/MIOpen#3865), so it ranks it on the figure its band bounds it by. Balanced did so
    first (a student's first CNN card under $500 had been an RX 9070 whose own verdict said
    its 849 images/s was likely overstated, ahead of an RTX 3080 Ti on cuDNN at 717); best
    value and cheapest compare the same work per dollar and cost to finish, which an
    overstated speed overstates and understates by as much, and 'fastest' asks which card
    finishes first, which an estimate the engine itself says is too high cannot answer. The
    row shows its estimate and range either way, and says what it is ranked on."""
    low = leans_high(c)
    return 1.0 if low is None else low


def ranked_figures(c: Candidate) -> tuple[float, float | None, float | None]:
    """(speed, work per dollar, price) a row that is not a serving shape is ranked on
    (``columns``): its estimate's, or at a band's low end (``ranked_share``): the speed and
    the work per dollar × the share, the job's cost at that speed (costs.job_cost_at), else
    the upfront price, which the speed does not move."""
    share = ranked_share(c)
    acq = c.acquisition
    v = costs.value(c.cost, acq)
    if share == 1.0:  # nearly every row: its estimate's, as the columns had read it
        price = costs.job_cost(c.cost, acq)
        return c.perf.throughput, v, costs.upfront(c.cost, acq) if price is None else price
    price = costs.job_cost_at(c.cost, acq, share)
    if price is None:
        price = costs.upfront(c.cost, acq)
    return c.perf.throughput * share, (v if v is None else v * share), price


def ranked_metric(
    c: Candidate, objective: str, speed_weight: float = DEFAULT_SPEED_WEIGHT
) -> float | None:
    """``metric`` of a row as ``rank`` orders it (``columns``: ``ranked_figures``; a serving
    shape's ``metric``), larger better: what the service's bounded answers compare a card's
    bound against."""
    if c.serving is not None:
        return metric(c, objective, speed_weight)
    speed, value, price = ranked_figures(c)
    if objective == "fastest":
        return speed
    if objective == "best_value":
        return value
    if objective == "balanced":
        return speed if value is None else balanced(speed, value, speed_weight)
    return 1.0 / price if price else None


def uncertainty(c: Candidate) -> tuple[float, float, str]:
    """(low factor, high factor, basis): the calibrated band widened where the row
    extrapolates."""
    return row_band(c.gpu, c.work, c.perf, c.derived_peak)


def row_band(
    gpu: GpuSpec,
    work: WorkloadSpec,
    est: PerfEstimate,
    derived_peak: bool,
) -> tuple[float, float, str]:
    """uncertainty of the row that prices ``work`` on ``gpu`` as ``est``: the band a
    recommendation row draws on its throughput (benchmarks/accuracy.py scores the held-out
    set's bands as the app answers through it)."""
    return bands.band_of(_row_band_key(gpu, work, est, derived_peak), work.efficiency)


def first_token_uncertainty(c: Candidate) -> tuple[float, float, str] | None:
    """The band on the prefill rate behind an LLM inference row's time to first token (None
    for any other row): bands.time_band turns it into the row's band on that time."""
    return first_token_band(c.gpu, c.work, c.perf, c.derived_peak)


def row_bands(
    c: Candidate,
) -> tuple[tuple[float, float, str], tuple[float, float, str] | None]:
    """(``uncertainty``, ``first_token_uncertainty``) of a row at once: the two bands' inputs
    differ only in the regime and the precision class it reads (``_row_band_key``), so the
    rest is worked out once, not once per band (issue 21)."""
    work, est = c.work, c.perf
    key = _row_band_key(c.gpu, work, est, c.derived_peak)
    band = bands.band_of(key, work.efficiency)
    if key[0] != "decode" or est.ttft_ms is None:
        return band, None
    _, vendor, arch, runtime, source, on, experts, four, derived, n, kind, span, _, conv = key
    bits = work.precision if ("prefill", runtime) in bands.PRECISION_BANDS else ""
    prefill: bands.BandKey = (
        "prefill", vendor, arch, runtime, source, on, experts, four, derived, n, kind, span, bits,
        conv,
    )  # fmt: skip
    return band, bands.band_of(prefill, work.efficiency)


def first_token_band(
    gpu: GpuSpec,
    work: WorkloadSpec,
    est: PerfEstimate,
    derived_peak: bool,
) -> tuple[float, float, str] | None:
    """(low factor, high factor, basis) on the prefill rate (prompt tokens ÷ time to first
    token) of the row that prices the LLM inference ``work`` on ``gpu`` as ``est``: row_band's
    inputs and widenings in the calibrated ``prefill`` regime. Factors on the rate, as every
    band's: the time's band is bands.time_band (benchmarks/accuracy.py scores the held-out
    prompt-rate and first-token rows against it, a latency inverted). None where the row has
    no time to first token."""
    if _regime(work) != "decode" or est.ttft_ms is None:
        return None
    return bands.band_of(_row_band_key(gpu, work, est, derived_peak, "prefill"), work.efficiency)


def band_inputs(c: Candidate) -> bands.BandInputs:
    return row_band_inputs(c.gpu, c.work, c.perf, c.derived_peak)


def row_band_inputs(
    gpu: GpuSpec,
    work: WorkloadSpec,
    est: PerfEstimate,
    derived_peak: bool,
    regime: str | None = None,
) -> bands.BandInputs:
    """``regime``: the band's regime where it is not the row's own (the prefill band)."""
    return bands.BandInputs(*_row_band_key(gpu, work, est, derived_peak, regime))


def _row_band_key(
    gpu: GpuSpec,
    work: WorkloadSpec,
    est: PerfEstimate,
    derived_peak: bool,
    regime: str | None = None,
) -> bands.BandKey:
    """``row_band_inputs`` as bands.band_of's tuple, in BandInputs' field order."""
    regime = _regime(work) if regime is None else regime
    # llama.cpp's Vulkan build is its own band cell: its scoreboard calibrates no band
    # (benchmarks/accuracy.py BAND_BACKENDS_NOT_DRAWN), so the row takes its regime's band
    # widened as an unmeasured runtime's (bands.widenings), not the CUDA/HIP/Metal cell
    runtime = LLAMACPP_VULKAN_RUNTIME if work.gpu_backend == "vulkan" else work.runtime
    return (
        regime,
        gpu.vendor,
        gpu.architecture,
        runtime,
        est.efficiency_source,
        est.measured_on,
        bool(work.model.experts),
        is_four_bit(work),
        derived_peak,
        # Candidate.n; of copies side by side, one copy's: nothing crosses between them
        est.num_gpus // est.copies,
        # a fine-tuning job's band is its kind's where calibrated (LoRA, QLoRA, full)
        bands.FINE_TUNING if work.task == "fine-tuning" else "",
        replica_span(gpu, work, est),
        # the precision where the tuning sets split its runtime's band by its class; elsewhere
        # the band does not read it, and keying it would keep one band per precision
        work.precision if (regime, runtime) in bands.PRECISION_BANDS else "",
        # what a convolution regime's vendor reason names: the convolution library, or the GEMMs
        # and attention of a network without convolutions (BERT training, FLUX.1's DiT)
        work.model.conv_layers,
    )


def serving_band_inputs(
    gpu: GpuSpec,
    config: ServingConfig,
    runtime: RuntimeProfile,
    regime: str = "serving",
    *,
    model: ModelSpec,
) -> bands.BandInputs:
    """A serving shape's band inputs, keyed as an LLM inference row's (row_band_inputs): on
    the runtime's priors, one replica's GPUs and how the runtime spans them (``multi_gpu``,
    its decode row's ``span``: a llama.cpp layer split is widened where the regime's
    multi-GPU rows are all tensor parallel); ``regime`` "prefill" for its first-token band.
    ``model``'s experts and the replica's 4-bit weights (int4, fp4) flag the MoE and 4-bit
    extrapolations as an LLM inference row's are flagged: the serving band is fitted on the
    tuning sets' dense, standard-format rows alone, their MoE and fp4 results held out of it
    as units of those terms (benchmarks/accuracy.py bands_of, _flags), so a row of either kind
    is outside what the base band measured and carries that term, as the calibration scored
    it. Without them an MoE serving row took the dense band (2026-12-07, bw)."""
    n = max(1, config.gpus_per_replica)
    return bands.BandInputs(
        regime=regime,
        vendor=gpu.vendor,
        architecture=gpu.architecture,
        runtime=runtime.name,
        efficiency_source="prior",
        moe=bool(model.experts),
        four_bit=config.weight_precision in FOUR_BIT_PRECISIONS,
        num_gpus=n,
        span=runtime.multi_gpu if n > 1 else "",
    )


def replica_span(gpu: GpuSpec, work: WorkloadSpec, est: PerfEstimate) -> str:
    """How one replica of an LLM inference row spans its GPUs: its runtime's ``span``
    (data/efficiency.yaml: tensor, layers); "" on one GPU (a copy of one, under copies) and
    for any other row."""
    if est.num_gpus // est.copies <= 1 or not work.is_llm_inference:
        return ""
    return profile_for(gpu, work, est.backend, "decode").span


def is_four_bit(work: WorkloadSpec) -> bool:
    """4-bit weights or math: int4/fp4 precision, or a weight format under 5 bits per weight
    (GGUF Q4_K_M, AWQ, GPTQ, NVFP4)."""
    bits = work.weight_bits if work.quantization != "none" else None
    return work.precision in FOUR_BIT_PRECISIONS or (bits is not None and bits < 5.0)


def _fmt(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _rate(x: float) -> str:
    """A throughput in the row's words: as ``_fmt`` from 1 up, three significant figures
    below it by the summary's rule (sig_figs: 0.029, not "0.0290"), as the verdict and the
    table give it. Two decimals had read an M4 Max's SDXL 0.0293 images/s as "0.03" beside the
    table's 0.0293, and an M2's 0.0057 as "0.01", an M4 Pro's figure."""
    if x >= 1 or x <= 0:
        return _fmt(x)
    return sig_figs(x)


def significant(value: float) -> str:
    """Three significant figures, whole from 1,000 (1,234; 45.6; 7.78; 0.123): how a row's
    memory and the verdict's read, so "6.6 GB of 7.78 GB" in one is not "of 8 GB" in the
    other (app/recommend/summary.py uses it too). The pages' and the CLI's rule
    (figures.sig_figs): rounding 1,639 to 1,640 here had put "runs 1,640 images/s" in the
    summary above a row and a table of 1,639."""
    return sig_figs(value)


# The objective an estimate of one named configuration passes (POST /api/v1/estimate): with
# nothing ranked its words say no rank ("Ranked first by fastest." had read as a contest).
UNRANKED = ""


def _assumes_said(runtime: str, backend: str, quantization: str) -> str:
    """The runtime line in the forms' words: "Assumes the pytorch runtime on cuda" had read
    as identifiers to a new user (the ids stay in the row's fields)."""
    on = vocab.backend_name(backend, runtime) if backend else ""
    # the runtime's short name: the form's label ("PyTorch compiled (torch.compile default
    # mode; LLM inference: CUDA graphs)") had made the line a paragraph
    return (
        f"Assumes {vocab.runtime_name(runtime)}"
        + (f" on {on}" if on else "")
        + (
            f", {QUANTIZATION_LABELS.get(quantization, quantization)} weights"
            if quantization != "none"
            else ""
        )
        + "."
    )


def explain(c: Candidate, position: int, leader: Candidate, objective: str) -> list[str]:
    g, p = c.gpu, c.perf
    per = "per GPU" if c.n > 1 else ""
    scale, unit = shown_rate(c.work, p.unit)
    # a unified-memory machine's GPU gets the share macOS wires, not the whole: "16.6 GB of
    # 72 GB" on a 96 GB Mac says where the other 24 GB went
    share = (
        f" (the ~{wired_share(g):.0%} of its {g.memory_gb:g} GiB unified memory "
        f"{'macOS' if g.vendor == 'apple' else 'the OS'} lets the GPU use)"
        if unified(g) and g.memory_gb
        else ""
    )
    lines = [
        # the usable memory (evaluate.usable_gb: CUDA's visible share less the runtime's
        # context) as the verdict gives it, not the label rounded: 6.6 + 1.18 spare = 7.78
        f"Fits on {c.n}× {g.name}: needs {gib(c.memory.total)} GiB of "
        f"{significant(vram(c.available_gb))} GiB{share}{' ' + per if per else ''}"
        f"{_savers_said(c)}{_recompute_said(c)}.",
        f"Expected {_rate(p.throughput * scale)} {unit}{_end_to_end_said(c)} at "
        f"{c.work.precision} "
        f"({p.compute_precision} math), limited by {p.bottleneck}{_host_said(c)}"
        + (
            f" (generation alone by {p.decode_bottleneck})"
            if p.decode_bottleneck and p.decode_bottleneck != p.bottleneck
            else ""
        )
        + ".",
        # one named configuration's answer (POST /api/v1/estimate): a ranked row carries the
        # same figures in its fields, and the answer page had no room for a line a row
        *(_llm_latency_said(c) if objective == UNRANKED else []),
        _assumes_said(p.runtime, p.backend, c.work.quantization),
    ]
    if p.copies > 1:
        each = c.n // p.copies
        lk = topology.link(g, min(each, topology.NODE_GPUS))
        linked = "" if each == 1 else f", each copy's GPUs linked by {lk.label}"
        lines.append(
            f"Runs as {p.parallelism}{linked}; nothing crosses between copies: "
            f"{p.scaling_efficiency:.0%} scaling efficiency."
        )
    elif c.n > 1 and replica_span(g, c.work, p) == "layers":
        lines.append(_layer_split_said(c))
    elif c.n > 1:
        lk = topology.link(g, min(c.n, topology.NODE_GPUS) if c.work.is_llm_inference else c.n)
        nodes = topology.nodes(g, c.n)
        how = f" as {_layout_said(p.parallelism, c.work.runtime, nodes)}" if p.parallelism else ""
        if nodes > 1 and not c.work.is_llm_inference:
            # one server's GPUs (a 4-APU MI300A node's 4: its 8 had read as the network)
            inside = topology.link(g, topology.node_size(g))
            linked = (
                f"{nodes} servers, each linked inside by {inside.label} (~{inside.gbs:,.0f} GB/s"
                f" per GPU for collectives) and to the others by {topology.network(g).label}"
            )
        else:
            linked = f"linked by {lk.label} (~{lk.gbs:,.0f} GB/s per GPU for collectives)"
        lines.append(
            f"Split over {c.n} GPUs{how}{_batch_share_said(c)}, {linked}: "
            f"{p.scaling_efficiency:.0%} scaling efficiency."
        )
    ranked = objective != UNRANKED
    late = ranked and position > 1 and objective != "fastest" and host_unpriced(c)
    # said where it would lead: "Ranked #2: speed 1.00 and value 1.00 of the best" had stood
    # under a row faster than the pick with no word of why it was below
    late_said = late and _host_alone_behind(c, leader)
    if ranked:
        name = objective.replace("_", " ")
        why = f", below #1 because its price leaves out {_host_late_said(c)}"
        lines.append(
            f"Ranked first by {name}."
            if position == 1
            else f"Ranked #{position} by {name}{why if late_said else ''}: "
            + _versus(c, leader, objective)
        )
        low = leans_high(c)
        said = None if low is None else _low_end_said(c, low, objective)
        if said is not None:
            lines.append(said)
    be = c.cost.break_even_hours
    if be is not None:
        lines.append(costs.break_even_said(be))
    periods = _buy_periods_said(c)
    if periods:
        lines.append(periods)
    if c.meets_latency is False:
        lines.append(
            "Misses the latency target"
            + (", so it is listed after every GPU that meets it." if ranked else ".")
        )
    if c.framework_status == "experimental":
        lines.append(
            "Its software support for this job is experimental (see the warnings)"
            + (", so it is listed after every GPU where it is supported." if ranked else ".")
        )
    if late and not late_said:
        lines.append(f"Its price leaves out {_host_late_said(c)}.")
    return lines


def _host_late_said(c: Candidate) -> str:
    return (
        f"the host {f'its {c.n} GPUs need' if c.n > 1 else 'it needs'} (see the warnings), "
        "so it is listed after every option priced whole"
    )


def _host_alone_behind(c: Candidate, lead: Candidate) -> bool:
    """Whether the host left out of ``c``'s price is all that puts it below ``lead``: it
    scores higher and is in the lead's class of ``ranking.rank_columns``'s order but for that."""
    return (
        c.score > lead.score
        and not host_unpriced(lead)
        and (c.meets_latency is False) == (lead.meets_latency is False)
        and (c.framework_status == "experimental") == (lead.framework_status == "experimental")
    )


def _end_to_end_said(c: Candidate) -> str:
    """' end to end' after an LLM inference row's rate, which is the whole request's (prompt
    and generation together, as the verdict says of it: summary._generating): "Expected 16.0
    tokens/s" for 70B Q4_K_M on two RTX 3090s had read as the decode speed llama-bench's tg
    reports (18.3 here; issue 23, 2026-12-06). The decode rate is the row's own field
    (ms_per_output_token, on the page "then 54.7 ms per token"; an estimate's next line,
    ``_llm_latency_said``), so two words, not a second figure: the largest answer page is
    within a few hundred bytes of its weight budget. Empty for any other job, or where the
    estimate has no first-token or per-token time."""
    p, w = c.perf, c.work
    if not w.is_llm_inference or not p.ttft_ms or not p.ms_per_token or not w.seq_len:
        return ""
    return " end to end"


def _llm_latency_said(c: Candidate) -> list[str]:
    """An LLM inference estimate's prompt and decode apart, as llama-bench's pp and tg and
    every serving answer give them: the "Expected" rate is the whole request's (prompt and
    generation together), which had left "how fast does it decode?" unanswered. [] for any
    other job, or where the estimate has no first-token or per-token time."""
    p, w = c.perf, c.work
    if not w.is_llm_inference or not p.ttft_ms or not p.ms_per_token or not w.seq_len:
        return []
    prompt = w.seq_len * max(1, w.batch_size)
    prompts = (
        f"the {prompt:,}-token prompt"
        if w.batch_size <= 1
        else f"{w.batch_size} prompts of {w.seq_len:,} tokens"
    )
    each = " per sequence" if w.batch_size > 1 else ""
    return [
        f"First token after ~{significant(p.ttft_ms)} ms ({prompts}: "
        f"~{significant(prompt / p.ttft_ms * 1e3)} tokens/s), then one every "
        f"~{significant(p.ms_per_token)} ms (~{significant(1e3 / p.ms_per_token)} "
        f"tokens/s{each})."
    ]


def _years(years: float) -> str:
    return f"{years:g} year{'s' if years != 1 else ''}"


def _buy_periods_said(c: Candidate) -> str:
    """Which period and resale the row's two bought figures count, where it shows both: the
    job's cost to buy (cost.buy.job_usd: the whole purchase plus energy for the job's own
    hours, nothing resold) and the buy-versus-rent verdict (the purchase less its resale, plus
    energy, over hours_per_week × 52 × years). $1.08M and $0.53M for the same cards had sat
    side by side with no word of why."""
    pricing, cost = c.pricing, c.cost
    if pricing is None or pricing.rent is None or pricing.purchase_usd is None:
        return ""
    job, hours = cost.buy_to_finish_usd, cost.time_to_finish_h
    if job is None or hours is None:
        return ""
    u = pricing.usage
    # nothing resold, the verdict counts the same whole purchase: only its energy's hours
    # differ, said once (the page's weight: five rented rows of a LoRA answer said it twice)
    resale = (
        f"counts the purchase less its {u.resale_fraction:.0%} resale plus energy"
        if u.resale_fraction > 0
        else "counts the same purchase plus energy"
    )
    # a job longer than those hours is the row's warning (cost.outlasts_horizon), not said here
    return (
        f"To buy, the job costs ${job:,.0f}: the whole purchase plus energy for its "
        f"{hours_text(hours)}, nothing resold; the buy-versus-rent verdict {resale} over "
        f"{u.hours:,.0f} h of use ({u.hours_per_week:g} h a week for {_years(u.years)})."
    )


# TensorFlow replicates a model over GPUs with tf.distribute's MirroredStrategy on one server
# and MultiWorkerMirroredStrategy across several (tensorflow.org/guide/distributed_training),
# not PyTorch's DistributedDataParallel: a TensorFlow row had read "data parallel (DDP)"
_DDP = "data parallel (DDP)"
_TF_STRATEGY = ("MirroredStrategy", "MultiWorkerMirroredStrategy")


# JAX replicates parameters and shards the batch over a device mesh (jax.sharding: jit with a
# NamedSharding, or the older pmap) and averages gradients with a collective all-reduce
# (docs.jax.dev "Distributed arrays and automatic parallelization"): a JAX row had read
# "data parallel (DDP)", PyTorch's class, too
_JAX_DP = (
    "data parallel (the batch sharded over a jax.sharding mesh, priced as DDP's gradient "
    "all-reduce)"
)


def _layout_said(parallelism: str, runtime: str, nodes: int) -> str:
    """The layout as the row's framework names it: a TensorFlow row's data parallelism is a
    tf.distribute strategy, a JAX row's a sharded batch, each priced by the same model of an
    all-reduce of every gradient."""
    if parallelism != _DDP:
        return parallelism
    if runtime == "jax":
        return _JAX_DP
    if not runtime.startswith("tensorflow"):
        return parallelism
    strategy = _TF_STRATEGY[nodes > 1]
    return f"data parallel (tf.distribute.{strategy}, priced as DDP's gradient all-reduce)"


def _layer_split_said(c: Candidate) -> str:
    """A layer split (llama.cpp --split-mode layer, Transformers' device_map): one token at a
    time passes through each card's layers in turn, so the cards take turns rather than share
    the work; its "scaling efficiency" (56 % on 2 cards) read as a loss a user could avoid.
    The speed against one card is the row's own: efficiency × cards (single ÷ time), the whole
    request's. Decoding stays at about one card's (llm_step.span); a factor above 1 is the
    prompt's, whose micro-batches llama.cpp pipelines through the cards (llm_step's passes),
    and is said as that: "1.15× one RTX 3080 Ti" beside "one card's speed" had read as
    decoding's."""
    n, p = c.n, c.perf
    x = p.scaling_efficiency * n
    one = f"{x:.2f}× one {c.gpu.name}, were one to hold the model"
    if round(x, 2) <= 1.0:  # shown as 1.00× or less: no prompt speed-up to tell apart
        return (
            f"Split by layers over {n} GPUs: the cards take turns on each token, so it runs at "
            f"about one card's speed ({one}) with {n}× the memory."
        )
    return (
        f"Split by layers over {n} GPUs: the cards take turns on each token, so decoding runs "
        f"at about one card's speed, with {n}× the memory; end to end {one}, as the prompt's "
        "chunks pipeline through the cards."
    )


def _host_said(c: Candidate) -> str:
    """Why a host-bound decode is host-bound though its timing shows more memory time than
    overhead: the host's dispatch sets each decode step's time and the GPU's own work, shorter,
    waits on it (timing.overhead_s counts only the host's excess over that work)."""
    p = c.perf
    if p.bottleneck != "host overhead" or not c.work.is_llm_inference or not p.ms_per_token:
        return ""
    return (
        f": the host takes ~{p.ms_per_token:.1f} ms to dispatch each decode step, longer than "
        "the GPU's own work on it, which waits"
    )


def per_gpu_micro_batch(c: Candidate) -> int | None:
    """What each of the row's GPUs runs of its micro-batch (the busiest one's share): the
    figure a per-device setting takes (Hugging Face's per_device_train_batch_size)."""
    return None if c.micro_batch is None else -(-c.micro_batch // max(1, c.n))


def _per_gpu_batch(c: Candidate) -> int:
    """What each GPU runs in one pass: its micro-batch, else its share of the batch."""
    return per_gpu_micro_batch(c) or -(-c.work.batch_size // max(1, c.n))


def _per_gpu_said(c: Candidate) -> str:
    """'', or on several GPUs '1 per GPU': a micro-batch read as per device would be set n
    times too large. Under a stated Megatron layout the GPUs of one replica (TP × PP × CP) work
    on the same samples: the share is per data-parallel replica, as Megatron's
    --micro-batch-size counts it."""
    if c.n <= 1:
        return ""
    lay = getattr(c.work, "megatron", None)
    per = lay.model_parallel if lay is not None and c.work.runtime == "megatron" else 1
    if per > 1 and c.micro_batch is not None and c.n % per == 0:
        replicas = c.n // per
        each = -(-c.micro_batch // replicas)
        return f"{each} per data-parallel replica of {per} GPUs"
    return f"{per_gpu_micro_batch(c)} per GPU"


def _savers_said(c: Candidate) -> str:
    """The memory savers the fit rests on, which the question did not ask for: a row's memory
    and speed are those of the job as it runs with them (8-bit optimiser state is a format the
    user did not choose), so the row names them where it gives the memory."""
    said = [SAVER_LABELS.get(x, x) for x in c.savers if x != "micro_batch"]
    if c.micro_batch is not None and c.accumulation_steps > 1:
        each = f"{_per_gpu_said(c)}; " if c.n > 1 else ""
        said.append(
            f"micro-batches of {c.micro_batch} ({each}{c.accumulation_steps} gradient-"
            "accumulation steps per batch)"
        )
    if not said:
        return ""
    return f", with memory savers the engine added: {' and '.join(said)}"


def _recompute_pct(w: WorkloadSpec) -> int:
    """Activation checkpointing's extra compute, in %: one more forward a step, a third more
    on a full step (forward + backward ≈ 3 forwards), half more under (Q)LoRA (no weight
    gradients: ≈ 2) — the rule the gradient_checkpointing field's description states."""
    return round(100 / (2 if w.peft in ("lora", "qlora") else 3))


def _recompute_said(c: Candidate) -> str:
    """'; priced with full activation recomputation (~33 % more compute; …)': a training row
    run with activation checkpointing (asked, the recipe's default, or a saver the engine
    added) pays one more forward pass a step (perf: the recomputed forward), which its words
    never said. A third more on a full step (forward + backward ≈ 3 forwards), half more on a
    LoRA step (no weight gradients: ≈ 2). Megatron's selective recomputation (attention's core
    only) cuts over 90 % of that overhead: Korthikanti et al. 2022, arXiv 2205.05198."""
    w = c.work
    if not w.training or not w.gradient_checkpointing:
        return ""
    return (
        f"; priced with full activation recomputation (~{_recompute_pct(w)} % more compute; "
        "selective costs far less, Korthikanti et al. 2022)"
    )


def _low_end_said(c: Candidate, low: float, objective: str) -> str | None:
    """'Ranked on the low end of its likely range (347 images/s, …), not on its estimate …' of
    a row ranked on its band's low end (``ranked_share``), with the figure its objective
    compares there: the work per dollar (best value), the cost to finish (cheapest). None
    under 'cheapest' where the job has no length: the price it is ranked on is the card's,
    which no speed moves."""
    scale, unit = shown_rate(c.work, c.perf.unit)
    at = f"{_rate(c.perf.throughput * low * scale)} {unit}"
    if objective == "cheapest":
        cost = costs.job_cost_at(c.cost, c.acquisition, low)
        if cost is None or c.cost.time_to_finish_h is None:
            return None
        at += f", ${_fmt(cost)} to finish"
    elif objective == "best_value":
        v = costs.value(c.cost, c.acquisition)
        if v is not None:
            at += f", {per_dollar(c.work, v * low)}"
    return (
        f"Ranked on the low end of its likely range ({at}), not on its estimate: the engine "
        "prices this vendor's convolutions at the GEMM rate and says the estimate likely "
        "overstates them."
    )


def _versus(c: Candidate, lead: Candidate, objective: str) -> str:
    if objective not in ("fastest", "cheapest", "best_value"):
        # balanced: the scores alone (the figures below are the other objectives' words)
        return _scores_said(c, lead)
    acquisition = c.acquisition
    # the figures each is ranked on (``ranked_figures``): a lead whose band leans high is
    # compared at its range's low end, and says so
    speed, v, mine = ranked_figures(c)
    lead_speed, lv, theirs = ranked_figures(lead)
    name = lead.gpu.name + (" at its range's low end" if ranked_share(lead) != 1.0 else "")
    # and this row's own, where it is ranked there: "0.42× the throughput" under an estimate
    # above the lead's had read as a contradiction
    own = "at its range's low end, " if ranked_share(c) != 1.0 else ""
    ratio = speed / lead_speed if lead_speed else 0.0
    if objective == "fastest":
        return f"{own}{ratio:.2f}× the throughput of {name}."
    if objective == "cheapest":
        if mine is not None and theirs is not None:
            return f"{own}${_fmt(mine)} against ${_fmt(theirs)} for {name}."
        return f"costs more than {name}."
    if objective == "best_value" and v is not None:
        if lv is not None:
            lead_said = per_dollar(c.work, lv, "short")
            return f"{own}{per_dollar(c.work, v)} against {lead_said} for {name}."
        # the lead is priced only another way (bought where this one is rented, or so)
        return (
            f"{per_dollar(c.work, v)} {_ACQUIRED[acquisition]}; {lead.gpu.name} has no "
            "such price to compare."
        )
    return _scores_said(c, lead)


def _scores_said(c: Candidate, lead: Candidate) -> str:
    """A row's speed and value scores against the lead's (balanced, and best value where
    this row has no work per dollar)."""
    figures = (c.speed_score, c.value_score or 0.0, lead.speed_score, lead.value_score or 0.0)
    speed_said, value_said, lead_speed_said, lead_value_said = _scores_apart(figures)
    return (
        f"speed {speed_said} and value {value_said} of the best, against {_lead_name(lead)} "
        f"({lead_speed_said} and {lead_value_said}){_lead_build(c, lead)}."
    )


def _scores_apart(scores: tuple[float, ...]) -> tuple[str, ...]:
    """Scores (fractions of the best) to two places, or as many more (up to four) as keep
    any two that differ, or one short of the best, from reading as equal: 0.996 had read as
    1.00, a tie with the best."""
    told = (*scores, 1.0)
    # the figures apart to six places, counted once, not on every try (round with digits is a
    # correctly rounded decimal conversion: ~0.1 M instructions of the open question's rows,
    # issue 21)
    apart = len({round(x, 6) for x in told})
    for write in _PLACES:
        said = list(map(write, told))
        if len(set(said)) == apart:
            break
    return tuple(said[:-1])


# "{:.2f}", "{:.3f}", "{:.4f}" as callables: the f-string's nested spec was built each time
_PLACES = tuple(f"{{:.{places}f}}".format for places in (2, 3, 4))


def _lead_name(lead: Candidate) -> str:
    """The row a lower one is weighed against, with its count: 'against AMD Radeon RX 9070 XT'
    had stood under one RTX 4090 where the pick was two of them."""
    return f"{lead.n} × {lead.gpu.name}" if lead.n > 1 else lead.gpu.name


def _lead_build(c: Candidate, lead: Candidate) -> str:
    """Where one bought card ranks below a bought desktop pair of PCIe cards: what the pair's
    price, the cards alone, leaves out beyond what this card's does (the second CPU-connected
    slot and the larger supply, ``_lanes_said``/``_supply_said``), so the reader weighs the
    whole build."""
    if c.n != 1 or lead.n != 2 or lead.gpu.segment not in ("consumer", "workstation"):
        return ""
    if c.acquisition == "rent" or lead.acquisition == "rent":
        return ""
    if c.cost.purchase_usd is None or lead.cost.purchase_usd is None:
        return ""
    if not (lead.gpu.tdp_w and c.gpu.tdp_w):
        return ""
    theirs, mine = supply_w(lead.gpu.tdp_w, 2), supply_w(c.gpu.tdp_w, 1)
    return (
        f", whose price is its 2 cards alone, as this one's is the card: the pair also needs "
        f"a board with two CPU-connected slots (x8/x8) and ≥{theirs:,.0f} W of supply against "
        f"≥{mine:,.0f} W for this card, neither priced"
    )


_ACQUIRED = {"rent": "rented", "buy": "bought", "either": "rented or bought"}


def per_dollar(w: WorkloadSpec, value: float, form: str = "long") -> str:
    """Best value's figure (``costs.value``: the row's throughput unit per dollar) in the
    reader's terms: an LLM's generation as dollars per million output tokens (a "sample" of
    it is a whole prompt and its answer, which nobody prices); an image model's samples as
    images; a speech model's as hours of audio (its 30-s windows); a language model's
    training as tokens (the rows' tokens/s); else samples. ``form`` "short": the figure of a
    second row, its unit already said ("$2.92" after "$3.39 per million output tokens")."""
    if w.is_llm_inference:
        usd = f"${_fmt(1e6 / value)}" if value > 0 else "no price"
        return usd if form == "short" else f"{usd} per million output tokens"
    m = w.model
    if m.family == "encoder-decoder" and m.input_size and not w.training:
        figure, unit = value * float(m.input_size) / 3600.0, "hours of audio"
    else:
        scale, shown = shown_rate(w, "samples/s")
        figure, unit = value * scale, shown.removesuffix("/s")
    return _fmt(figure) if form == "short" else f"{_fmt(figure)} {unit} per dollar"


# The runtimes that replay a decode step as a graph, by their rule names (data/frameworks.yaml
# runtime:<name>) and as a tip names them
GRAPH_RUNTIMES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "tensorrt-llm": "TensorRT-LLM",
    "torch-compile": "torch.compile",
}


def graph_runtimes_on(gpu: GpuSpec, backend: str | None, rules: compat.Rules) -> frozenset[str]:
    """The GRAPH_RUNTIMES the rules do not rule out on this card and backend (kept with the
    rules: the same question of each host-bound row in every request)."""
    key = ("graph runtimes", gpu, backend)
    hit: frozenset[str] | None = rules._memo.get(key)
    if hit is None:
        hit = frozenset(
            k
            for k in GRAPH_RUNTIMES
            if (st := compat.runtime_status(gpu, k, rules, backend)) is None
            or st.status != "unsupported"
        )
        compat.remember(rules, key, hit)
    return hit


def tips(
    c: Candidate,
    requested: WorkloadSpec,
    rules: compat.Rules | None = None,
    jobs: JobTerms | None = None,
    four_bit_cost: str | None = None,
) -> list[str]:
    """The row's tips. ``rules``: which GRAPH_RUNTIMES run on the row's card, asked only of a
    host-bound row (None names them all, as on a card the rules do not list), and whether ROCm
    PyTorch on Windows is a preview there (``windows_note``; None: no note). ``jobs``: the
    answer's job terms, shared by its rows (None: this row's worked out for it).
    ``four_bit_cost``: the known quality cost of the 4-bit format its tip names, with its
    source (``four_bit_quality_format``; None: the tip names none)."""
    w, g, p, m = c.work, c.gpu, c.perf, c.memory
    host_bound = p.bottleneck == "host overhead"
    runs = graph_runtimes_on(g, p.backend, rules) if host_bound and rules is not None else None
    out: list[str] = []
    half = g.peak_tflops("bf16") or g.peak_tflops("fp16")
    if w.training and w.precision == "fp32" and half and g.fp32_tflops and half > g.fp32_tflops:
        out.append(
            f"Train with mixed precision (torch.autocast bf16/fp16): this GPU's 16-bit tensor "
            f"peak is {half / g.fp32_tflops:.0f}× its fp32 rate and activations halve."
        )
    if host_bound:
        out.append(_host_tip(w, p.backend, runs))
    if p.bottleneck == "kernel launches":
        out.append(
            "Each step is a few short kernels per layer and their gaps, not math or bytes: a "
            "larger batch (more requests at once) uses the same kernels for more tokens, and "
            "fewer GPUs per replica give each kernel more work."
        )
    if p.bottleneck == "host transfer":
        out.append(
            "Input copies limit speed: use DataLoader(pin_memory=True, num_workers>0) and "
            ".to(device, non_blocking=True), or decode data on the GPU."
        )
    free = c.available_gb - m.total
    if _tight(c):
        out.append(f"Only {gib(free)} GiB headroom: {_tight_advice(c)}")
    batch = _global_batch_tip(c)
    upcast = _kbit_upcast_gb(c)
    if upcast is not None and free < upcast:
        out.append(
            "PEFT's prepare_model_for_kbit_training, which many QLoRA scripts call, casts the "
            f"embedding and LM head to fp32: {gib(upcast)} GiB more than counted here, "
            f"beyond the {gib(max(0.0, free))} GiB spare. Skip it or "
            + _kbit_cast_back(c.work.precision)
            # a micro-batch of one a GPU has nothing smaller to take
            + (", or take a smaller micro-batch." if _per_gpu_batch(c) > 1 else ".")
        )
    ema = _ema_gb(w)
    if ema is not None and free < ema:
        out.append(
            "If you pass --use_ema to diffusers' train_text_to_image.py (its README command "
            "does), it keeps an fp32 copy of the UNet on each GPU: "
            f"{gib(ema)} GiB more than counted here, beyond the {gib(max(0.0, free))} "
            "GiB spare. Add --offload_ema (the copy waits in CPU memory during each step), "
            "leave --use_ema out, or take a card with that room."
        )
    activation = _activation_tip(c)
    if activation is not None:
        out.append(activation)
    out.extend(_training_memory_tips(c))
    if w.is_llm_inference:
        # not where the weights are 4-bit already and only the math runs wider
        if w.precision in ("bf16", "fp16", "fp32") and requested.precision not in ("int4", "fp4"):
            terms = jobs.four_bit(w, p.copies) if jobs is not None else None
            out.append(four_bit_tip(c, terms, four_bit_cost))
        if w.batch_size < 8 and p.bottleneck == "memory bandwidth":
            out.append(
                "Decoding is bandwidth-bound: batching requests raises total tokens/s almost "
                "linearly, until compute binds."
            )
        vulkan = _vulkan_tip(c, rules)
        if vulkan is not None:
            out.append(vulkan)
    # (a multi-GPU row's own line says it with each GPU's share: ``_global_batch_tip``)
    elif p.overhead_s > 0.1 * p.step_time_s and w.batch_size < 64 and not host_bound and not batch:
        out.append("Fixed per-step overheads are large here: a larger batch uses the GPU better.")
    out.extend(t for t in (_multi_card_tip(c), batch, _input_pipeline_tip(c)) if t)
    if requested.precision != w.precision:
        out.append(_precision_tip(c, requested))
    out.extend(_physical_tips(c))
    out.extend(_layout_tip(c))
    # last: it concerns one operating system the question did not name
    return out + install_note(c, rules) + windows_note(c, rules)


def _layout_tip(c: Candidate) -> list[str]:
    """A CNN or diffusion row whose 16-bit convolutions run NCHW (eager PyTorch, TensorFlow,
    ONNX Runtime) pays cuDNN's layout transposes around each tensor-core convolution
    (perf.runs_nchw prices them): NHWC removes them (PyTorch's channels-last tutorial;
    DeepLearningExamples' ConvNets run --memory-format nhwc), as torch.compile's Inductor does
    from 2.1; each runtime's tip names its own switch (``LAYOUT_TIPS``)."""
    w = c.work
    if w.runtime not in NCHW_RUNTIMES or w.precision not in ("fp16", "bf16"):
        return []
    if not runs_nchw(w) or c.gpu.vendor != "nvidia":
        # cuDNN's transposes only (perf._nchw_transforms_run prices no other): ROCm PyTorch
        # hands MIOpen NCHW unless PYTORCH_MIOPEN_SUGGEST_NHWC is set (aten/src/ATen/native/
        # ConvUtils.h, miopen_conv_use_channels_last), so the tip would promise AMD nothing
        return []
    if not w.model.conv_layers:
        return []  # a transformer denoiser (FLUX.1): only its small VAE decode convolves
    return [LAYOUT_TIPS.get(w.runtime, LAYOUT_TIPS["pytorch"])]


# The channels-last tip in each NCHW runtime's own terms (vocab.NCHW_RUNTIMES says why each
# runs NCHW): a TensorFlow or ONNX Runtime row had been told to call PyTorch's
# model.to(memory_format=...), which neither has (an expert audit, forty-first session).
_TF_LAYOUT = (
    "TensorFlow's GPU CNN harnesses run this network NCHW (DeepLearningExamples' TF ConvNets "
    "by default, --data_format), so cuDNN transposes around each tensor-core convolution: "
    "NHWC tensors (data_format='channels_last', Keras' default) remove them "
    "(workload.channels_last prices it)."
)
LAYOUT_TIPS = {
    "pytorch": (
        "Eager PyTorch runs this network NCHW, so cuDNN transposes around each tensor-core "
        "convolution: model.to(memory_format=torch.channels_last) (and the inputs) removes "
        "them, as torch.compile's Inductor does (workload.channels_last prices it)."
    ),
    "tensorflow": _TF_LAYOUT,
    "tensorflow-xla": _TF_LAYOUT,
    "onnxruntime": (
        "ONNX Runtime's CUDA execution provider runs this network NCHW by default, so cuDNN "
        "transposes around each tensor-core convolution: its provider option prefer_nhwc=1 "
        "runs the convolutions NHWC without them (workload.channels_last prices it)."
    ),
}


def _precision_tip(c: Candidate, requested: WorkloadSpec) -> str:
    """The precision a card runs instead of the one asked; a card whose 16-bit math is no
    faster than its FP32 (Pascal 6.1: fp16 at 1/64) keeps 16-bit storage, not its speed."""
    w, name = c.work, c.gpu.name
    if c.perf.compute_precision == "fp32" and w.precision in ("fp16", "bf16"):
        asked = requested.precision
        return f"{name} runs this job at FP32 speed ({w.precision} storage), not {asked}."
    return f"{name} runs this job at {w.precision}, not {requested.precision}."


def install_note(c: Candidate, rules: compat.Rules | None) -> list[str]:
    """How PyTorch is installed where pip's default wheel is not it (data/frameworks.yaml
    pytorch_install: Intel GPUs' XPU wheels): a PyTorch program's tip, as the ROCm-on-Windows
    note is, not a caveat the verdict would lead with."""
    if rules is None or c.perf.runtime not in TORCH_PROGRAM_RUNTIMES:
        return []
    note = compat.install_note(c.gpu, rules, c.perf.backend)
    return [f"{note}."] if note else []


def windows_note(c: Candidate, rules: compat.Rules | None) -> list[str]:
    """ROCm PyTorch on Windows where the rules call it a preview (data/frameworks.yaml
    rocm_windows): a note for a reader who runs Windows, not a caveat of the answer, since a
    question names no operating system and Linux is ROCm's mature path. Only a PyTorch program
    (the framework asked is PyTorch and the runtime one a user runs: not TensorFlow, JAX,
    llama.cpp or a Linux serving engine) is ROCm PyTorch's. Until 2026-12-04 it was a row
    warning and led the verdict of every Radeon answer (issue #23)."""
    if rules is None or c.perf.runtime not in TORCH_PROGRAM_RUNTIMES:
        return []
    win = compat.feature_status(c.gpu, "rocm_windows", rules, c.perf.backend)
    if win is None or win.status != "experimental" or not win.note:
        return []
    # a job over several cards: WSL2's "supported" does not reach it (a 2 × RX 9060 XT FSDP
    # row had been told WSL2 was the supported path)
    mgpu = compat.feature_status(c.gpu, "rocm_wsl_multi_gpu", rules, c.perf.backend)
    if c.n > 1 and mgpu is not None and mgpu.status == "unsupported" and mgpu.note:
        return [f"If you run Windows: {win.note}; but {mgpu.note}."]
    return [f"If you run Windows: {win.note}."]


def _graph_runtimes(backend: str | None, runs: Collection[str] | None = None) -> str:
    """What removes eager dispatch from a decode loop. The runtimes named are CUDA's
    (TensorRT-LLM and CUDA graphs are NVIDIA's; vLLM and SGLang reach only some cards of other
    backends, data/frameworks.yaml runtime:<name>): on another backend the tip names none, and
    on CUDA only those the card's rules let run (``runs``; a Pascal card runs none of them)."""
    head = "Decoding is bound by eager dispatch on the host: "
    names = [v for k, v in GRAPH_RUNTIMES.items() if runs is None or k in runs]
    if backend == "cuda" and names:
        return head + f"a CUDA-graph runtime ({', '.join(names)}) removes most of it."
    return head + (
        "a larger batch gives each dispatched kernel more tokens, and a runtime that replays "
        "the decode step as a graph, where one runs on this card, removes most of it."
    )


def _host_tip(w: WorkloadSpec, backend: str | None, runs: Collection[str] | None) -> str:
    """The tip of a row that waits on the host's dispatch, by what the GPU runs: a training
    step, an LLM's decode loop, or another forward pass."""
    if w.training:
        fuse = (
            "; torch.compile fuses many of them away"
            if runs is None or ("torch-compile" in runs)
            else ""
        )
        return (
            "Each step waits on PyTorch dispatching its ops from the host, not on the GPU: "
            "longer sequences or more samples per step (packing, a larger batch) give each "
            f"op more work{fuse}."
        )
    if w.is_llm_inference:
        return _graph_runtimes(backend, runs)
    return _dispatch_tip(backend, runs)


def _dispatch_tip(backend: str | None, runs: Collection[str] | None = None) -> str:
    """What removes eager dispatch from a forward pass that is not an LLM's decode loop (a
    diffusion pipeline, a CNN, an encoder): no serving engine runs it, so the tip names
    torch.compile where the card's rules let it run (it fuses element-wise chains; its
    "reduce-overhead" mode replays the pass as CUDA graphs: data/efficiency.yaml's
    torch-compile row, torch-compile-tutorial) and, on CUDA, TensorRT (an engine built ahead
    of time, launched without Python), beside a larger batch. Until 2026-12-04 such rows read
    the LLM tip ("Decoding ... vLLM, SGLang")."""
    head = (
        "Each pass waits on PyTorch dispatching its ops from the host, not on the GPU: a larger "
        "batch gives each op more work"
    )
    fixes = []
    if runs is None or "torch-compile" in runs:
        fixes.append(
            'torch.compile fuses many ops away (mode="reduce-overhead" also replays the pass as '
            "CUDA graphs)"
        )
    if backend == "cuda":
        fixes.append("TensorRT runs it without Python dispatch")
    return head + ("; " + " and ".join(fixes) if fixes else "") + "."


# Below this scaling efficiency a multi-card row is told its link costs it (the threshold CNN
# rows already had, now for every family)
POOR_SCALING = 0.85


# Bytes of gradient a trained parameter holds: fp32, as autocast trains fp32 parameters
# (workload._training_memory's ``grads``)
GRADIENT_BYTES = 4.0


def _training_memory_tips(c: Candidate) -> list[str]:
    """What a training row's model states and logits could shed: LoRA for a full fine-tune
    (pretraining from scratch has no such way out), a fused loss for large logits."""
    w = c.work
    out = []
    if w.task == "fine-tuning" and w.peft == "none" and w.model.params >= 1e9:
        out.append(_full_states_tip(w))
    logits = _fused_loss_tip(c)
    if logits is not None:
        out.append(logits)
    return out


def _full_states_tip(w: WorkloadSpec) -> str:
    """What full fine-tuning keeps per parameter, from the job's own states on one GPU
    (unsharded): its weights, master weights and optimizer state as the breakdown counts them,
    and its gradients at GRADIENT_BYTES — the breakdown's gradients field is their peak beside
    the activations backward frees (0 where they fit in that room), not what a parameter holds.
    ~18 bytes under mixed-precision AdamW (fp32 master, 16-bit copy, fp32 gradients, two fp32
    moments), ~12 under 8-bit AdamW: a flat "~16" had been said of both."""
    whole = memory_breakdown(w, num_gpus=1)  # unsharded: the whole model's states
    params = w.model.params
    states = whole.weights + whole.master_weights + whole.optimizer + params * GRADIENT_BYTES / 1e9
    return (
        f"Full fine-tuning keeps ~{states * 1e9 / params:.0f} bytes per parameter here "
        f"(weights, master weights, gradients and optimizer state: {vram(states):,.0f} GiB for "
        f"{params / 1e9:.2f}B parameters); LoRA or QLoRA needs a fraction of that memory."
    )


# From this share of a training row's memory the LM head's logits are worth a fused loss: a
# quarter is the product rule the fine-tuning review asked for; at long contexts they are most
# of the row (Llama 3.1 8B LoRA at 65,536 tokens: 117.7 of 160.5 GB).
LOGITS_SHARE = 0.25
# Liger Kernel and Cut Cross Entropy are Triton kernels: Triton runs on CUDA and ROCm (Liger
# v0.4.0: "Full AMD support"), not on Metal or (as released) Intel's XPU.
TRITON_BACKENDS = frozenset(vocab.TRITON_BACKENDS)


def _fused_loss_tip(c: Candidate) -> str | None:
    """A fused or chunked cross-entropy where the logits are a large share of a training row's
    memory: Liger Kernel's fused linear cross-entropy (use_liger_kernel=True in Hugging Face
    TrainingArguments; github.com/linkedin/Liger-Kernel README) and Cut Cross Entropy (Wijmans
    et al. 2024, "Cut Your Losses in Large-Vocabulary Language Models", arXiv 2411.09009; what
    Unsloth runs) compute the loss from the hidden states block by block, never holding the
    whole logits tensor: the row frees most of its own logits figure. The engine does not
    count it (the fit stays as the row says)."""
    w, p, m = c.work, c.perf, c.memory
    if not w.training or m.total <= 0 or m.logits < LOGITS_SHARE * m.total:
        return None
    if p.runtime not in TORCH_PROGRAM_RUNTIMES or (p.backend or "cuda") not in TRITON_BACKENDS:
        return None
    cce = " or Cut Cross Entropy (arXiv 2411.09009)"
    return (
        f"The LM head's logits and loss take {gib(m.logits)} GiB of the "
        f"{gib(m.total)} GiB{' per GPU' if c.n > 1 else ''}: Liger Kernel's fused linear "
        "cross-entropy (use_liger_kernel=True in Hugging Face TrainingArguments)"
        f"{cce if p.backend in (None, 'cuda') else ''} computes the loss in chunks without "
        f"materialising them, freeing most of those {gib(m.logits)} GiB."
    )


def _data_parallel(c: Candidate) -> bool:
    """A training row whose GPUs each run a share of the global batch: data parallel or sharded
    data parallel (DDP, FSDP, HSDP), not a tensor- or pipeline-parallel layout whose GPUs share
    samples, nor copies side by side."""
    p = c.perf
    if not c.work.training or c.n <= 1 or p.copies > 1 or c.work.runtime == "megatron":
        return False
    return "tensor parallel" not in p.parallelism and "pipeline" not in p.parallelism


def _batch_share_said(c: Candidate) -> str:
    """', each GPU running 32 of the global batch of 256' for a data-parallel training row
    that runs the whole batch in one step: 8 × B200 at 61 % scaling never said each ran only
    32 images. Under accumulation the micro-batch's share is said with the savers."""
    if not _data_parallel(c) or c.micro_batch is not None:
        return ""
    b = c.work.batch_size
    per = -(-b // c.n)
    return f", each GPU running {per:,} of the global batch of {b:,}"


def _global_batch_tip(c: Candidate) -> str | None:
    """A data-parallel training row that scales poorly: each step's fixed costs (the gradient
    exchange, the host's dispatch, kernel launches) do not shrink with a GPU's share of the
    batch, so a small share is what makes them weigh; a larger global batch gives each GPU
    more work for the same fixed costs. Only where the row has room for it (no accumulation,
    memory not tight). The learning rate then changes with the batch: Goyal et al. 2017,
    "Accurate, Large Minibatch SGD" (arXiv 1706.02677), scale it linearly, with warmup."""
    p = c.perf
    if not _data_parallel(c) or c.micro_batch is not None:
        return None
    if p.scaling_efficiency >= POOR_SCALING or c.memory.total > 0.75 * c.available_gb:
        return None
    b = c.work.batch_size
    per = -(-b // c.n)
    # the asked batch on every GPU, where the row's memory holds it: the figure a reader tries
    bigger = c.work.with_flags(batch_size=b * c.n)
    fits = memory_breakdown(bigger, num_gpus=c.n).total <= c.available_gb
    upto = f" ({b * c.n:,}, {b:,} per GPU, fits)" if fits else ""
    return (
        f"Each GPU runs only {per:,} of the global batch of {b:,}, so each step's fixed costs "
        f"(gradient exchange, dispatch) weigh on little work: {p.scaling_efficiency:.0%} "
        f"scaling. A larger global batch{upto} scales better; raise the learning rate with it "
        "(Goyal et al. 2017's linear rule with warmup, for SGD)."
    )


# From this many images a second per host, an image row's input pipeline can set its pace,
# which the estimate (the GPU's step) leaves out: NVIDIA's DeepLearningExamples report one
# V100's EfficientNet-B0 training on a DGX-1 host as CPU-bound by AutoAugment at 629-712
# images/s ("does not improve training speed by using AMP as compared to FP32, because of the
# CPU bound Auto-augmentation", TensorFlow2/Classification/ConvNets/efficientnet/README.md,
# commit 34fdb95, tests/data/dle_cnn_training.yaml). A measured rate, not a per-core figure:
# a lighter pipeline, more cores or GPU decoding go faster.
INPUT_BOUND_IMAGES_S = 700.0
# From this side (pixels) an image dataset is of ImageNet's kind: JPEG files decoded, cropped
# and resized each epoch. Below it the common sets (MNIST 28, CIFAR and SVHN 32, Tiny ImageNet
# 64, STL-10 96) ship as raw pixel arrays or are small enough to decode once and hold in memory
# as one tensor (CIFAR-10's 50,000 at 32×32: 154 MB), so no JPEG is decoded while training and
# the JPEG tip had told a CIFAR-size CNN on an RTX 4060 to use DALI. An input_size the model
# leaves blank keeps the tip, as before.
JPEG_SIDE_PX = 128


def _input_pipeline_tip(c: Candidate) -> str | None:
    """An image model's row fast enough that decoding and augmenting its JPEGs on the host may
    not keep up (ResNet-50 training at 37,400 images/s on 8 × B200 said nothing of it): the
    row's own rate per host against the rate a published pipeline was already bound at. Only
    for images of ImageNet-like size (JPEG_SIDE_PX)."""
    w, p = c.work, c.perf
    if w.model.family not in ("cnn", "vit"):
        return None
    side = w.model.input_size
    if side is not None and side < JPEG_SIDE_PX:
        return None
    scale, unit = shown_rate(w, p.unit)
    machines = hosts(c.gpu, c.n)
    rate = p.throughput * scale / machines
    if unit != "images/s" or rate < INPUT_BOUND_IMAGES_S:
        return None
    per = " per server" if machines > 1 else ""
    work = "decoding and augmenting" if w.training else "decoding and resizing"
    return (
        f"At {rate:,.0f} images/s{per}, {work} JPEGs on the host must keep pace, which this "
        "estimate of the GPU leaves out (NVIDIA's EfficientNet-B0 training was CPU-bound by "
        "AutoAugment at ~700 images/s on one V100 of a DGX-1): decode on the GPU (NVIDIA "
        "DALI, nvJPEG) or pre-decode the dataset (FFCV), and count the host's cores."
    )


def _multi_card_tip(c: Candidate) -> str | None:
    """What spreading the job over the row's cards buys, where it buys little."""
    w, g, p = c.work, c.gpu, c.perf
    if p.copies > 1:
        return None  # copies side by side share no link
    if c.n > 1 and p.runtime == "llama.cpp":
        return (
            f"llama.cpp splits the layers over the {c.n} cards (--split-mode layer): a token "
            "passes through them one after another, so more cards add memory, not decode speed."
        )
    if replica_span(g, w, p) == "layers":
        # Transformers' device_map (accelerate's dispatch) runs the same way: its low
        # "scaling" is the cards taking turns, not the link (the hand-offs are a few KB a
        # token), so "an NVLink/NVSwitch part scales better" had named a remedy that buys
        # nothing (7 × RTX 4090 holding Llama 3.1 70B in bf16: 14 %, its link 0.2 % of the
        # time)
        how = vocab.RUNTIME_NAMES.get(p.runtime, p.runtime)
        mapped = " (device_map)" if p.runtime == "transformers" else ""
        return (
            f"{how} places whole layers on each of the {c.n} cards{mapped}: a token "
            "passes through them one after another, so more cards add memory, not decode "
            "speed, and a faster link would not change that; a runtime that splits every "
            "layer (tensor parallel: vLLM, SGLang) puts the cards to work together."
        )
    lk = topology.link(g, c.n) if c.n > 1 else None
    # a row its own model scales well needs no warning: below the same 85 % for every family
    # (a transformer at 99 % beside "scale better" read as a contradiction)
    if lk is None or lk.kind not in ("pcie-p2p", "pcie-host", "network"):
        return None
    if p.scaling_efficiency >= POOR_SCALING:
        return None
    f = topology.fabric(g)
    if f.domain > 1 and c.n <= f.domain and not f.link_gbs:
        # inside the fabric's domain, PCIe stands in where the catalog has no sourced figure
        # for the fabric's bandwidth (MI325X, MI355X): said, not passed off as "beyond" it
        beyond = f" (no sourced bandwidth for its {f.label}, so PCIe is assumed)"
    else:
        beyond = f" beyond its {f.label}" if f.domain > 1 else ""
    # Lambda's 2× RTX 4090 figure is a PCIe measurement without peer-to-peer: quoted for that
    # link only, never for nodes on a network
    measured = (
        " (Lambda: 2× RTX 4090 gave 1.49× on BERT-large)"
        if w.training and lk.kind == "pcie-host"
        else ""
    )
    # across nodes of an NVLink/NVSwitch part the remedy is fewer nodes, not another part;
    # where half the cards cannot hold the job (70B in bf16 on 2 × 96 GB) fewer is no remedy
    half = max(1, c.n // 2)
    fewer = memory_breakdown(w, num_gpus=half).total <= usable_gb(c.gpu, w, half)
    if lk.kind == "network" and f.domain > 1:
        remedy = f"fewer nodes (the {f.domain} GPUs of one {f.label} domain) scale better."
    elif fewer:
        remedy = "fewer cards or an NVLink/NVSwitch part scale better."
    else:
        remedy = "fewer cards cannot hold the job, so an NVLink/NVSwitch part scales better."
    # a GeForce/TITAN/workstation pair's NVLink bridge is an accessory no offer states
    # (topology.accessory_bridge): said as what one would carry, not assumed
    bridge = topology.accessory_bridge(g, c.n)
    bridged = (
        " An NVLink bridge (sold separately, two cards only, matching slot spacing) would carry"
        f" {'the gradient sync' if w.training else 'the all-reduces'} at ~{bridge.gbs:,.0f} GB/s"
        f" instead of ~{lk.gbs:,.0f}."
        if bridge is not None
        else ""
    )
    return (
        f"{c.n}× {g.name} talk over {lk.label}{beyond}: "
        f"{p.scaling_efficiency:.0%} scaling{measured}; {remedy}{bridged}"
    )


# Each PyTorch backend's peak-memory counter (torch.cuda serves CUDA and ROCm builds alike).
# Gaudi's comes with Intel's PyTorch bridge (habana_frameworks.torch.hpu, which Intel's own HPU
# tests read after reset_peak_memory_stats, and Hugging Face's TrainerMemoryTracker in
# transformers/trainer_utils.py as torch.hpu once the bridge is imported); a Gaudi row had been
# told to watch torch.cuda, which an HPU process does not use.
PEAK_MEMORY_CALL = {
    "hpu": "habana_frameworks.torch.hpu.max_memory_allocated()",
    "mps": "torch.mps.driver_allocated_memory()",
    "xpu": "torch.xpu.max_memory_allocated()",
}


def kbit_upcast_gb(
    peft: str,
    vocab_size: int | None,
    hidden_size: int | None,
    tied: bool | None,
    sharded: bool = False,
) -> float | None:
    """The memory PEFT's prepare_model_for_kbit_training adds to a QLoRA job by casting the
    16-bit embedding and LM head to fp32 (2 more bytes a parameter; huggingface/peft
    utils/other.py: "cast all non INT8 parameters to fp32"), which the engine does not count
    (docs/methodology.md: it depends on the script); None outside QLoRA of a known shape.
    Older TRL SFTTrainers called it for a 4-bit model given a peft_config (and cast the two
    back to bf16 under bf16=True); TRL's current one does not (sft_trainer.py, 00313f2).
    ``sharded``: the model states are sharded over several GPUs (FSDP-QLoRA), where no
    recipe runs it: TRL skips it for a sharded 4-bit model ("one should never call
    peft_module_casting_to_bf16 or prepare_model_for_kbit_training when doing QLoRA + FSDP /
    DS-Zero3", its is_sharded_qlora check), which PEFT's FSDP-QLoRA guide runs, and
    Answer.AI's fsdp_qlora train.py never imports it; so None. 4 × RTX 3080 under FSDP-QLoRA
    had been told its fit held "only if" the embedding stayed 16-bit, which it does there."""
    if peft != "qlora" or sharded or not vocab_size or not hidden_size:
        return None
    matrices = 1 if tied else 2
    return vocab_size * hidden_size * matrices * 2.0 / 1e9


# diffusers' examples/text_to_image/train_text_to_image.py, the full fine-tune of an SD 1.x/2.x
# UNet, runs `--use_ema` in its README command: EMAModel keeps a copy of the UNet's parameters
# in fp32, moved to the GPU (ema_unet.to(accelerator.device)), which the memory model does not
# count; `--offload_ema` keeps it in pinned CPU memory during the step (the same README). The
# SDXL script's README command passes no --use_ema, and a DiT or FLUX.1 is no UNet of that
# recipe: the tip is for the UNets the recipe trains, by the traced table's name.
EMA_BYTES_PER_PARAM = 4.0
EMA_RECIPE_UNETS = frozenset({"stable-diffusion-1.5"})


def _ema_gb(w: WorkloadSpec) -> float | None:
    """GB an fp32 EMA of the trained UNet takes on each GPU, for a full (not PEFT) training row
    of an SD 1.x/2.x UNet (``EMA_RECIPE_UNETS``); None elsewhere."""
    m = w.model
    if not w.training or w.peft != "none" or m.family != "diffusion" or m.operators is None:
        return None
    if m.operators.model not in EMA_RECIPE_UNETS:
        return None
    return m.params * EMA_BYTES_PER_PARAM / 1e9


def _kbit_cast_back(precision: str) -> str:
    """How a QLoRA row takes its embedding and LM head back to 16-bit. The QLoRA paper's
    qlora.py casts them back to bf16 only under --bf16 (``if args.bf16 and
    module.weight.dtype == torch.float32``): an fp16 run (a card without bf16: Turing, Volta)
    keeps them in fp32 there, and a bf16 cast is no answer on a card that runs fp16."""
    if precision == "fp16":
        return (
            "cast them to fp16 yourself (the QLoRA paper's script casts them back under "
            "--bf16 only)"
        )
    return "cast them back to bf16 (as the QLoRA paper's script does)"


def _kbit_upcast_gb(c: Candidate) -> float | None:
    m = c.work.model
    # memory.num_gpus: the GPUs the model states are sharded over (1 under DDP)
    sharded = c.memory.num_gpus > 1
    return kbit_upcast_gb(c.work.peft, m.vocab_size, m.hidden_size, m.tied_embeddings, sharded)


def _activation_tip(c: Candidate) -> str | None:
    """What to do about large activations on a training row that is short of memory."""
    w, m = c.work, c.memory
    # checkpointing buys memory with ~a third more compute: worth it only where memory is short
    # and nothing cheaper frees it. A GPU that runs several samples a pass halves its
    # activations by halving its micro-batch (the same update over twice the accumulation
    # steps, _training_headroom), which costs far less than a recomputed forward: 8 × B200 on
    # a 1.3B GPT at the engine's own micro-batch of 16 a GPU, 83 % full, had been told to pay
    # the third more. The headroom tip says so past 85 % full; between 75 and 85 % this is
    # the only word on the activations, so it says it here.
    tight = m.total > 0.75 * c.available_gb
    large = m.activations > 0.4 * m.total
    if not (w.training and not w.gradient_checkpointing and large and tight):
        return None
    per = _per_gpu_batch(c)
    # an optimizer stepping in backward keeps no gradient to accumulate: a smaller
    # micro-batch would be a smaller update, so checkpointing is the word
    if per <= 1 or w.optimizer_in_backward:
        return (
            f"Activations take {gib(m.activations)} GiB; activation checkpointing cuts "
            f"them to a fraction for ~{_recompute_pct(w)} % more compute."
        )
    if not _tight(c):
        # an odd micro-batch has no half that keeps the update: 1 a GPU over per× the steps does
        smaller, steps, cut = (
            (per // 2, "twice the", "halves them")
            if per % 2 == 0
            else (1, f"{per}× the", f"cuts them to 1/{per}")
        )
        return (
            f"Activations take {gib(m.activations)} GiB; a micro-batch of {smaller} "
            f"a GPU instead of {per}, with {steps} gradient-accumulation steps, {cut} "
            "(the same update, a little slower), for less than activation checkpointing's "
            f"~{_recompute_pct(w)} % more compute."
        )
    return None


def _tight_advice(c: Candidate) -> str:
    p = c.perf
    if c.work.training and p.runtime in TORCH_PROGRAM_RUNTIMES:
        return _training_headroom(c, p.backend)
    return _headroom_advice(p.runtime, p.backend)


def _training_headroom(c: Candidate, backend: str | None) -> str:
    """A training row that barely fits: the per-GPU micro-batch it can halve (the same update
    with twice the accumulation steps), else the savers left; lowering the batch a user asked
    does not change the micro-batch the engine chose for it."""
    watch = f"watch {PEAK_MEMORY_CALL.get(backend or '', 'torch.cuda.max_memory_allocated()')}"
    per = _per_gpu_batch(c)
    if per > 1 and not c.work.optimizer_in_backward:
        return (
            f"{watch}; for room, run per_device_train_batch_size {per // 2} with twice the "
            "gradient-accumulation steps (the same update, a little slower)."
        )
    if per > 1:
        return (
            f"{watch}; with the optimizer stepping in backward the batch cannot run as "
            f"gradient-accumulation steps{_what_frees(c)}."
        )
    return f"{watch}; the micro-batch is one sample a GPU already{_what_frees(c)}."


# 8-bit AdamW frees 6 of Adam's 8 bytes of moments a trainable parameter: named where the
# moments are this share of the row's memory or more, not on a (Q)LoRA row whose adapters'
# moments are a fraction of a GB (an 8B LoRA at 8,192 tokens on a 24 GB card: 0.3 GB beside
# 13.7 GB of logits)
ADAM8_SHARE = 0.10
# What else a row at one sample a GPU can shrink is named from this share of its memory up
LARGE_SHARE = 0.10


def _what_frees(c: Candidate) -> str:
    """': the logits (13.7 GB) shrink with …': what is large on a training row at one sample
    a GPU and what frees it, largest first: the logits (a fused cross-entropy), the activations
    (checkpointing where it is off, else a shorter sequence), Adam's moments (8-bit AdamW,
    ``ADAM8_SHARE``); more GPUs where none is large."""
    w, m = c.work, c.memory
    found: list[tuple[float, str]] = []
    if m.logits >= LARGE_SHARE * m.total:
        # Liger Kernel and Cut Cross Entropy are Triton kernels (``_fused_loss_tip``)
        triton = (c.perf.backend or "cuda") in TRITON_BACKENDS
        fused = "a fused cross-entropy (Liger Kernel, Cut Cross Entropy)"
        found.append((m.logits, f"the logits ({gib(m.logits)} GiB) shrink with "
                      f"{fused if triton else 'a chunked cross-entropy'}"))  # fmt: skip
    if m.activations >= LARGE_SHARE * m.total:
        fix = "activation checkpointing"
        if w.gradient_checkpointing:
            fix = "a shorter sequence" if w.model.is_transformer else "smaller samples"
        found.append((m.activations, f"the activations ({gib(m.activations)} GiB) shrink "
                      f"with {fix}"))  # fmt: skip
    if w.optimizer == "adamw" and m.optimizer >= ADAM8_SHARE * m.total:
        found.append((m.optimizer, f"Adam's moments ({gib(m.optimizer)} GiB) shrink with "
                      "8-bit AdamW"))  # fmt: skip
    if not found:
        return ": more GPUs shard the rest"
    found.sort(key=lambda f: -f[0])
    return ": " + "; ".join(said for _, said in found)


# llama.cpp's Vulkan build beside its HIP and SYCL builds (data/frameworks.yaml
# `runtime:llama.cpp-vulkan`): it needs neither ROCm nor oneAPI and runs on Windows, and on an
# RX 7900 XTX it decodes faster than the HIP build (ggml-org/llama.cpp issue #20934: Llama 7B
# Q4_0 tg128 167-177 tokens/s on RADV against ROCm's 129-144).
VULKAN_ALTERNATIVE = {
    "rocm": (
        "llama.cpp's Vulkan build runs this card too, with no ROCm and on Windows: ask for "
        "runtime 'llama.cpp-vulkan' to price it (on an RX 7900 XTX it decodes 1.2-1.4x faster "
        "than ROCm: ggml-org/llama.cpp #20934)."
    ),
    "xpu": (
        "llama.cpp's Vulkan build runs this card too, with no oneAPI: ask for runtime "
        "'llama.cpp-vulkan' to price it."
    ),
}


def _vulkan_tip(c: Candidate, rules: compat.Rules | None) -> str | None:
    """A llama.cpp row on its HIP or SYCL build, where the rules offer the Vulkan build too."""
    said = VULKAN_ALTERNATIVE.get(c.perf.backend or "")
    if said is None or c.work.runtime != "llama.cpp" or rules is None:
        return None
    st = compat.llamacpp_vulkan_status(c.gpu, rules)
    return said if st is not None and st.status == "supported" else None


def _headroom_advice(runtime: str, backend: str | None = None) -> str:
    """What to watch and what to give up when a job barely fits, in the runtime's own terms
    (and its backend's: torch.cuda has no counter on a Mac)."""
    if runtime == "llama.cpp":
        return (
            "a longer context (-c) or a larger batch (-ub) grows the KV cache and compute "
            "buffers; offloading fewer layers (-ngl) frees room at a cost in speed."
        )
    if runtime in TORCH_PROGRAM_RUNTIMES or runtime == "megatron":
        return (
            f"watch {PEAK_MEMORY_CALL.get(backend or '', 'torch.cuda.max_memory_allocated()')} "
            "and leave room for fragmentation, or lower the batch size."
        )
    return "leave room for the runtime's own buffers and fragmentation, or lower the batch size."


# Desktop ATX boards space x16 slots about two slots apart (7 expansion slots), and desktop
# power supplies stop near 1.6 kW (Corsair AX1600i, Seasonic PRIME TX-1600): beyond these a
# multi-card desktop build needs risers, a server chassis or a second supply.
DESKTOP_SLOTS = 7
# The case's slot openings the cards' coolers take: an ATX board's 7 expansion slots (the
# form factor's most) put a dual-width card in the 7th into the case's 8th opening, which
# workstation towers have (four dual-width RTX 6000 Ada in one tower, as 4-GPU workstations
# are sold); a 7-opening case stops at 7 slots of coolers. Blower boards are dual-width
# (BLOWER_WIDTH), so only a wider card gains room from a blower version of it; a dual-width
# card, a workstation card's blower among them, gains none.
CASE_SLOTS = DESKTOP_SLOTS + 1
BLOWER_WIDTH = 2
DESKTOP_PSU_W = 1600
PSU_HEADROOM = 1.5  # transient spikes and the rest of the system

# What feeds the build at the wall. A branch circuit's continuous load (3 h or more, as a GPU
# job's) may not exceed 80 % of its rating (NEC 210.19(A)(1), 210.20(A)): a 15 A/120 V circuit
# gives 1,800 W peak and 1,440 W continuous, so a 1,600 W supply at full load (~1.75 kW drawn)
# is already over it. A US home's next steps are a 20 A/120 V circuit (2,400 W, 1,920 W
# continuous) and a 20 A/240 V one (4,800 W, 3,840 W continuous). A 16 A/230 V circuit (a
# common European socket circuit) gives 3,680 W ("20 A/240 V or 16 A/230 V (3,680 W)" had
# given the 240 V circuit the 230 V one's figure).
CIRCUIT_120V_W = 15 * 120 * 0.8
CIRCUIT_20A_120V_W = 20 * 120 * 0.8
CIRCUIT_240V_W = 20 * 240 * 0.8
CIRCUIT_230V_W = 16 * 230
# 80 PLUS Platinum (115 V internal): 90 % efficient at 20 % load, 92 % at 50 %, 89 % at 100 %
# (the 80 PLUS program's table, clearesult.com/80plus/program-details); a supply sized at
# PSU_HEADROOM × the load runs near two thirds of it.
PSU_EFFICIENCY = 0.92
# The host beside the cards, at its CPU's TDP alone (board, memory, drives and fans come on
# top, so the wall figure is a floor): two cards share a desktop board's x16 lanes as two x8
# slots beside a desktop CPU (AMD Ryzen 9 9950X: 170 W TDP, amd.com); three or more need a
# workstation's lanes (AMD Ryzen Threadripper 7980X: 350 W TDP, amd.com), as a server for
# PCIe datacenter cards does (one socket; a two-socket server draws more).
HOST_W_TWO_CARDS = 170.0
HOST_W_MORE_CARDS = 350.0
# A floor within this share of a circuit's limit is "near" it, not "within" (a product rule)
CIRCUIT_NEAR = 0.9
# Past three 16 A/230 V circuits a build is no longer fed from wall sockets: three such circuits
# are the three phases of one 16 A/400 V three-phase feed (3 × 16 A × 230 V = 11,040 W), and
# beyond one feed the load is a rack's, fed through three-phase PDUs.
WALL_CIRCUITS_MAX = 3


def hosts(gpu: GpuSpec, cards: int) -> int:
    """The machines ``cards`` of this GPU sit in, each with its own host CPU: one desktop or
    workstation while its board takes them (DESKTOP_SLOTS cards at most, with risers or
    single-slot cards); beyond that, and for datacenter cards always, servers of
    topology.node_size cards (8), as the explanation counts them (64 cards are 8 servers)."""
    if gpu.segment != "datacenter" and cards <= DESKTOP_SLOTS:
        return 1
    return topology.nodes(gpu, cards)


def wall_w(gpu_w: float, cards: int, machines: int = 1) -> float:
    """A build's draw at the wall: its cards' board power and each machine's host CPU, through
    the supply's losses."""
    host = HOST_W_TWO_CARDS if cards <= 2 and machines == 1 else HOST_W_MORE_CARDS * machines
    return (gpu_w + host) / PSU_EFFICIENCY


def circuits(wall: float) -> int:
    """16 A/230 V circuits that carry ``wall`` watts."""
    return max(1, math.ceil(wall / CIRCUIT_230V_W))


_COUNT_WORDS = {2: "two", 3: "three"}


def _circuit_words() -> tuple[str, ...]:
    """``circuit_said``'s sentences that name only the circuits, not the load: the same text
    for every row, so put together once (each row had formatted all three circuits' figures,
    then used one sentence or none; issue 21)."""
    small = f"15 A/120 V circuit's {CIRCUIT_120V_W:,.0f} W continuous"
    twenty = f"20 A/120 V circuit ({CIRCUIT_20A_120V_W:,.0f} W continuous)"
    big = (
        f"20 A/240 V circuit ({CIRCUIT_240V_W:,.0f} W continuous) or a 16 A/230 V one "
        f"({CIRCUIT_230V_W:,.0f} W)"
    )
    return (
        f"within a 15 A/120 V circuit's {CIRCUIT_120V_W:,.0f} W continuous",
        f"near a {small}: a {twenty} gives room",
        f"over a {small}: a {twenty} carries it",
        f"over a {small}, near a 20 A/120 V one's {CIRCUIT_20A_120V_W:,.0f} W: a {big} gives room",
        f"over a 20 A/120 V circuit's {CIRCUIT_20A_120V_W:,.0f} W continuous: it needs a {big}, "
        "or two 20 A/120 V circuits",
        f"a 16 A/230 V circuit's {CIRCUIT_230V_W:,.0f} W",
    )


_WITHIN_120V, _NEAR_120V, _OVER_120V, _NEAR_20A, _OVER_20A, _CIRCUIT_230V = _circuit_words()


def circuit_said(wall: float) -> str:
    """Which branch circuits carry ``wall`` watts as a continuous load. Within CIRCUIT_NEAR of
    a limit is "near" it: the wall figure leaves out the board, drives and fans. Past
    WALL_CIRCUITS_MAX circuits it is rack power, not wall circuits (42 kW had read "two
    circuits")."""
    if wall <= CIRCUIT_NEAR * CIRCUIT_120V_W:
        return _WITHIN_120V
    if wall > CIRCUIT_230V_W:
        k = circuits(wall)
        if k > WALL_CIRCUITS_MAX:
            return (
                f"about {k} times {_CIRCUIT_230V}: rack power (three-phase PDUs), not wall circuits"
            )
        return f"over even {_CIRCUIT_230V}: it needs {_COUNT_WORDS[k]} such circuits"
    if wall <= CIRCUIT_120V_W:
        return _NEAR_120V
    if wall <= CIRCUIT_NEAR * CIRCUIT_20A_120V_W:
        return _OVER_120V
    if wall <= CIRCUIT_20A_120V_W:
        return _NEAR_20A
    return _OVER_20A


_PSU_RULE = f"({PSU_HEADROOM:g}× board power, a rule)"  # the same words on every row


def supply_w(tdp_w: float, n: int) -> float:
    """The supply a desktop build of ``n`` such cards is told to plan for them alone: the
    PSU_HEADROOM rule on their board power."""
    return tdp_w * n * PSU_HEADROOM


def _supply_said(c: Candidate) -> str:
    """The supply and wall circuit of a desktop build of the row's consumer or workstation
    cards. The catalog holds no vendor's recommended supply (NVIDIA's "required system power"
    counts a typical CPU and board), so the supply is the PSU_HEADROOM rule on the cards alone
    and says so ("alone": the host comes on top); the wall figure adds the host CPU's TDP."""
    g, n = c.gpu, c.n
    assert g.tdp_w
    total = g.tdp_w * n
    psu = supply_w(g.tdp_w, n)
    power = f"{n}× {g.tdp_w:.0f} W is {total:,.0f} W" if n > 1 else f"{g.tdp_w:.0f} W"
    cards = "cards" if n > 1 else "card"
    line = f"{power} of GPU power: plan ≥ {psu:,.0f} W of supply for the {cards} alone {_PSU_RULE}"
    if psu > DESKTOP_PSU_W:
        line += ", more than one desktop power supply gives (a server or power limits)"
    machines = hosts(g, n)
    wall = wall_w(total, n, machines)
    # the wall figure is the steady draw, below the supply the rule sizes for spikes: "≥ 675 W
    # of supply" beside "about 674 W at the wall" had read as a contradiction
    return (
        f"{line}; with {_hosts_said(machines)}, about {significant(wall)} W at the wall while "
        f"it runs (the supply's margin is for power spikes), {circuit_said(wall)}."
    )


def _hosts_said(machines: int) -> str:
    """Whose host CPUs the wall figure adds: 'the host', or 'the 8 servers' hosts'."""
    return "the host" if machines == 1 else f"the {machines} servers' hosts"


def _physical_tips(c: Candidate) -> list[str]:
    """Power and slots of a build a user puts together: a multi-card desktop's (consumer or
    workstation cards) or one such card the row buys, or a PCIe datacenter card's server where
    the row can buy it (a rented one is the provider's)."""
    g, n = c.gpu, c.n
    bought = c.acquisition != "rent" and c.cost.purchase_usd is not None
    if n < 2:
        # one card in a user's own machine: its supply and circuit (a single RTX 5090 had had
        # no power line at all)
        single = g.segment in ("consumer", "workstation") and bought and g.tdp_w
        return [_supply_said(c)] if single else []
    if g.segment == "datacenter":
        pcie = (g.form_factor or "").startswith("PCIe")
        if not (bought and pcie and g.tdp_w):
            return []
        total = g.tdp_w * n
        machines = hosts(g, n)
        wall = wall_w(total, n, machines)
        supplies = "a GPU server's own supplies" if machines == 1 else "the servers' own supplies"
        return [
            f"{n}× {g.tdp_w:.0f} W is {total:,.0f} W of GPU power, about {significant(wall)} W "
            f"at the wall with {_hosts_said(machines)}, on {supplies}, {circuit_said(wall)}."
        ]
    if g.segment not in ("consumer", "workstation") or not bought:
        # a rented desktop pair's supply, slots and circuit are the provider's, as a rented
        # server's are (8 rented RTX 5090s had been told to plan 6,900 W of supply)
        return []
    out: list[str] = [_supply_said(c)] if g.tdp_w else []
    slot = _slot_said(g.slot_width, n)
    lanes = _lanes_said(c)
    return out + ([slot] if slot else []) + ([lanes] if lanes else [])


def _lanes_said(c: Candidate) -> str | None:
    """What a bought pair of PCIe cards needs of a desktop board, which no row prices: two
    slots wired to the CPU. A desktop CPU gives its graphics slots 16 lanes, one card x16 or
    two x8/x8 where the board splits them (Gigabyte X570 AORUS XTREME: PCIEX8 shares the
    PCIEX16 slot's lanes), and many boards wire their other long slots to the chipset at x1 to
    x4 (MSI PRO X870-P WIFI: x1, x1 and x4 from the chipset). AMD's ROCm-on-Radeon multi-GPU
    guide asks for CPU-connected slots of the same width (x16 + x16 or x8 + x8, not x16 + x8;
    a chipset slot gave HIP errors on two RX 7900 XTX). The link above is priced at each
    card's own x16, so a pair on x8/x8 syncs at up to half that rate (HIP_ROCM_MGPU below)."""
    g = c.gpu
    if c.n != 2 or g.segment not in ("consumer", "workstation"):
        return None
    said = (
        "Two cards need a board with two PCIe slots wired to the CPU: a desktop CPU's 16 "
        "graphics lanes run them x8/x8 (the link above assumes x16 each, so the sync can be "
        "up to twice as slow), and a long slot wired to the chipset (x1-x4 on many boards) "
        "is slower still; the board is not in the price"
    )
    if g.vendor == "amd":
        said += f"; {HIP_ROCM_MGPU} both on the CPU, at one width (x8 + x8 or x16 + x16)"
    return said + "."


# AMD's ROCm-on-Radeon documentation, "Limitations: multi-GPU configuration" (ROCm 5.7 docs,
# rocm.docs.amd.com/projects/radeon-ryzen/en/docs-5.7.0/docs/limitations.html: "PCIe slots
# connected to the GPU must have identical PCIe lane width", CPU-connected slots only); its
# later mGPU setup page (docs-6.4.1 .../install/native_linux/mgpu.html) recommends x16 slots
HIP_ROCM_MGPU = "AMD's ROCm multi-GPU guide for Radeon asks for"


def _slot_said(width: float | None, n: int) -> str | None:
    """Whether ``n`` cards ``width`` slots wide fit a tower: within CASE_SLOTS they do (past
    DESKTOP_SLOTS only a case with that 8th opening; 4 dual-width cards had read "do not fit");
    beyond, risers or a server chassis, and dual-width blower versions only where those are
    narrower and n of them fit (a dual-width blower card had been told to use blower cards)."""
    if not width or width * n <= DESKTOP_SLOTS:
        return None
    slots = f"{n} cards × {width:g} slots"
    if n > DESKTOP_SLOTS:
        # each card needs a board slot of its own, whatever the case (8 single-slot cards
        # had been told they fit a tower with 8 openings)
        board = f"a desktop board's {DESKTOP_SLOTS} slots"
        return f"{slots} do not fit {board}: use risers or a server chassis."
    if width * n <= CASE_SLOTS:
        return (
            f"{slots} need a case with {CASE_SLOTS} slot openings (a workstation tower's; "
            f"many have {DESKTOP_SLOTS})."
        )
    blower = width > BLOWER_WIDTH and BLOWER_WIDTH * n <= CASE_SLOTS
    ways = "risers or a server chassis"
    ways = f"dual-slot blower versions, {ways}" if blower else ways
    return f"{slots} do not fit a tower's {CASE_SLOTS} slot openings: use {ways}."

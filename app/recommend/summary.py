"""The answer in one sentence: the pick, its price on the asked basis, why it wins, the
runner-up and the main caveat — what a reader takes away before the table."""

from __future__ import annotations

import re

from app.domain import bands
from app.domain import cost as costs
from app.domain.compat import is_owning_caveat
from app.domain.evaluate import TIGHT_FIT
from app.domain.figures import duration, given
from app.domain.rank import FASTEST_TIE, TRITON_BACKENDS, kbit_upcast_gb, significant
from app.domain.serving import weights_name
from app.domain.units import vram
from app.domain.workload import GUIDANCE_DISTILLED_DENOISERS
from app.recommend import deadline, misfit
from app.recommend import schemas as s
from app.recommend.quality import AS_RELEASED, PUBLISHER_OWN
from app.recommend.whatif import best_config, config_name, deadline_first, kinds_of_gpu
from app.vocab import PEFT_LABELS, TORCH_PROGRAM_RUNTIMES, TRAINING_TASKS, runtime_name

# Names that open a row's words (a GPU's maker or line: "Apple M3 Ultra …", "Intel Arc B580 …",
# "Tesla P40 …") and keep their capital mid-sentence, as the mixed-case ones below do
PROPER_NAMES = frozenset(
    {"Apple", "Intel", "Google", "Tesla", "Quadro", "Radeon", "Instinct", "Arc", "Gaudi", "Titan"}
)


def mid_sentence(text: str) -> str:
    """``text`` continuing a sentence: its first letter lowered unless the first word is a name
    written with capitals inside it (ROCm, QLoRA, NVIDIA, TensorFlow stay as they are) or a
    maker's or product line's name (``PROPER_NAMES``: "apple M3 Ultra" read as a typo)."""
    word = text.split(" ", 1)[0]
    if not word or any(c.isupper() for c in word[1:]) or word.rstrip(",:;") in PROPER_NAMES:
        return text
    return word[0].lower() + text[1:]


# Three significant figures, thousands separated (1,230; 45.6; 0.123): the rows' explanations
# give memory the same way (rank.significant), so both say "of 7.78 GB".
_fig = significant


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value < 100 else f"${value:,.0f}"


def _name(row: s.Recommendation) -> str:
    sv = row.serving
    return config_name(row.gpu.name, sv.replicas * sv.gpus_per_replica if sv else row.num_gpus)


# How a purchase price's condition reads after "to buy": a launch price is a price, not a
# condition the card is in.
_CONDITION = {
    "new": "new",
    "used": "used",
    "market": "at its market price (new or used listings)",
    "launch": "at its launch price",
}

# What the pick lacks when it has no price on the basis asked ('fastest' and 'balanced' keep
# unpriced cards, README: they rank on what they can do, not on cost).
_NO_PRICE = {
    "rent": "no rental offer known",
    "buy": "no purchase price known",
    "either": "no price known",
}


def _basis(row: s.Recommendation, acquisition: str) -> str | None:
    """The basis the verdict prices the row on: the one asked; for 'either' the one the row's
    buy-vs-rent verdict finds cheaper, else rent first ("rent", "buy"; None without a price
    on it). A headline that named the A30's rent while its verdict said buying was cheaper
    over the asker's hours read as two answers (lab PI's review)."""
    v = row.verdict
    if acquisition == "either" and v is not None and v.cheaper == "buy" and row.cost.buy:
        return "buy"
    if acquisition in ("rent", "either") and row.cost.rent is not None:
        return "rent"
    if acquisition in ("buy", "either") and row.cost.buy is not None:
        return "buy"
    return None


def _price(row: s.Recommendation, acquisition: str) -> str | None:
    """The row's price on the basis the question asked for (rent first for 'either')."""
    rent, buy = row.cost.rent, row.cost.buy
    basis = _basis(row, acquisition)
    if basis == "rent" and rent is not None:
        where = f" on {row.offer.provider}" if row.offer is not None else ""
        spot = " spot" if rent.spot else ""
        return f"rents at {_usd(rent.usd_per_hour)}/h{spot}{where} as of {rent.as_of}"
    if basis == "buy" and buy is not None:
        condition = _CONDITION.get(buy.condition, buy.condition)
        said = _short_note(buy.note) if buy.note else ""
        # a module sold only as whole servers pays for more GPUs than it uses: its $317,000
        # had stood beside a note on the price of one ("an 8-GPU server's price ÷ 8")
        sv = row.serving
        used = sv.replicas * sv.gpus_per_replica if sv else row.num_gpus
        paid = round(buy.usd / buy.unit_usd) if buy.unit_usd > 0 else used
        if paid > used:
            whole = f"{paid} GPUs at {_usd(buy.unit_usd)}, {used} used"
            said = f"{whole}: {said}" if said else whole
        elif paid > 1 and said:
            # the note speaks of one card ("below the new price ($1,623, ...)"): after the
            # cards' total it had read as "$2,466 ... below the new price, $1,623"
            said = f"{_usd(buy.unit_usd)} a card, {said}"
        said = f" ({said})" if said else ""
        return f"costs {_usd(buy.usd)} to buy {condition} as of {buy.as_of}{said}"
    return None


# An aside inside a price's note ("GPU Poet best deal (mean of the 3 cheapest eBay/Amazon
# listings)", "Apple Certified Refurbished (not new)"): set off by commas in the verdict, whose
# own parentheses hold the note
_ASIDE = re.compile(r"\s*\(([^()]*)\)")


def _short_note(note: str) -> str:
    """The data's caveat on a purchase price, as the verdict carries it after the price: the
    whole note (dropping an aside had lost "not new"), its asides set off by commas. An H200
    NVL priced from the month's cheapest listings, which the source says were qualification
    samples, had been quoted in the verdict with no word of it."""
    said = _ASIDE.sub(r", \1,", note.strip().rstrip("."))
    return re.sub(r",(?=\s*[;,:/]|$)", "", said)


def _duration(hours: float) -> str:
    """A time to finish as every answer says it (figures.duration): 40 s, 25 min, 18.8 h."""
    return duration(hours)


def _finish(row: s.Recommendation, acquisition: str) -> str | None:
    """How long the job takes on the pick, and what renting it for that long costs where the
    verdict prices it rented: what a 'cheapest' or deadline answer wins on, not its $/h."""
    hours = row.time_to_finish_h
    if hours is None:
        return None
    rent = row.cost.rent
    rented = acquisition in ("rent", "either") and rent is not None and rent.job_usd is not None
    cost = f" ({_usd(rent.job_usd)} rented)" if rented and rent and rent.job_usd else ""
    # the start-up (cost.RENT_STARTUP_H) said where it is a share the estimate can tell apart:
    # a 17-second job's $0.42 is three quarters start-up
    start = rent.startup_usd if cost and rent and rent.job_usd else None
    if start and rent and rent.job_usd and start >= (FASTEST_TIE - 1) * rent.job_usd:
        cost = f" ({_usd(rent.job_usd)} rented, a minute's start-up included)"
    return f"finishes the job in {_duration(hours)}{cost}"


# Runtimes that claim a share of the device up front (data/efficiency.yaml serving_runtimes,
# memory_utilization with of_free false): vLLM's gpu_memory_utilization, SGLang's
# mem_fraction_static. The rows' usable memory is that share.
_CLAIMS_SHARE = {"vllm": "vLLM", "sglang": "SGLang"}


def _claimed(row: s.Recommendation) -> str:
    """' (vLLM claims …)': why the memory a pick fits in is less than its card holds. "fits
    with 9.82 GiB spare of 162 GiB" had headed a B200 of 180 GiB, and a Mac's "of 144 GiB" its
    192 GiB, with nothing to say the runtime or macOS keeps the rest."""
    card, have = row.gpu.memory_gb, vram(row.memory.available_gb or 0.0)
    # a card's CUDA total sits within a few % of its "GB" (an RTX 4090's 23.7 of 24): said
    # only where a share takes more than that
    if not card or have >= 0.97 * card:
        return ""
    who = _CLAIMS_SHARE.get(row.runtime or "")
    if who:
        return f" ({who} claims that much of the card's {_fig(card)} GiB)"
    if row.gpu.vendor == "apple":
        return f" (what macOS lets the GPU use of its {_fig(card)} GiB)"
    return ""


def _kbit_cast(row: s.Recommendation, answer: s.RecommendationResponse) -> str:
    """' only if …': a QLoRA pick's fit where PEFT's prepare_model_for_kbit_training, which
    many QLoRA scripts call, would cast its embedding and LM head to fp32 for more than the
    spare (rank.kbit_upcast_gb): "fits with 0.87 GB spare of 12 GB" had stood beside a tip
    saying that cast takes 2.0 GB. A fused loss is named where the logits it frees cover the
    shortfall and it runs (Liger Kernel is Triton: CUDA and ROCm)."""
    w, mem = answer.workload, row.memory
    m = w.model
    sharded = mem.num_gpus > 1  # FSDP-QLoRA: no recipe runs it (rank.kbit_upcast_gb)
    upcast = kbit_upcast_gb(w.peft, m.vocab_size, m.hidden_size, m.tied_embeddings, sharded)
    spare = max(0.0, mem.headroom_gb or 0.0)
    if upcast is None or upcast <= spare:
        return ""
    short = upcast - spare
    fused = (
        row.runtime in TORCH_PROGRAM_RUNTIMES
        and (row.backend or "cuda") in TRITON_BACKENDS
        and mem.breakdown.get("logits", 0.0) >= short
    )
    return (
        f" only if the embedding and LM head stay 16-bit (prepare_model_for_kbit_training "
        f"casts them to fp32: {_fig(vram(upcast))} GiB more)"
        + (" or a fused loss frees the logits" if fused else "")
    )


def _speed(row: s.Recommendation) -> str:
    t = row.throughput
    return f"{_fig(t.value)} {t.unit}"


def _minutes(hours: float) -> str:
    """A duration under an hour to the half minute a person would say (6½ min), else as
    ``_duration`` says it."""
    if hours >= 1 or hours * 60 < 1:
        return _duration(hours)
    whole, half = divmod(round(hours * 120), 2)
    return f"{whole}{'½' if half else ''} min"


def _times(factor: float) -> str:
    """A real-time factor as said aloud: 9.3, 15, 0.45."""
    if factor >= 10:
        return f"{factor:,.0f}"
    return f"{factor:.1f}" if factor >= 1 else f"{factor:.2g}"


def _pace(row: s.Recommendation, training: bool = False) -> str:
    """What the pick's rate means for one piece of work, where its unit does not say it: a
    speech model's real-time factor (audio_seconds_per_s: "0.311 30-s windows/s" is about 9×
    real time; a training row's in seconds of audio a second, as real time means nothing to
    it), an image model's seconds per image where it makes under one a second."""
    t = row.throughput
    audio = t.audio_seconds_per_s
    if audio and training:
        return f" ({_times(audio)} s of audio a second)"
    if audio:
        return f" (about {_times(audio)}× real time: 1 h of audio in about {_minutes(1 / audio)})"
    if t.unit == "images/s" and 0 < t.value < 1:
        return f" (about {_fig(1 / t.value)} s per image)"
    return ""


def _latency(row: s.Recommendation, p95: bool = False) -> str:
    """A serving row's pace per user: under a fixed load every shape that carries it produces
    the same output tokens/s, and the ranking's speed is the inter-token latency
    (rank.serving_columns), so the verdict says it — "Pick 8 × H100 … runs 3,000 output
    tokens/s" beside "Runner-up: 3 × B200 (3,000 output tokens/s, cheaper)" had not said why
    the dearer pick won. At p95 targets it gives the p95 figures the targets are judged at and
    the table shows: a new user asking p95 ITL ≤ 50 ms had read "a token every 24.1 ms" (the
    mean) over a table whose p95 ITL column said 48.7. Empty for any other row or without a
    latency."""
    sv = row.serving
    if sv is None or not sv.itl_ms:
        return ""
    itl, ttft, pct = sv.itl_ms, sv.ttft_ms, ""
    if p95 and sv.itl_p95_ms:
        itl, ttft, pct = sv.itl_p95_ms, sv.ttft_p95_ms, "p95: "
    said = f"{pct}a token every {_fig(itl)} ms"
    if ttft:
        said += f" after a first token in {_ms(ttft)}"
    return said


def _ms(ms: float) -> str:
    """A time a person reads: milliseconds below a second, else seconds."""
    return f"{ms / 1e3:,.1f} s" if ms >= 1e3 else f"{_fig(ms)} ms"


def _generating(row: s.Recommendation, batch: int) -> str:
    """An LLM inference row's pace once its prompt is in: its tokens per second are the whole
    batch's output over prompt and generation together, which llama.cpp's and Ollama's users
    read as the generation rate (2.23 tokens/s end to end was 4.5 a second streaming after a
    57 s prompt). Empty for any other row."""
    per, first = row.ms_per_output_token, row.time_to_first_token_ms
    if row.serving is not None or not per or first is None or "token" not in row.throughput.unit:
        return ""
    rate = batch * 1e3 / per
    wait = f"{first / 1e3:,.1f} s" if first >= 1e3 else f"{first:,.0f} ms"
    return f" end to end ({_fig(rate)} tokens/s while generating, after a {wait} prompt)"


def _limited(row: s.Recommendation, batch: int) -> str:
    """What limits the row: an LLM inference row whose prompt sets the whole request's bound
    also says what limits the generation the reader streams."""
    gen = row.generation_bottleneck
    if gen is not None and gen != row.bottleneck and _generating(row, batch):
        return f"limited by {row.bottleneck} over the prompt and by {gen} while generating"
    return f"limited by {row.bottleneck}"


# A warning that states what a blank field was taken as ("seq_len not given: ..."), or which
# modules the adapters were counted on (workloads._lora_targets: "LoRA rank 16 on all linear
# layers ..."), an assumption the request could not state: a new user's LoRA fine-tune within
# 30 min had read it as the pick's caveat
_ASSUMED = re.compile(r"^(?:[\w.]+ not given: |Q?LoRA rank \d+ on )")
# The words a row's software rule gives when the job runs there only experimentally
# (compat.job_support, compat.framework_words): "QLoRA (bitsandbytes 4-bit) on mps is
# experimental: <the rule's note>"
_EXPERIMENTAL = re.compile(r"^(.+? is experimental)(?:$|[:;,. ])")
# The answer's note on rows that run another precision than asked ("bf16 cannot run on NVIDIA
# TITAN RTX: estimated at fp16"): a risk of the rows it names, not of a pick it does not name
_OTHER_ROWS = re.compile(
    r"^(?:[\w.]+ cannot run on|no [\w.]+ for this model on) (.+): estimated at "
)


def _outlay(row: s.Recommendation, acquisition: str) -> tuple[int, float] | None:
    """What a row costs on the basis ``_price`` states, as a key that orders rows on one
    basis: (0, $/h) rented, (1, $) bought; None without a price."""
    basis = _basis(row, acquisition)
    if basis == "rent" and row.cost.rent is not None:
        return (0, row.cost.rent.usd_per_hour)
    if basis == "buy" and row.cost.buy is not None:
        return (1, row.cost.buy.usd)
    return None


def _ranked_speed(row: s.Recommendation) -> float:
    """The speed 'fastest' ranked the row on: its estimate, or the low end of a band that says
    the estimate likely overstates it (rank.ranked_share), so an 8 × MI355X ranked #9 at
    18,786 images/s is not counted a tie of the 8 × GB200 above it on its 46,677."""
    if _LEANS_HIGH in row.uncertainty.basis:
        return row.uncertainty.low
    return row.throughput.value


def _ties(rows: list[s.Recommendation], acquisition: str) -> str | None:
    """Under 'fastest', the rows shown whose speed is within FASTEST_TIE of the pick's
    (host-bound cards meet at one ceiling): the estimate does not separate them, so the verdict
    names the cheapest of them on the basis asked, or says none has a price."""
    top = rows[0]
    if top.serving is not None:
        return None
    near = [r for r in rows if _ranked_speed(r) * FASTEST_TIE >= _ranked_speed(top)]
    if len(near) < 2:
        return None
    share = round((FASTEST_TIE - 1) * 100)
    lead = (
        f"{len(near)} of the rows shown run within {share} % of its speed, closer than the "
        "estimate can tell apart"
    )
    priced = [(key, i) for i, r in enumerate(near) if (key := _outlay(r, acquisition))]
    if not priced:
        text = f"{lead}; none of them has a {_NO_PRICE[acquisition].removeprefix('no ')}"
        # the fastest row shown that can be had the way the question asks (GB200 racks top a
        # renter's fastest answer with no offer to rent)
        can = next((r for r in rows if _outlay(r, acquisition)), None)
        if can is not None:
            text += f"; the fastest shown that has one, {_name(can)} ({_speed(can)}), "
            text += _price(can, acquisition) or ""
        return text
    cheapest = near[min(priced)[1]]
    if cheapest is top:
        return f"{lead}; it is also the cheapest of them"
    return f"{lead}; the cheapest of them, {_name(cheapest)}, {_price(cheapest, acquisition)}"


def _priced_instead(rows: list[s.Recommendation], answer: s.RecommendationResponse) -> str:
    """' The first shown that has one, …' where the pick cannot be had the way the question
    asks (a GB200 rack nobody rents tops a renter's fastest answer), else that none can: a
    renter's default answer had read "Pick 8 × B300: no rental offer known" and stopped.
    Under 'balanced' a card with a price on the basis asked ranks before every card without
    one (rank.rank), so an unpriced pick that meets the target on supported software means no
    card that runs the job has one; under another objective only the rows shown are known."""
    acquisition = answer.acquisition
    can = next((r for r in rows[1:] if _outlay(r, acquisition)), None)
    if can is not None:
        which = "fastest" if answer.objective == "fastest" else "first"
        return (
            f" The {which} shown that has one, {_name(can)} ({_speed(can)}), "
            f"{_price(can, acquisition) or ''}."
        )
    lacks = _NO_PRICE[acquisition].removeprefix("no ")
    top = rows[0]
    ordered = top.meets_latency_target is not False and top.framework_status != "experimental"
    if answer.objective == "balanced" and ordered and top.serving is None:
        many = answer.count
        if many > 1:
            return f" None of the {many} GPUs that run it has a {lacks}."
        return f" No GPU that runs it has a {lacks}."
    if len(rows) == 1:
        return ""  # the pick's own "no … known" says it
    return f" None of the {len(rows)} rows shown has a {lacks}."


def _cost_key(row: s.Recommendation, acquisition: str) -> tuple[int, float] | None:
    """What 'cheapest' compares, as the verdict can read it: the job's cost where it has a
    length (2, $), else the price on the basis asked (``_outlay``). A row whose band leans
    high is ranked on the cost to finish at its range's low end (rank.ranked_figures), and
    the verdict weighs that figure too: it had called two rows within 5 % on estimates the
    ranking had not compared."""
    job = row.cost.job_cost_usd
    if job is None:
        return _outlay(row, acquisition)
    hours, u, c = row.time_to_finish_h, row.uncertainty, row.cost
    if _LEANS_HIGH in u.basis and hours is not None and 0 < u.factor_low < 1:
        low_end = costs.job_cost_over(
            acquisition,
            hours / u.factor_low,
            c.hourly_usd if c.rent_to_finish_usd is not None else None,
            c.purchase_usd if c.buy_to_finish_usd is not None else None,
            c.energy_usd_per_hour,
        )
        return (2, job if low_end is None else low_end)
    return (2, job)


def _low_end(row: s.Recommendation) -> str:
    """' at its range's low end' after a job's cost ``_cost_key`` read at that end."""
    u = row.uncertainty
    leans = _LEANS_HIGH in u.basis and row.time_to_finish_h is not None and 0 < u.factor_low < 1
    return " at its range's low end" if leans and row.cost.job_cost_usd is not None else ""


def _close_usd(value: float) -> str:
    """Two costs a few percent apart, told apart: cents keep a third figure ($0.031)."""
    return f"${value:,.3f}" if value < 1 else _usd(value)


def _fewer_cards(rows: list[s.Recommendation], acquisition: str) -> str | None:
    """Under 'cheapest', a row shown on fewer GPUs than the pick whose cost is within
    FASTEST_TIE of it: the estimates do not separate them, and one card is the simpler job
    (4 × RTX A4000 under QLoRA's FSDP at $0.029 against one RTX 4090 at $0.031)."""
    top = rows[0]
    key = _cost_key(top, acquisition)
    if top.serving is not None or top.num_gpus <= 1 or key is None:
        return None
    for r in rows[1:]:
        other = _cost_key(r, acquisition)
        if not (r.num_gpus < top.num_gpus and other and other[0] == key[0]):
            continue
        if other[1] <= key[1] * FASTEST_TIE:
            share = round((FASTEST_TIE - 1) * 100)
            cost = (
                f"{_close_usd(other[1])} for the job{_low_end(r)} against "
                f"{_close_usd(key[1])}{_low_end(top)}"
                if other[0] == 2
                else _price(r, acquisition)
            )
            return (
                f"{_name(r)} costs within {share} % of it on fewer GPUs ({cost}), "
                "closer than the estimate can tell apart"
            )
    return None


# A job that finishes within this on several GPUs is short enough that the time to start an
# instance and load the model, which no estimate here counts, is of its order or longer: the
# verdict then names what one GPU of the same card takes.
SHORT_JOB_H = 1 / 60


def _short_job(row: s.Recommendation, acquisition: str) -> str | None:
    """'The job is short: one NVIDIA B200 finishes it in 48 s ($0.07); …' for a multi-GPU pick
    whose job takes under SHORT_JOB_H (8 × B200 for a 6-second LoRA run)."""
    hours = row.time_to_finish_h
    if row.serving is not None or row.num_gpus <= 1 or hours is None or hours >= SHORT_JOB_H:
        return None
    one = next((a for a in row.alternatives if a.num_gpus == 1), None)
    if one is None or one.time_to_finish_h is None:
        return None
    # the rented figure with its start-up: under "either" the alternative's job_cost_usd may be
    # a purchase, which pays no start-up minute
    rented = acquisition in ("rent", "either") and one.hourly_usd is not None
    job = (
        costs.rent_job_usd(one.hourly_usd, one.time_to_finish_h)
        if rented and one.hourly_usd
        else None
    )
    cost = f" ({_close_usd(job)} rented)" if job else ""
    return (
        f"The job is short: one {row.gpu.name} finishes it in {_duration(one.time_to_finish_h)}"
        f"{cost}; starting an instance and loading the model, which these times leave out "
        "and the costs count as one minute, can take as long"
    )


# What a bought row's price leaves out (compat.purchase_caveats: the card alone, the host, the
# electricity, a used or market price): the scope of a figure, which a pick whose speed the
# engine itself says is likely overstated (``_leaning``) must not be closed with instead
_PRICE_SCOPE = ("the price ", "a used price", "a market price", "electricity ")
# The engine's own band basis for a convolution row of a vendor it has no published result for
# (bands._VENDOR_CONV_REASONS): its convolutions run another library at the GEMM rate
_LEANS_HIGH = bands.LEANS_HIGH
_CONV_LIBRARY = re.compile(r"convolutions run (\w+)")


def _leaning(row: s.Recommendation) -> str | None:
    """'its speed is likely overstated: no published result from this vendor (MIOpen, not
    cuDNN); the range is 347–1,417 images/s' where the row's band says its estimate leans high
    (bands.vendor_widening), else None. A student's first CNN card under $500 had picked an
    RX 9070 whose band said so, and the verdict's caveat was only that the price is the card
    alone (issue 23, 2026-12-06)."""
    u = row.uncertainty
    if _LEANS_HIGH not in u.basis:
        return None
    lib = _CONV_LIBRARY.search(u.basis)
    said = f" ({lib.group(1)}, not cuDNN)" if lib else ""
    return (
        f"its speed is likely overstated: no published result from this vendor{said}; the "
        f"range is {_fig(u.low)}–{_fig(u.high)} {row.throughput.unit}"
    )


def _deadline_risk(row: s.Recommendation, answer: s.RecommendationResponse) -> str | None:
    """'may miss the 24 h deadline: up to 33.9 h at the slow end of its range; 4 × RTX 3090
    (#5) meets it even there, up to 22.2 h' for a pick whose estimate meets the deadline and
    whose band's slow end does not, else None. The deadline keeps and ranks rows on their
    estimate, the engine's central figure: the calibrated bands are drawn to hold about 80 %
    of measurements, so roughly one run in ten is slower than the slow end, and ranking on it
    would near halve a deadline under a band of 0.58× and put a dearer card first for a risk
    the user never priced. The risk is the question's own, so it is the verdict's first
    caveat after an unmet latency target and experimental software, and the first row shown
    that meets the deadline even at its slow end is named, for a user who wants the margin."""
    d = answer.deadline
    if d is None or not d.met or not row.may_miss_deadline:
        return None
    text = next((w for w in row.warnings if w.startswith(deadline.MAY_MISS)), None)
    if text is None:
        return None
    # the row the deadline's rule names (deadline.rule), each row's slow end as it worked out
    safe = next((r for r in answer.recommendations if r.rank == d.safe_rank), None)
    if safe is None or safe.slow_end_hours is None:
        return text
    job = safe.cost.job_cost_usd
    cost = f", {_usd(job)} for the job" if job is not None else ""
    return (
        f"{text}; {_name(safe)} (#{safe.rank}) meets it even there, up to "
        f"{_duration(safe.slow_end_hours)}{cost}"
    )


def _caveat(
    row: s.Recommendation, answer: s.RecommendationResponse, setup_notes: frozenset[str]
) -> str | None:
    target = answer.workload.latency_target_ms
    if target is not None and row.meets_latency_target is False and row.latency_ms is not None:
        # rows that miss the target rank after every one that meets it: the pick missing it
        # means no card does, which the verdict must say before anything else
        text = (
            f"no GPU meets the latency target of {_fig(target)} ms for one whole batch; "
            f"this one takes {_fig(row.latency_ms)} ms"
        )
        # the first change whose answer meets it (the variations run for such an answer)
        fix = next((v for v in answer.what_if or () if v.meets_latency_target), None)
        if fix is not None and fix.top_name:
            text += f"; with {fix.change}, {config_name(fix.top_name, fix.num_gpus or 1)} does"
        return text
    if row.framework_status == "experimental":
        # a pick ranked after every supported row is one no supported card beat: that its
        # software runs the job only experimentally is the first risk (QLoRA on a Mac had
        # closed on bf16 speed while bitsandbytes' Apple kernels went unsaid)
        said = next((m.group(1) for w in row.warnings if (m := _EXPERIMENTAL.match(w))), None)
        if said is not None:
            return said
    late = _deadline_risk(row, answer)
    if late is not None:
        return late
    # a pick that may run out of memory comes before what its price leaves out (2 × RX 9070
    # at 0.35 GiB spare of 16 had closed on the cards' electricity)
    tight = next((w for w in row.warnings if w.startswith(TIGHT_FIT)), None)
    if tight is not None:
        return tight.rstrip(".")
    lean = _leaning(row)
    rented = _basis(row, answer.acquisition) == "rent"
    for text in (*row.warnings, *answer.warnings):
        if rented and is_owning_caveat(text):
            # asked "either", a pick the verdict prices rented: what its purchase price leaves
            # out (the host, cooling, a second-hand card) is no risk of renting it
            continue
        named = _OTHER_ROWS.match(text)
        if named is not None and row.gpu.name not in named.group(1).split(", "):
            continue
        if _ASSUMED.match(text):
            # a length or batch the request left blank is an assumption, which the
            # assumptions line states ("batch 8, sequence 896"), not a risk of the pick
            continue
        if text.endswith((AS_RELEASED, PUBLISHER_OWN)):
            # the model's own released weights (gpt-oss's MXFP4): no quality cost, no caveat
            continue
        if lean is not None and (text.startswith(_PRICE_SCOPE) or text in setup_notes):
            # a price's scope is said in the row, and so is which build of the framework to
            # install; a speed the engine says leans high is the pick's risk, what limits the
            # answer itself (TensorFlow on an RX 9070 had led with tensorflow-rocm's wheels)
            return lean
        # one line: the caveat itself; its source stays in the row's warnings
        return text.split(" (source:")[0].rstrip(".")
    if lean is not None:
        return lean
    u = row.uncertainty
    if u.factor_high / max(u.factor_low, 1e-9) > 2.0:
        return f"the estimate is loose ({_fig(u.low)}–{_fig(u.high)} {row.throughput.unit})"
    return None


def _assumptions(answer: s.RecommendationResponse) -> str:
    w = answer.workload
    sv = w.serving
    if sv is not None:
        load = (
            f"{sv.concurrent_requests:,g} concurrent requests"
            if sv.concurrent_requests
            else f"{given(sv.requests_per_s or 0)} requests/s"
        )
        parts = [f"serving {load}", f"{sv.prompt_tokens:,} tokens in, {sv.output_tokens:,} out"]
        parts.append(
            f"{sv.target_percentile} targets TTFT {_fig(sv.ttft_ms_target or 0)} ms and ITL "
            f"{_fig(sv.itl_ms_target or 0)} ms"
        )
        objective = answer.objective.replace("_", " ")
        return "Assuming " + ", ".join(parts) + f"; ranked by {objective}, {answer.acquisition}."
    parts = [w.task, w.precision, f"batch {w.batch_size:,}"]
    if w.model.family == "encoder-decoder" and w.task != "serving":
        parts.extend(_seq2seq_said(w))
    elif w.task == "inference" and w.model.family == "diffusion":
        parts.extend(_diffusion_said(w.model, w.preset in GUIDANCE_DISTILLED_DENOISERS))
    elif w.seq_len:
        parts.append(f"sequence {w.seq_len:,}")
    if w.peft != "none":
        # the form's words, as the page's "Job" line: "qlora" had read as an identifier
        parts.append(PEFT_LABELS.get(w.peft, w.peft))
    if w.dataset_samples and w.epochs:
        job = f"{w.dataset_samples:,.0f} samples × {w.epochs:g} epoch" + "s" * (w.epochs != 1)
        basis = w.dataset_basis or ""
        if basis.startswith("assumed"):
            job += f" ({basis})"
        parts.append(job)
    if w.runtime:
        parts.append(w.runtime)
    objective = answer.objective.replace("_", " ")
    return "Assuming " + ", ".join(parts) + f"; ranked by {objective}, {answer.acquisition}."


# Hugging Face's ASR pipeline chunks long audio into windows of chunk_length_s that overlap by
# stride_length_s = chunk_length_s / 6 on each side (pipelines/automatic_speech_recognition.py),
# so each window advances by 2/3 of its length: 1.5× the windows of back-to-back ones.
CHUNKED_WINDOWS = 1.5


def _seq2seq_said(w: s.ResolvedWorkload) -> list[str]:
    """What an encoder-decoder's estimate prices (app.domain.seq2seq): the encoder's input —
    audio windows where the model gives its input in seconds, else ``seq_len`` tokens, said
    as the rule it is so that a speech model described without ``input_size`` shows it — the
    decoder's tokens, and for inference the decoding (greedy, or the beams asked) and how
    windows count against an hour of audio."""
    m, out = w.model, []
    seconds, inference = m.input_size, w.task == "inference"
    if seconds:
        if inference:
            per_hour = 3600.0 / seconds
            out.append(
                f"{seconds:g}-second audio windows, back to back ({per_hour:,.0f} an hour of "
                f"audio; chunked long-form transcription with overlapping windows, as Hugging "
                f"Face's pipeline at chunk_length_s {seconds:g}, runs about "
                f"{CHUNKED_WINDOWS:g}× as many)"
            )
        else:
            out.append(f"{seconds:g}-second audio clips")
    elif w.seq_len:
        out.append(
            f"encoder input {w.seq_len:,} tokens (seq_len: no model.input_size, so priced as "
            "text; a speech model's input_size is its audio seconds, Whisper's 30)"
        )
    if inference:
        if w.output_tokens:
            out.append(f"{w.output_tokens:,} tokens out")
        out.append("greedy decoding (beam 1)" if w.beams <= 1 else f"beam search, {w.beams} beams")
    elif w.seq_len:
        out.append(f"{w.seq_len:,} target tokens")
    return out


def _diffusion_said(m: s.ModelOut, distilled: bool = False) -> list[str]:
    """What one generated image is in the estimate: its resolution (the preset's input_size)
    and its UNet passes — in pairs, the denoising steps under classifier-free guidance, each
    pair one UNet call on the conditional and unconditional latents together (perf._guidance,
    as diffusers runs it) — so the figure compares with the steps a user's UI runs. A
    guidance-distilled transformer (FLUX.1, ``distilled``) makes one call a step."""
    out = []
    if m.input_size:
        out.append(f"{m.input_size:g}×{m.input_size:g} images")
    passes = m.passes_per_sample or 0
    if distilled and passes >= 1:
        out.append(f"{passes} denoising steps, one transformer call each (guidance-distilled)")
    elif passes > 1 and passes % 2 == 0:
        out.append(
            f"{passes // 2} denoising steps with classifier-free guidance ({passes} UNet "
            "passes, one batched call a step)"
        )
    elif passes > 1:
        out.append(f"{passes} UNet passes an image")
    return out


def answer_summary(
    answer: s.RecommendationResponse, setup_notes: frozenset[str]
) -> s.AnswerSummaryOut:
    """The verdict and the assumptions line. ``setup_notes``: the framework rules' caveats
    (compat.setup_notes: how to set a card up, which a row's warnings say), which give way to
    a speed the engine says leans high."""
    rows = answer.recommendations
    if not rows:
        # the change the empty answer names first (empty.nearest: within the budget, then the
        # most GPUs opened first), so the verdict and `empty.message` never name two different
        # ones; with its best configuration, which the banner's list gives too
        fixes: list[s.NearestOut] | list[s.WhatIfOut]
        if answer.empty is not None and answer.empty.nearest:
            fixes = answer.empty.nearest
        else:
            fixes = [v for v in (answer.what_if or []) if v.can_run]
        sentence = "No GPU in the catalog can run this job within these limits"
        # a missed deadline that more GPUs, a faster card or copies meet: that change first,
        # not the deadline lifted (a 21,000-hour job had been offered "no deadline")
        meet = deadline.needs(answer.deadline)
        if deadline_first(meet, fixes[0].change if fixes else None):
            sentence += f"; {meet}"
        elif fixes:
            # the change is a what-if label ("no budget limit (the cheapest first)", "up to 16
            # GPUs"): named after a colon, it reads whole whatever its grammar
            n = fixes[0].can_run
            # the memory changes together are several changes, named in the label's brackets
            how = "these changes together" if misfit.is_combined(fixes[0].change) else "one change"
            sentence += f"; {kinds_of_gpu(n)} could with {how}: {fixes[0].change.rstrip('.')}"
            if fixes[0].top_name:
                sentence += f", best {best_config(fixes[0], answer.acquisition)}"
        # how far memory keeps it off the cards, as `empty.message` says it: the page shows
        # the verdict, not the message
        sentence += "." + misfit.words(answer, best_config)
        return s.AnswerSummaryOut(sentence=sentence, assumptions=_assumptions(answer))
    top = rows[0]
    why = []
    price = _price(top, answer.acquisition)
    why.append(price or _NO_PRICE[answer.acquisition])
    mem = top.memory
    if mem.headroom_gb is not None and mem.available_gb:
        spare, have = vram(max(0.0, mem.headroom_gb)), vram(mem.available_gb)
        cast = _kbit_cast(top, answer)
        why.append(f"fits with {_fig(spare)} GiB spare of {_fig(have)} GiB{_claimed(top)}{cast}")
    sv_asked = answer.workload.serving
    p95 = sv_asked is not None and sv_asked.target_percentile == "p95"
    pace = _latency(top, p95)
    training = answer.workload.task in TRAINING_TASKS
    why.append(
        f"runs {_speed(top)}{_pace(top, training)}"
        f"{_generating(top, answer.workload.batch_size or 1)}" + (f" ({pace})" if pace else "")
    )
    finish = _finish(top, answer.acquisition)
    if finish:
        why.append(finish)
    why.append(_limited(top, answer.workload.batch_size or 1))
    if top.serving is not None:
        # a serving plan names the formats it runs: quality is never traded silently
        sv = top.serving
        weights = weights_name(sv.weight_precision, sv.weight_format)
        kv = (
            f" and {sv.kv_cache_precision} KV cache"
            if sv.kind != "encoder"
            else f" on {runtime_name(sv.runtime)}"
        )
        why.insert(0, f"{weights} weights{kv}")
    sentence = f"Pick {_name(top)}: " + ", ".join(why) + "."
    if len(rows) > 1:
        second = rows[1]
        other = _price(second, answer.acquisition)
        # its price after a semicolon, not inside the speed's parentheses: a purchase's note
        # is itself parenthesised, and "(…, costs $1,600 to buy used (GPU Poet …))" had nested
        sentence += (
            f" Runner-up: {_name(second)} at {_speed(second)}"
            + (f" ({pace})" if (pace := _latency(second, p95)) else "")
            + (f"; it {other}" if other else "")
            + "."
        )
    ties = _ties(rows, answer.acquisition) if answer.objective == "fastest" else None
    if answer.objective == "cheapest":
        ties = _fewer_cards(rows, answer.acquisition)
    if ties:
        sentence += f" {ties[0].upper()}{ties[1:]}."
    if price is None and not (ties and "that has one" in ties):
        sentence += _priced_instead(rows, answer)
    short = _short_job(top, answer.acquisition)
    if short:
        sentence += f" {short}."
    return s.AnswerSummaryOut(
        sentence=_closed(sentence, top, answer, setup_notes), assumptions=_assumptions(answer)
    )


def _closed(
    sentence: str,
    top: s.Recommendation,
    answer: s.RecommendationResponse,
    setup_notes: frozenset[str],
) -> str:
    """The verdict with its endings: the pick's main caveat, then whether a price it quotes
    is stale (said here, so the API, the CLI and the page say it alike)."""
    caveat = _caveat(top, answer, setup_notes)
    if caveat:
        sentence += f" Caveat: {mid_sentence(caveat)}."
    stale = _stale_quoted(sentence, answer)
    return f"{sentence} {stale_note(stale)}" if stale else sentence


# How the verdict dates a price it quotes ("costs $453 to buy used as of 2026-09").
_AS_OF = re.compile(r"\bas of (\d{4}(?:-\d{2}){0,2})\b")
# The sentence that closes a verdict quoting a stale price (``stale_note``), for a page that
# marks it apart (``split_stale``).
_STALE_NOTE = re.compile(r" (The prices? as of [^.]*? (?:is|are) stale\.)$")


def _stale_quoted(sentence: str, answer: s.RecommendationResponse) -> list[str]:
    """The dates of the prices the verdict quotes that are stale: each row's rent and buy
    prices carry ``stale`` by the server's offer_stale_days (the offers API's rule, set
    before the summary is written), and a date is stale for every price it dates."""
    rows = list(answer.recommendations)
    if answer.serving is not None:
        rows += answer.serving.closest
    stale = {
        price.as_of
        for row in rows
        for price in (row.cost.rent, row.cost.buy)
        if price is not None and price.stale
    }
    return sorted({d for d in _AS_OF.findall(sentence) if d in stale})


def stale_note(dates: list[str]) -> str:
    """'The prices as of 2026-06 and 2026-09 are stale.': the one wording the API's summary,
    the CLI's verdict and the page give."""
    many = len(dates) > 1
    listed = f"{', '.join(dates[:-1])} and {dates[-1]}" if many else dates[0]
    return f"The price{'s' if many else ''} as of {listed} {'are' if many else 'is'} stale."


def split_stale(sentence: str) -> tuple[str, str | None]:
    """The verdict without its closing stale-price note, and the note (None: none): for a
    page that shows the note as a mark beside the sentence rather than in it."""
    found = _STALE_NOTE.search(sentence)
    if found is None:
        return sentence, None
    return sentence[: found.start()], found.group(1)

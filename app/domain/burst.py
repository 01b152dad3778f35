"""A burst: N requests sent at once and drained by a continuous-batching server — how long the
batch takes to finish (its makespan), and the output rate a benchmark that divides all output
tokens by that makespan reports (``vllm bench serve`` with no request rate, an offline
``LLM.generate`` over a list of prompts, ``benchmark_throughput.py``).

The steady state of app/domain/serving.py prices saturation: one ISL/OSL, the running batch
always full. A burst of requests of unequal lengths is not that: short answers finish first,
the queue empties, and the last steps run the longest answers at a small batch. ``drain``
follows the scheduler through the burst, one segment of identical steps at a time (a segment
ends when a prompt finishes, a decode finishes, a request is admitted or preempted), each step
priced by the one LLM step function (llm_step.Replica.step, the one serving and inference read).

The scheduler is vLLM V1's, FCFS (vllm/v1/core/sched/scheduler.py, Scheduler.schedule, as
stored @ 00024d31): the RUNNING requests first, a token each; when the cache cannot grow, the
last of them is preempted (``self.running.pop()``); the WAITING requests only in a step that
preempted none (``if not preempted_reqs``), in order, while the step's token budget
(max_num_batched_tokens), max_num_seqs and the KV pool allow; a resumed request finds what is
left of its blocks through the prefix cache (``get_computed_blocks``). Here a request is admitted
against its whole prompt (V1 allocates chunk by chunk), and after a preemption nothing is
admitted until a sequence finishes (V1 holds back one step; waiting for a finish keeps the
model out of an admit-and-evict loop): two approximations. TensorRT-LLM's MAX_UTILIZATION, the
policy trtllm-bench runs, follows the same rule: it schedules what fits the next step and, when
the cache runs out, pauses the last started request (``CapacitySchedulerPolicy``; source
trtllm-capacity-scheduler), whose generated tokens ``LlmRequest::pause`` moves into its prompt
to be prefilled again (cpp/include/tensorrt_llm/batch_manager/llmRequest.h): a recompute, as
vLLM's. A reserve-full policy (GUARANTEED_NO_EVICT) is not drained here.

``sharegpt`` builds the requests of a ShareGPT burst as vLLM's sampler draws them, from the
distribution data/request_lengths.yaml describes (its sources there).

Pure: frozen inputs, frozen outputs, no I/O.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.domain import efficiency, llm_step
from app.domain import serving as sv
from app.domain.gpu import GpuSpec
from app.domain.workload import ModelSpec


class BurstError(ValueError):
    """A burst the server cannot drain (one request's KV cache exceeds the pool)."""


@dataclass(frozen=True, slots=True)
class Request:
    prompt: int  # tokens
    output: int  # tokens generated (the first one at the end of its prompt)


@dataclass(frozen=True, slots=True)
class Limits:
    """One replica's scheduler limits."""

    max_batch: int  # most sequences in a step (max_num_seqs)
    chunk_tokens: int  # most tokens in a step (max_num_batched_tokens)
    kv_tokens: float  # tokens the replica's KV pool holds


@dataclass(frozen=True, slots=True)
class Drain:
    makespan_s: float
    requests: int
    output_tokens: int
    mean_output_tokens_per_s: float  # total output ÷ makespan: what a burst benchmark reports
    # the most output in one second of the burst (vllm bench serve's "Peak output token
    # throughput": its tokens counted per one-second bucket)
    peak_output_tokens_per_s: float
    mean_ttft_s: float  # from the burst's start, queueing included
    steps: int
    preemptions: int
    peak_batch: int


@dataclass(slots=True)
class _Seq:
    req: Request
    todo: int  # prompt tokens still to compute (a preempted sequence recomputes its context)
    context: int  # tokens in its KV cache once its prompt is in
    left: int  # output tokens still to generate
    first: bool  # its first token is still to come
    cached: int = 0  # preempted: its context still in the pool's free blocks (prefix cache)
    # decoding (``_Running``): its context less the clock, the clock at its last token, and
    # its place in admission order; ``context`` and ``left`` are current only off the batch
    base: int = 0
    end: int = 0
    order: int = -1


class _Running:
    """The decoding sequences in admission order, each one's counters kept against the decode
    steps run so far (``clock``): a segment of k steps advances them all at once, so it costs
    its events, not a pass over the batch (a 30,000-request burst at 128 / 128 runs ~3,500
    sequences through ~1,000 segments). Exact: every counter is a whole number of tokens."""

    def __init__(self) -> None:
        self.clock = 0
        self.queue: list[_Seq] = []  # admission order; finished or preempted ones left behind
        self.live = 0
        self.bases = 0  # Σ base over the live ones: their contexts sum to bases + live × clock
        self.ends: list[tuple[int, int, _Seq]] = []  # (end, order), a heap; stale entries too
        self.count = 0

    def __len__(self) -> int:
        return self.live

    def add(self, s: _Seq) -> None:
        s.base, s.end, s.order = s.context - self.clock, self.clock + s.left, self.count
        self.count += 1
        self.queue.append(s)
        self.live += 1
        self.bases += s.base
        heapq.heappush(self.ends, (s.end, s.order, s))

    def _drop(self, s: _Seq) -> _Seq:
        s.context, s.left = s.base + self.clock, s.end - self.clock
        s.order = -1
        self.live -= 1
        self.bases -= s.base
        return s

    def _tidy(self) -> None:
        while self.ends and self.ends[0][2].order != self.ends[0][1]:
            heapq.heappop(self.ends)
        while self.queue and self.queue[-1].order < 0:
            self.queue.pop()

    def least_left(self) -> float:
        self._tidy()
        return self.ends[0][0] - self.clock if self.ends else math.inf

    def context_sum(self) -> int:
        return self.bases + self.live * self.clock

    def oldest_context(self) -> int:
        s = next(x for x in self.queue if x.order >= 0)
        return s.base + self.clock

    def pop_newest(self) -> _Seq:
        self._tidy()
        return self._drop(self.queue.pop())

    def finish(self) -> list[_Seq]:
        """The sequences whose last token the clock has reached, in admission order."""
        out = []
        while self.ends and self.ends[0][0] <= self.clock:
            _end, order, s = heapq.heappop(self.ends)
            if s.order == order:
                out.append((order, self._drop(s)))
        self._tidy()
        return [x for _, x in sorted(out, key=lambda t: t[0])]


class _Pool:
    """The KV pool's free blocks as vLLM V1's free queue orders them (prefix caching, on by
    default in V1 — docs.rbln.ai's vLLM plugin page: "configured the same way as in vLLM. It
    is enabled by default"; SGLang's radix cache likewise): blocks are taken from the front, a
    freed block joins the back with its contents kept until it is taken (vllm/v1/core/
    kv_cache_utils.py, FreeKVCacheBlockQueue: "The least recent used block is at the front
    (LRU)"). A preempted sequence's blocks thus survive until the pool has handed out every
    block ahead of them, and it recomputes only what was taken."""

    def __init__(self, tokens: float) -> None:
        self.ahead = tokens  # free, ahead of every preempted sequence's kept blocks
        self.behind = 0.0  # freed after them
        self.kept: deque[_Seq] = deque()  # preempted sequences' kept contexts, oldest first

    def take(self, tokens: float) -> None:
        a = min(tokens, self.ahead)
        self.ahead -= a
        tokens -= a
        while tokens > 0 and self.kept:
            s = self.kept[0]
            e = min(float(s.cached), tokens)
            s.cached -= math.ceil(e)
            tokens -= e
            if s.cached <= 0:
                s.cached = 0
                self.kept.popleft()
        if not self.kept:
            self.ahead += self.behind
            self.behind = 0.0
        self.behind = max(0.0, self.behind - tokens)

    def give(self, tokens: float) -> None:
        if self.kept:
            self.behind += tokens
        else:
            self.ahead += tokens

    def keep(self, s: _Seq) -> None:
        s.cached = s.context
        self.kept.append(s)

    def reclaim(self, s: _Seq) -> int:
        """The tokens of ``s``'s context still cached, taken back by it."""
        hit = s.cached
        if hit:
            self.kept.remove(s)
            s.cached = 0
            if not self.kept:
                self.ahead += self.behind
                self.behind = 0.0
        return hit


def drain(eng: llm_step.Replica, requests: Sequence[Request], limits: Limits) -> Drain:
    """The makespan of ``requests`` sent at once to one replica of ``eng`` under ``limits``."""
    if not requests:
        raise BurstError("a burst needs at least one request")
    cap = max(1, limits.max_batch)
    chunk = max(1, limits.chunk_tokens)
    waiting: deque[_Seq] = deque(
        _Seq(r, max(1, r.prompt), max(1, r.prompt), max(1, r.output), True) for r in requests
    )
    prefill: list[_Seq] = []  # admitted, prompt not yet computed (FIFO)
    running = _Running()  # decoding, in admission order
    used = 0.0  # KV tokens held
    pool = _Pool(limits.kv_tokens)
    t = 0.0
    out = steps = preempted = peak_batch = 0
    ttft_sum = 0.0
    per_second: dict[int, float] = {}
    held = False  # after a preemption nothing is admitted until a sequence finishes
    while waiting or prefill or running:
        if not held:
            used = _admit(waiting, prefill, cap - len(running), used, pool, limits.kv_tokens)
        d = len(running)
        if not d and not prefill:
            if held:
                held = False
                continue
            raise BurstError(
                f"one request's {waiting[0].todo:,} tokens exceed the KV pool's "
                f"{limits.kv_tokens:,.0f}"
            )
        # the pool fills as every running sequence adds a token a step: preempt the newest
        room = limits.kv_tokens - used
        if d and room < d:
            if d == 1 and not prefill:
                raise BurstError(
                    f"one request's {running.oldest_context():,} tokens fill the KV pool's "
                    f"{limits.kv_tokens:,.0f}"
                )
            victim = running.pop_newest()
            used -= victim.context
            victim.todo = victim.context  # its prompt and its answer so far, if evicted
            pool.keep(victim)
            waiting.appendleft(victim)
            preempted += 1
            held = True
            continue
        # the step: every running sequence's decode, the budget's rest to the prompts (the
        # serving model's rule: at least a quarter of the budget, as in serving._solve)
        pending = sum(s.todo for s in prefill)
        f = float(min(pending, max(chunk - d, chunk // 4))) if prefill else 0.0
        k = running.least_left()
        if d:
            k = min(k, room // d)
        if f:
            head = prefill[0].todo
            k = min(k, max(1, head // int(f)))
        k = max(1, int(k))
        ctx = running.context_sum() / d + k / 2.0 if d else 0.0
        prompt = prefill[0].req.prompt if prefill else 0
        ts, _ = eng.step(float(d), ctx, f, float(prompt), with_prompt=bool(f))
        dt = k * ts
        t0, t = t, t + dt
        steps += k
        peak_batch = max(peak_batch, d + len(prefill))
        emitted = d * k
        running.clock += k
        used += d * k
        pool.take(d * k)
        done = _prompts(prefill, f * k)
        firsts = sum(1 for s in done if s.first)
        for s in done:
            if s.first:  # a prompt done emits its first token
                s.first = False
                s.left -= 1
                s.context += 1
        ttft_sum += firsts * t
        used += firsts
        pool.take(firsts)
        emitted += firsts
        out += emitted
        _spread(per_second, t0, t, emitted)
        finished = running.finish() + [s for s in done if s.left <= 0]
        for s in finished:
            used -= s.context
            pool.give(s.context)
        held = held and not finished
        for s in done:
            if s.left > 0:
                running.add(s)
    n = len(requests)
    return Drain(
        makespan_s=t,
        requests=n,
        output_tokens=out,
        mean_output_tokens_per_s=out / t if t > 0 else 0.0,
        peak_output_tokens_per_s=max(per_second.values(), default=0.0),
        mean_ttft_s=ttft_sum / n,
        steps=steps,
        preemptions=preempted,
        peak_batch=peak_batch,
    )


def _admit(
    waiting: deque[_Seq],
    prefill: list[_Seq],
    slots: int,
    used: float,
    pool: _Pool,
    kv_tokens: float,
) -> float:
    """Admit waiting sequences, in order (FCFS: none skips ahead), while a slot and the pool
    allow the next one's prompt; the KV tokens held after."""
    while waiting and len(prefill) < slots:
        need = waiting[0].todo
        if used + need > kv_tokens:
            break
        used += need
        s = waiting.popleft()
        hit = pool.reclaim(s)
        pool.take(need - hit)
        s.todo = max(1, need - hit)  # a preempted sequence recomputes what was evicted
        prefill.append(s)
    return used


def _prompts(prefill: list[_Seq], budget: float) -> list[_Seq]:
    """Spend ``budget`` prompt tokens on ``prefill``, head first; the sequences whose prompt
    is done, taken off it."""
    done: list[_Seq] = []
    while prefill and budget >= prefill[0].todo:
        s = prefill.pop(0)
        budget -= s.todo
        s.todo = 0
        done.append(s)
    if prefill and budget > 0:
        prefill[0].todo -= int(budget)
    return done


def _spread(buckets: dict[int, float], t0: float, t1: float, tokens: float) -> None:
    """Add ``tokens`` emitted evenly over [t0, t1) to one-second buckets."""
    if t1 <= t0:
        buckets[int(t0)] = buckets.get(int(t0), 0.0) + tokens
        return
    rate = tokens / (t1 - t0)
    for sec in range(int(t0), math.ceil(t1)):
        overlap = min(t1, sec + 1.0) - max(t0, float(sec))
        if overlap > 0:
            buckets[sec] = buckets.get(sec, 0.0) + rate * overlap


# ---------------------------------------------------------------- a dataset's lengths


@dataclass(frozen=True, slots=True)
class LengthModel:
    """How a benchmark's sampler draws request lengths (data/request_lengths.yaml): each of
    prompt and output follows an exponential law (the most even one a mean and a floor allow;
    a constant chance of ending at each token) truncated to the sampler's filters, the output
    within what the prompt leaves of ``max_total``."""

    name: str
    min_tokens: int  # shorter prompts and outputs are dropped
    max_prompt: int  # longer prompts are dropped
    max_total: int  # prompt + output beyond it are dropped
    mean_prompt: float  # tokens a request, after the filters
    mean_output: float
    source: str = ""


def _trunc_mean(lo: float, hi: float, scale: float) -> float:
    """Mean of an exponential law of ``scale`` on [lo, hi]."""
    w = hi - lo
    if w <= 0:
        return lo
    r = w / scale
    if r < 1e-9:
        return lo + w / 2.0
    return lo + scale - w / math.expm1(r) if r < 700 else lo + scale


def _trunc_quantile(q: float, lo: float, hi: float, scale: float) -> float:
    w = hi - lo
    if w <= 0:
        return lo
    return lo - scale * math.log1p(q * math.expm1(-w / scale))


def _scale_for(mean: float, bounds: Sequence[tuple[float, float]]) -> float:
    """The exponential scale whose truncations to ``bounds`` average ``mean`` (bisection on
    a log scale: the truncated mean grows with the scale)."""
    lo_s, hi_s = 1e-3, 1e7

    def avg(scale: float) -> float:
        return sum(_trunc_mean(a, b, scale) for a, b in bounds) / len(bounds)

    if not avg(lo_s) <= mean <= avg(hi_s):
        raise BurstError(f"no length law of mean {mean:g} within the sampler's filters")
    for _ in range(200):
        mid = math.sqrt(lo_s * hi_s)
        if avg(mid) < mean:
            lo_s = mid
        else:
            hi_s = mid
        if hi_s / lo_s < 1.0 + 1e-9:
            break
    return math.sqrt(lo_s * hi_s)


def _stride(n: int, share: float) -> int:
    """A step coprime with ``n`` near ``share`` × n (1 ÷ φ or 1 ÷ φ²): visits 0..n−1 in an
    order far from their own, deterministically — to pair a prompt quantile with an output
    quantile independently of it, and to shuffle the burst's order."""
    s = max(1, round(n * share))
    while math.gcd(s, n) != 1:
        s += 1
    return s


def sample(
    model: LengthModel,
    n: int,
    mean_prompt: float | None = None,
    mean_output: float | None = None,
) -> list[Request]:
    """``n`` requests at evenly spaced quantiles of ``model`` (deterministic: the same burst
    each call). ``mean_prompt`` / ``mean_output``: a run's own means where it states them (its
    token totals over its requests), else the model's."""
    if n < 1:
        raise BurstError("a burst needs at least one request")
    lo = float(model.min_tokens)
    mp = model.mean_prompt if mean_prompt is None else mean_prompt
    mo = model.mean_output if mean_output is None else mean_output
    p_scale = _scale_for(mp, [(lo, float(model.max_prompt))])
    qs = [(i + 0.5) / n for i in range(n)]
    prompts = [_trunc_quantile(q, lo, model.max_prompt, p_scale) for q in qs]
    # an output is drawn given its prompt: within what the prompt leaves of max_total
    tops = [max(lo, model.max_total - p) for p in prompts]
    o_scale = _scale_for(mo, [(lo, top) for top in tops])
    step = _stride(n, 0.6180339887)
    out = []
    for i, (p, top) in enumerate(zip(prompts, tops, strict=True)):
        o = _trunc_quantile(qs[(i * step) % n], lo, top, o_scale)
        out.append(Request(max(1, round(p)), max(1, round(o))))
    # sent in a shuffled order (vLLM shuffles the dataset once, seeded), not by length
    order = _stride(n, 0.3819660113)
    return [out[(i * order) % n] for i in range(n)]


def fixed(n: int, prompt: int, output: int) -> list[Request]:
    """``n`` requests of one length (vLLM's random dataset at range ratio 0, a fixed-length
    offline benchmark)."""
    return [Request(prompt, output)] * n


# ---------------------------------------------------------------- a serving configuration


def limits(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: sv.ServingConfig,
    rt: sv.RuntimeProfile,
    usable_gb: float,
    requests: Sequence[Request],
) -> Limits:
    """The scheduler limits of one replica of ``cfg`` (``rt``: the runtime on ``gpu``): its
    sequence cap and step budget, and its KV pool in tokens (serving.memory_plan's pool, the
    cache's bytes a token at the burst's mean length, the copies a latent cache keeps)."""
    *_, pool = sv.memory_plan(gpu, model, cfg, rt, usable_gb)
    mean_len = sum(r.prompt + r.output for r in requests) / max(1, len(requests))
    per_token = sv.kv_values(model, mean_len) * sv.KV_BYTES[cfg.kv_precision] / mean_len
    copies = llm_step.kv_copies(model, llm_step.span(rt.decode, cfg.gpus_per_replica)[0])
    kv = max(0.0, pool) * sv.GB * cfg.gpus_per_replica / copies / per_token
    cap = rt.max_batch if rt.continuous_batching else 1
    return Limits(cap, rt.chunk_tokens, kv)


def evaluate(
    gpu: GpuSpec,
    model: ModelSpec,
    cfg: sv.ServingConfig,
    requests: Sequence[Request],
    *,
    runtime: sv.RuntimeProfile,
    usable_gb: float | None = None,
    memory_efficiency: float = 0.88,
    compute_efficiency: Mapping[str, float] | None = None,
) -> Drain:
    """``requests`` sent at once to one replica of ``cfg``: the replica serving.evaluate
    prices (serving.replica, the runtime's limits on ``gpu``), drained."""
    rt = runtime.on(gpu)
    if rt.name != cfg.runtime:
        raise ValueError(f"configuration runs {cfg.runtime}, profile is {rt.name}")
    usable = efficiency.usable_gb(gpu) if usable_gb is None else usable_gb
    comp = compute_efficiency if compute_efficiency is not None else sv.DEFAULT_COMPUTE
    eng = sv.replica(gpu, model, cfg, rt, memory_efficiency, comp)
    return drain(eng, requests, limits(gpu, model, cfg, rt, usable, requests))

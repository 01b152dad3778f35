"""Serving an encoder (an embedding model, a reranker, BERT) behind a dynamic batcher: the
queueing around the engine's own forward pass (perf.estimate of the encoder's inference at a
batch), as app/domain/serving.py is the queueing around llm_step's decode step.

* A request carries one sequence or a few (``EncoderLoad.inputs``): one forward pass each, no
  decode and no KV cache. Its answer (the embeddings, the scores) comes back when the batch
  its last sequence rode in ends.
* The runtime's batcher takes what is queued when the GPU frees, up to its cap (``RUNTIMES``:
  each server's defaults, read from its code): TEI and vLLM's pooling runner count tokens and
  run the batch unpadded (varlen), so a batch costs the sum of its sequences; infinity and
  sentence-transformers count sequences and pad each batch to its longest
  (``EncoderLoad.longest_tokens``; at one length the two cost the same). sentence-transformers
  behind a plain server runs one request at a time.
* Concurrent clients (a closed loop) that fit one batch ride together: latency is one batch's
  time; beyond the cap full batches run back to back and Little's law gives the latency.
  Random arrivals (an open loop) form a batch of what came during the last one; a request
  waits for the batch running when it came or, near capacity, in an M/D/1 queue (``_open``).
* Capacity is the full batch's rate; an arrival rate past ``serving.NEAR_CAPACITY`` of it
  misses, as a decoder plan does. Cost is per embedding (a sequence), not per request.

Pure, no I/O: the caller hands the step function (``engine_step``) and the runtime row.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from app.domain import efficiency, perf
from app.domain.calibration import Calibration
from app.domain.gpu import GpuSpec
from app.domain.serving import NEAR_CAPACITY, capacity_percent
from app.domain.workload import ModelSpec, ServingSpec, WorkloadSpec, memory_breakdown
from app.vocab import EncoderServingRuntime


@dataclass(frozen=True, slots=True)
class EncoderRuntime:
    """One embedding server's batcher at its defaults, and the engine runtime whose kernel
    rows price its forward pass (``kernels``)."""

    name: EncoderServingRuntime
    version: str
    batch_tokens: int | None  # most tokens in one batch (TEI --max-batch-tokens)
    batch_requests: int | None  # most sequences in one batch (infinity/ST batch_size)
    padded: bool  # a batch runs at its longest sequence's length
    across_requests: bool  # the batcher groups different clients' requests
    kernels: str  # the engine runtime (data/efficiency.yaml) its kernels are priced as
    source: str
    # the name its hardware rules go under (data/frameworks.yaml ``runtime:<name>``); None: its
    # own. vLLM's pooling runner is vLLM, on vLLM's hardware
    rules: str | None = None

    @property
    def rules_name(self) -> str:
        return self.rules or self.name


# The runtimes' own defaults, read from their code (no tuning):
# * TEI (huggingface/text-embeddings-inference router/src/main.rs @ 0236f187): max_batch_tokens
#   16384, max_batch_requests unset, max_concurrent_requests 512. Its candle flash-bert backend
#   runs unpadded varlen batches and fuses residual add + LayerNorm (backends/candle/src/layers/
#   layer_norm.rs fused_add_layer_norm) and bias + activation into cuBLASLt epilogues
#   (layers/linear.rs): the fused elementwise work the engine prices for a compiled runtime, so
#   its kernels are priced as torch-compile's (Inductor fuses the same joins).
# * infinity (michaelfeil/infinity libs/infinity_emb/infinity_emb/env.py @ 0eda8f5f):
#   INFINITY_BATCH_SIZE 32 sentences, INFINITY_COMPILE false (eager torch), batches padded to
#   their longest (its queue sorts by length, so a busy server's batches pad little).
# * sentence-transformers (SentenceTransformer.encode batch_size=32): padded, and a server that
#   wraps it runs each request's sentences as their own batches (no batching across clients).
# * vLLM's pooling runner (``--task embed`` / ``--runner pooling``): max_num_batched_tokens
#   raised to POOLING_MODEL_MAX_NUM_BATCHED_TOKENS 32768 for a pooling model (vllm/utils,
#   config/scheduler.py), max_num_seqs 256 (the API server's default below 70 GiB; 1024 above,
#   where the token cap binds first past 32 tokens a sequence); tokens packed unpadded; encoder
#   models run eager (no CUDA graphs), so its kernels are priced as eager PyTorch's.
RUNTIMES: dict[str, EncoderRuntime] = {
    "tei": EncoderRuntime(
        "tei",
        "1.x",
        batch_tokens=16384,
        batch_requests=None,
        padded=False,
        across_requests=True,
        kernels="torch-compile",
        source="huggingface/text-embeddings-inference router/src/main.rs (--max-batch-tokens)",
    ),
    "infinity": EncoderRuntime(
        "infinity",
        "0.0.x",
        batch_tokens=None,
        batch_requests=32,
        padded=True,
        across_requests=True,
        kernels="pytorch",
        source="michaelfeil/infinity infinity_emb/env.py (INFINITY_BATCH_SIZE 32)",
    ),
    "sentence-transformers": EncoderRuntime(
        "sentence-transformers",
        "3.x",
        batch_tokens=None,
        batch_requests=32,
        padded=True,
        across_requests=False,
        kernels="pytorch",
        source="sentence-transformers SentenceTransformer.encode (batch_size=32)",
    ),
    "vllm-pooling": EncoderRuntime(
        "vllm-pooling",
        "0.10+",
        batch_tokens=32768,
        batch_requests=256,
        padded=False,
        across_requests=True,
        kernels="pytorch",
        source="vllm-project/vllm vllm/utils POOLING_MODEL_MAX_NUM_BATCHED_TOKENS (32768)",
        rules="vllm",
    ),
}
DEFAULT_RUNTIME = "tei"
# where the default cannot run (TEI below compute capability 7.5, on a Radeon), the server a
# request that names none is planned on instead: infinity is a PyTorch program, so it runs
# wherever the card's PyTorch backend does (the gate every encoder row passes)
FALLBACK_RUNTIME = "infinity"


@dataclass(frozen=True, slots=True)
class EncoderLoad:
    """Sequences of ``tokens`` each (the mean), ``longest_tokens`` the longest a padded batch
    runs at (None: all of one length), under concurrent clients or an arrival rate."""

    tokens: int
    concurrent_requests: float | None = None
    requests_per_s: float | None = None
    longest_tokens: int | None = None
    inputs: int = 1  # sequences a request carries (TEI --max-client-batch-size: 32)

    def padded_to(self, rt: EncoderRuntime) -> int:
        """The length each sequence of a batch is computed at on ``rt``."""
        longest = max(self.tokens, self.longest_tokens or self.tokens)
        return longest if rt.padded else self.tokens


def load_of(spec: ServingSpec, inputs: int = 1) -> EncoderLoad:
    """The decoder serving's load read for an encoder, its fields meaning what they mean
    there: the prompt is the sequence, its spread the longest a padded batch runs at (mean +
    spread, as the KV cache is sized), the clients or the rate as they are; output tokens have
    no part (the answer is the forward pass's pooled output)."""
    spread = spec.prompt_tokens_spread
    return EncoderLoad(
        tokens=max(1, spec.prompt_tokens),
        concurrent_requests=spec.concurrent_requests,
        requests_per_s=spec.requests_per_s,
        longest_tokens=spec.prompt_tokens + spread if spread else None,
        inputs=max(1, inputs),
    )


def latency_target(spec: ServingSpec) -> tuple[float | None, bool]:
    """The latency an encoder's request is held to, and at p95 or not: the decoder's time to
    first token, which for one forward pass is the whole answer (no inter-token latency)."""
    return spec.ttft_ms_target, spec.target_percentile == "p95"


def batch_cap(rt: EncoderRuntime, load: EncoderLoad) -> int:
    """The most sequences one batch carries: the runtime's sequence cap, and its token cap over
    the tokens a sequence brings (TEI counts real tokens, not padded ones)."""
    cap = rt.batch_requests or 1 << 30
    if rt.batch_tokens is not None:
        cap = min(cap, rt.batch_tokens // max(1, load.tokens))
    return max(1, cap)


# seconds one batch of (sequences, tokens each) takes on one GPU
StepFn = Callable[[int, int], float]


@dataclass(frozen=True, slots=True)
class EncoderPoint:
    """One load of a row's latency-throughput curve: ``clients`` concurrent clients over all
    replicas, the latency they see and the embeddings a second they get."""

    clients: int
    latency_ms: float
    latency_p95_ms: float
    embeddings_per_s: float


@dataclass(frozen=True, slots=True)
class EncoderResult:
    """One replica count of one card under the load (all replicas share it evenly)."""

    runtime: str
    replicas: int
    batch_cap: int  # sequences per batch
    batch: float  # mean sequences per batch at the load
    latency_ms: float | None  # mean, request in to embedding out; None: not carried
    latency_p95_ms: float | None
    requests_per_s: float | None  # all replicas, at the load
    tokens_per_s: float | None
    max_requests_per_s: float  # all replicas, at saturation
    load_share: float | None  # a rate load's share of capacity
    batch_ms: float  # one full batch's time
    notes: tuple[str, ...] = ()
    inputs: int = 1  # sequences (embeddings) a request carries
    curve: tuple[EncoderPoint, ...] = ()  # latency against throughput as clients grow (``curve``)

    @property
    def embeddings_per_s(self) -> float | None:
        return None if self.requests_per_s is None else self.requests_per_s * self.inputs

    def usd_per_million(self, usd_per_hour: float | None, saturated: bool = False) -> float | None:
        """What a million embeddings (sequences, not requests) cost on hardware billed
        ``usd_per_hour`` (all replicas): at the asked load, or at saturation (a bulk job that
        keeps the GPUs busy)."""
        rate = self.max_requests_per_s if saturated else self.requests_per_s
        if not usd_per_hour or not rate or rate <= 0.0:
            return None
        return usd_per_hour / (rate * self.inputs * 3600.0) * 1e6


def _closed(step: StepFn, n: float, cap: int, length: int) -> tuple[float, float, float, float]:
    """Mean latency, p95 latency, sequence rate and mean batch of one replica with ``n``
    sequences always outstanding (clients that send the next request when the last is
    answered)."""
    n = max(1.0, n)
    if n <= cap:
        # every outstanding sequence rides the same batch: its time is everyone's latency
        t = step(max(1, math.ceil(n)), length)
        return t, t, n / t, n
    t = step(cap, length)
    rate = cap / t
    # full batches back to back; each waits for those ahead of it (Little's law)
    return n / rate, math.ceil(n / cap) * t, rate, float(cap)


def _open(
    step: StepFn, lam: float, cap: int, length: int
) -> tuple[float, float, float, float] | None:
    """Mean latency, p95 latency, sequence rate and mean batch of one replica under Poisson
    arrivals of ``lam`` sequences/s; None at or past capacity. A batch holds what came during
    the one before (at least the sequence that found the GPU idle): b = max(1, λ·S(b)), which
    grows without bound as λ nears the full batch's rate (so b is capped there)."""
    t_full = step(cap, length)
    rho = lam * t_full / cap
    if rho >= 1.0:
        return None
    b = 1.0
    for _ in range(60):
        new = min(float(cap), max(1.0, lam * step(max(1, math.ceil(b)), length)))
        if abs(new - b) < 1e-3 * b:
            b = new
            break
        b = 0.5 * (b + new)
    t = step(max(1, math.ceil(b)), length)
    busy = min(1.0, lam * t / b)
    # the wait before its batch starts: the rest of the batch running when it came (S/2 of a
    # busy GPU's), or, near capacity, the queue random arrivals build, as an M/D/1 at the
    # capacity's utilisation over the batch's time (the fluid batch alone never queues). The
    # larger of the two: each is the other's limit at its end of the load.
    wait = max(busy * t / 2.0, rho / (2.0 * (1.0 - rho)) * t)
    return t + wait, t + 3.0 * wait, lam, b


def busy_n(load: EncoderLoad, replicas: int) -> float:
    """Replicas with a request to run: all under a rate, at most the clients under
    concurrency (fewer clients than replicas leave the rest idle)."""
    if load.requests_per_s is not None:
        return float(replicas)
    return min(float(replicas), max(1.0, load.concurrent_requests or 1.0))


def _request_service(step: StepFn, k: int, cap: int, length: int) -> float:
    """One request's ``k`` sequences run as their own batches of up to ``cap``."""
    full, rest = divmod(k, cap)
    return full * step(cap, length) + (step(rest, length) if rest else 0.0)


def _one_at_a_time(
    service: float, load: EncoderLoad, replicas: float
) -> tuple[float, float, float] | None:
    """A server that runs the requests one after another, each its own batches
    (sentence-transformers behind a plain web server): a single server of service time S, an
    M/D/1 under a rate, a queue of the other clients under concurrency. Mean latency, p95 and
    request rate of one replica; None at or past capacity."""
    if load.requests_per_s is not None:
        lam = load.requests_per_s / replicas
        rho = lam * service
        if rho >= 1.0:
            return None
        wait = rho / (2.0 * (1.0 - rho)) * service
        return service + wait, service + 3.0 * wait, lam
    n = max(1.0, (load.concurrent_requests or 1.0) / replicas)
    return n * service, math.ceil(n) * service, 1.0 / service


def evaluate(
    step: StepFn, rt: EncoderRuntime, load: EncoderLoad, replicas: int = 1
) -> EncoderResult:
    """One card × ``replicas`` serving ``load`` on ``rt`` (each replica one GPU). The batcher
    works in sequences: a request of k inputs puts k in its queue and is answered with its
    last (TEI and infinity split a client's batch into the queue)."""
    r = max(1, replicas)
    k = max(1, load.inputs)
    cap = batch_cap(rt, load)
    length = load.padded_to(rt)
    notes: list[str] = []
    t_full = step(cap, length)
    share: float | None = None
    busy = busy_n(load, r)
    if not rt.across_requests:
        service = _request_service(step, k, cap, length)
        sat_req = 1.0 / service
        if load.requests_per_s is not None:
            share = load.requests_per_s / (sat_req * r)
        alone = _one_at_a_time(service, load, busy_n(load, r))
        per_batch = k / math.ceil(k / cap)
        point = (*alone, per_batch) if alone is not None else None
    else:
        sat_req = cap / t_full / k
        if load.requests_per_s is not None:
            share = load.requests_per_s / (sat_req * r)
            seq = _open(step, load.requests_per_s / r * k, cap, length)
        else:
            seq = _closed(step, (load.concurrent_requests or 1.0) / busy * k, cap, length)
        point = (seq[0], seq[1], seq[2] / k, seq[3]) if seq is not None else None
        if load.concurrent_requests is not None and load.concurrent_requests / busy * k > cap:
            notes.append(
                f"{load.concurrent_requests:g} concurrent requests ({k} input"
                f"{'s' if k > 1 else ''} each) exceed what one batch of {cap:,} carries"
                f"{' per replica' if r > 1 else ''}: the rest queue for the next"
            )
    if point is None or (share is not None and share >= 1.0):
        return EncoderResult(
            rt.name,
            r,
            cap,
            float(cap),
            None,
            None,
            None,
            None,
            sat_req * r,
            share,
            t_full * 1e3,
            (
                f"{load.requests_per_s:g} requests/s is beyond this configuration's "
                f"{sat_req * r:,.1f} at saturation",
            ),
        )
    mean, p95, rate, b = point
    if rt.padded and length > load.tokens:
        notes.append(
            f"{rt.name} pads each batch to its longest sequence ({length:,} tokens, not the "
            f"mean {load.tokens:,})"
        )
    return EncoderResult(
        runtime=rt.name,
        replicas=r,
        batch_cap=cap,
        batch=b,
        latency_ms=mean * 1e3,
        latency_p95_ms=p95 * 1e3,
        requests_per_s=rate * busy,
        tokens_per_s=rate * busy * k * load.tokens,
        max_requests_per_s=sat_req * r,
        load_share=share,
        batch_ms=t_full * 1e3,
        notes=tuple(notes),
        inputs=k,
    )


def curve(
    step: StepFn, rt: EncoderRuntime, load: EncoderLoad, replicas: int = 1
) -> tuple[EncoderPoint, ...]:
    """The shape's latency against embeddings a second as concurrent clients grow, doubling
    from one to twice what the replicas' full batches hold (a server that batches no clients'
    requests together: to four a replica), so the curve runs past saturation, where the
    throughput stops and the latency climbs (``evaluate`` at each count, closed loop)."""
    r = max(1, replicas)
    per = batch_cap(rt, load) if rt.across_requests else 2
    top = 2 * per * r
    counts: list[int] = []
    n = 1
    while n < top:
        counts.append(n)
        n *= 2
    counts.append(top)
    out: list[EncoderPoint] = []
    for n in counts:
        at = dataclasses.replace(load, concurrent_requests=float(n), requests_per_s=None)
        res = evaluate(step, rt, at, r)
        if res.latency_ms is None or res.latency_p95_ms is None:
            continue
        out.append(EncoderPoint(n, res.latency_ms, res.latency_p95_ms, res.embeddings_per_s or 0.0))
    return tuple(out)


def meets(
    result: EncoderResult, latency_ms: float | None, p95: bool = False
) -> tuple[bool, list[str]]:
    """Whether the result carries the load within the latency target (and a rate load within
    ``NEAR_CAPACITY`` of the capacity), and each miss in words."""
    lat = result.latency_p95_ms if p95 else result.latency_ms
    if lat is None:
        return False, ["cannot carry the load"]
    misses: list[str] = []
    if latency_ms is not None and lat > latency_ms:
        misses.append(f"latency {lat:,.0f} ms > {latency_ms:,.0f} ms")
    if result.load_share is not None and result.load_share > NEAR_CAPACITY:
        misses.append(
            f"load {capacity_percent(result.load_share)} of modelled capacity > "
            f"{100 * NEAR_CAPACITY:.0f} % (the margin random arrivals need)"
        )
    return not misses, misses


def engine_step(
    gpu: GpuSpec,
    work: WorkloadSpec,
    rt: EncoderRuntime,
    calibration: Calibration | None = None,
    flash_attention: bool = True,
) -> StepFn:
    """The engine's forward pass of the encoder ``work`` (its model, precision and efficiency
    table; batch and length are the batcher's) on ``gpu`` under ``rt``'s kernels: the same
    perf.estimate batch inference prices, memoised per batch shape. ``flash_attention``
    False: the unfused attention a build without FlashAttention runs (infinity on ROCm)."""
    base = dataclasses.replace(work, task="inference", runtime=rt.kernels)

    @lru_cache(maxsize=256)
    def step(batch: int, tokens: int) -> float:
        job = dataclasses.replace(base, batch_size=max(1, batch), seq_len=max(1, tokens))
        return perf.estimate(
            gpu, job, calibration=calibration, flash_attention=flash_attention
        ).step_time_s

    return step


def plan(
    step: StepFn,
    rt: EncoderRuntime,
    load: EncoderLoad,
    latency_ms: float | None,
    p95: bool = False,
    max_replicas: int = 64,
) -> EncoderResult:
    """The fewest replicas of one card that carry ``load`` within the latency target (and a
    rate load within ``NEAR_CAPACITY``), as the decoder planner adds replicas until a shape
    meets its targets; the largest count tried where none does (its misses say why).
    Concurrent clients gain from a replica only where they queue past one batch."""
    result = evaluate(step, rt, load, 1)
    for n in range(2, max(1, max_replicas) + 1):
        if meets(result, latency_ms, p95)[0]:
            break
        nxt = evaluate(step, rt, load, n)
        better = (nxt.latency_ms or math.inf) < (result.latency_ms or math.inf) * 0.999
        if not better and result.latency_ms is not None and load.requests_per_s is None:
            break  # more replicas than clients: no faster
        result = nxt
    return result


def fits(gpu: GpuSpec, work: WorkloadSpec, rt: EncoderRuntime, load: EncoderLoad) -> str | None:
    """Why a full batch does not fit the card's memory (None when it does): the weights and the
    activations of ``batch_cap`` sequences at the batch's length, as batch inference counts
    them (TEI warms up at --max-batch-tokens and stops if that batch does not fit)."""
    cap = batch_cap(rt, load)
    job = dataclasses.replace(
        work,
        task="inference",
        runtime=rt.kernels,
        batch_size=cap,
        seq_len=load.padded_to(rt),
    )
    need = memory_breakdown(job).total
    have = efficiency.usable_gb(gpu)
    if need <= have:
        return None
    return (
        f"a full batch ({cap:,} × {load.padded_to(rt):,} tokens) needs {need:,.1f} GB of "
        f"{have:,.1f} GB usable; lower {rt.name}'s batch limit"
    )


def is_encoder(model: ModelSpec) -> bool:
    """Whether serving plans the model as an encoder (one forward pass a request)."""
    return model.family == "encoder"


# The dtype flag each server takes for the row's precision. TEI's --dtype offers float16 and
# float32 (its CLI arguments): bf16 runs as float16, at the same tensor-core rate; infinity
# (--dtype float16|bfloat16|float32, its v2 CLI) and vLLM (--dtype) take bf16 as it is.
_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
_TEI_DTYPES = {"fp16": "float16", "bf16": "float16", "fp32": "float32"}
# TEI's defaults the priced batcher leaves as they are unless the load needs more:
# --max-client-batch-size 32 inputs a request, --max-concurrent-requests 512 (router/src/main.rs)
TEI_CLIENT_BATCH = 32
TEI_CONCURRENT = 512


def serve_args(
    rt: EncoderRuntime,
    model: str,
    precision: str,
    load: EncoderLoad,
    clients_per_replica: int | None,
    device: str | None,
    port: int,
) -> list[str] | None:
    """One replica's serve command with the batch caps the plan priced (``RUNTIMES``), so the
    server batches as the row's figures assume; None for sentence-transformers, a library
    with no server of its own (the row prices one request at a time behind any web server).

    * TEI ``text-embeddings-router`` (its CLI arguments): --max-batch-tokens (the token cap),
      --max-batch-requests where a sequence cap is priced, --max-client-batch-size (raised to
      the inputs a request carries, which TEI otherwise refuses past 32), and
      --max-concurrent-requests where a replica's clients pass its 512 (TEI refuses the rest).
    * infinity ``infinity_emb v2`` (its maintainer's model-card commands): --batch-size, the
      torch engine the kernels are priced as, --device.
    * vLLM ``vllm serve --runner pooling`` (docs.vllm.ai v0.10.1 "Pooling Models"; --task embed
      before 0.10.1): --max-num-batched-tokens and --max-num-seqs as priced (vLLM would raise
      max_num_seqs to 1024 on a 70 GiB card, a batch the plan did not price)."""
    if rt.name == "tei":
        args = ["text-embeddings-router", "--model-id", model]
        args += ["--dtype", _TEI_DTYPES.get(precision, "float16")]
        if rt.batch_tokens is not None:
            args += ["--max-batch-tokens", str(rt.batch_tokens)]
        if rt.batch_requests is not None:
            args += ["--max-batch-requests", str(rt.batch_requests)]
        args += ["--max-client-batch-size", str(max(TEI_CLIENT_BATCH, load.inputs))]
        if clients_per_replica is not None and clients_per_replica > TEI_CONCURRENT:
            args += ["--max-concurrent-requests", str(clients_per_replica)]
        return [*args, "--port", str(port)]
    if rt.name == "infinity":
        args = ["infinity_emb", "v2", "--model-id", model]
        args += ["--dtype", _DTYPES.get(precision, "float16")]
        args += ["--batch-size", str(rt.batch_requests or 32), "--engine", "torch"]
        if device is not None:
            args += ["--device", device]
        return [*args, "--port", str(port)]
    if rt.name == "vllm-pooling":
        args = ["vllm", "serve", model, "--runner", "pooling"]
        args += ["--dtype", _DTYPES.get(precision, "float16")]
        if rt.batch_tokens is not None:
            args += ["--max-num-batched-tokens", str(rt.batch_tokens)]
        if rt.batch_requests is not None:
            args += ["--max-num-seqs", str(rt.batch_requests)]
        return [*args, "--port", str(port)]
    return None

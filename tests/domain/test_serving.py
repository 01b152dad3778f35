"""The continuous-batching serving model, and the planner (the one pipeline: serving_step's
plan and evaluate, rank.best_per_card, card_exclusion), on hand-built GPUs."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import get_args

import pytest

from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import llm_step, rank, serving_step
from app.domain import serving as sv
from app.domain.workload import ModelSpec, ServingSpec, WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, H100, RTX4090, RULES

LLAMA70 = ModelSpec(
    family="decoder", params=70.6e9, layers=80, hidden_size=8192, num_heads=64, num_kv_heads=8,
    intermediate_size=28672, vocab_size=128256, max_context=131072,
)  # fmt: skip
LLAMA8 = ModelSpec(
    family="decoder", params=8.03e9, layers=32, hidden_size=4096, num_heads=32, num_kv_heads=8,
    intermediate_size=14336, vocab_size=128256, max_context=131072,
)  # fmt: skip
MIXTRAL = ModelSpec(
    family="decoder", params=46.7e9, active_params=12.9e9, experts=8, active_experts=2,
    layers=32, hidden_size=4096, num_heads=32, num_kv_heads=8, intermediate_size=14336,
    vocab_size=32000,
)  # fmt: skip
B200 = dataclasses.replace(
    H100, slug="b200", name="B200", architecture="Blackwell", memory_gb=180,
    memory_bandwidth_gbs=7700, bf16_tflops=2250, fp16_tflops=2250, fp8_tflops=4500,
    compute_capability="10.0",
)  # fmt: skip


ROOT = Path(__file__).resolve().parents[2]
TABLE = load_efficiency()  # the shipped data/efficiency.yaml: serving runtimes live there


def profile(name: str, gpu=H100) -> sv.RuntimeProfile:
    return sv.runtime_profile(TABLE, name, TABLE.profile(gpu, "cuda", name, "bf16", "decode"))


def _profile(gpu, runtime: str, w: str = "bf16") -> sv.RuntimeProfile:
    """A runtime's serving profile on ``gpu`` with both its decode and prefill profiles."""
    return sv.runtime_profile(
        TABLE, runtime,
        TABLE.profile(gpu, "cuda", runtime, w, "decode"),
        TABLE.profile(gpu, "cuda", runtime, w, "prefill"),
    )  # fmt: skip


def run(gpu, model, cfg, load, **kw) -> sv.ServingResult:
    rt = profile(cfg.runtime, gpu)
    return sv.evaluate(gpu, model, cfg, load, runtime=rt, usable_gb=gpu.memory_gb, **kw)


def cfg(tp=1, r=1, w="bf16", kv="bf16", rt="vllm") -> sv.ServingConfig:
    return sv.ServingConfig(tp, r, w, kv, rt)


def test_one_user_decode_reads_the_weights_once_per_token():
    res = run(H100, LLAMA8, cfg(), sv.ServingLoad(100, 100, concurrent_requests=1))
    rt = profile("vllm")
    bw = 3350e9 * rt.decode.memory  # the vLLM decode row's share of the bandwidth
    weights_s = sv.weight_bytes(LLAMA8, "bf16") / bw
    # CUDA-graph gaps, and vLLM's piecewise graphs' split per layer (attention runs eagerly)
    gaps_s = 32 * (llm_step.KERNELS_PER_LAYER * rt.decode.kernel_us + rt.decode.graph_split_us)
    gaps_s *= 1e-6
    assert res.itl_ms == pytest.approx((weights_s + gaps_s) * 1e3 + 0.6, rel=0.05)
    assert res.bottleneck == "memory bandwidth"


def test_batching_raises_throughput_and_latency_up_to_saturation():
    res = run(H100, LLAMA8, cfg(), sv.ServingLoad(500, 200, concurrent_requests=8), with_curve=True)
    pts = res.curve
    assert [p.concurrency for p in pts][:3] == [1, 2, 4]
    tput = [p.output_tokens_per_s for p in pts]
    itl = [p.itl_ms for p in pts]
    assert tput == sorted(tput) and itl == sorted(itl)
    assert tput[-1] > 20 * tput[0]  # decode is bandwidth-bound at small batches
    assert res.max_output_tokens_per_s == pytest.approx(tput[-1], rel=0.02)
    assert pts[-1].concurrency == res.max_concurrency


def test_littles_law_links_concurrency_and_request_rate():
    load = sv.ServingLoad(1000, 300, concurrent_requests=32)
    res = run(H100, LLAMA8, cfg(), load)
    assert res.requests_per_s is not None and res.ttft_ms is not None and res.itl_ms is not None
    in_system = res.requests_per_s * (res.ttft_ms + 299 * res.itl_ms) / 1e3
    assert in_system == pytest.approx(32, rel=0.03)
    # the same rate given open-loop lands on the same concurrency
    open_loop = run(
        H100, LLAMA8, cfg(), sv.ServingLoad(1000, 300, requests_per_s=res.requests_per_s)
    )
    assert open_loop.itl_ms == pytest.approx(res.itl_ms, rel=0.05)


def test_a_rate_beyond_saturation_cannot_be_carried():
    res = run(H100, LLAMA8, cfg(), sv.ServingLoad(1000, 300, requests_per_s=1e4))
    assert res.fits and res.output_tokens_per_s is None and res.saturated
    assert "beyond" in res.notes[0]


def test_kv_cache_caps_concurrency_and_fp8_kv_doubles_it():
    load = sv.ServingLoad(8000, 2000, concurrent_requests=10)
    bf = run(H100, LLAMA8, cfg(rt="sglang"), load)
    f8 = run(H100, LLAMA8, cfg(kv="fp8", rt="sglang"), load)
    assert bf.max_concurrency < 256
    assert f8.max_concurrency == pytest.approx(2 * bf.max_concurrency, abs=1)
    per_request = 2 * 32 * 8 * 128 * 2 * 10000 / 1e9  # K and V, 32 layers, 8 heads, bf16
    assert bf.kv_gb_per_request == pytest.approx(per_request)


def test_a_cached_prompt_is_held_and_read_but_never_computed():
    """A benchmark that replays prompts already in the prefix cache (vLLM V1's
    benchmark_latency) computes only the uncached tail: the prompt's KV is still held and read
    by every decode step, so the request's memory and its decode steps at one user are those
    of the whole prompt, but its prefill and the steps that carry the others' prompts are
    not."""
    full = sv.ServingLoad(2048, 256, concurrent_requests=32)
    cached = dataclasses.replace(full, cached_prompt_tokens=2032)
    assert cached.fresh_prompt_tokens == 16 and full.fresh_prompt_tokens == 2048
    a, b = run(H100, LLAMA8, cfg(), full), run(H100, LLAMA8, cfg(), cached)
    assert b.kv_gb_per_request == pytest.approx(a.kv_gb_per_request)
    assert b.input_tokens_per_s is not None and b.output_tokens_per_s is not None
    assert a.output_tokens_per_s is not None and a.ttft_ms is not None and b.ttft_ms is not None
    assert b.ttft_ms < a.ttft_ms / 5  # 16 of 2,048 tokens computed
    assert b.output_tokens_per_s > 1.05 * a.output_tokens_per_s  # no prompts between decodes
    # one user: the decode steps read the whole prompt's KV either way ...
    one = [dataclasses.replace(x, concurrent_requests=1) for x in (full, cached)]
    itl_full, itl_cached = (run(H100, LLAMA8, cfg(), x).itl_ms for x in one)
    assert itl_cached == pytest.approx(itl_full, rel=1e-9)
    # ... and a 16-token prompt, computing as much, has less to read at 32 users
    short = run(H100, LLAMA8, cfg(), sv.ServingLoad(16, 256, concurrent_requests=32))
    assert short.itl_ms is not None and b.itl_ms is not None and short.itl_ms < b.itl_ms


def test_a_prompt_always_computes_at_least_one_token():
    # the first output token's logits need one computed prompt token, however much is cached
    assert sv.ServingLoad(128, 8, cached_prompt_tokens=10_000).fresh_prompt_tokens == 1
    assert sv.ServingLoad(128, 8, cached_prompt_tokens=-5).fresh_prompt_tokens == 128


def test_model_that_does_not_fit_says_why():
    res = run(RTX4090, LLAMA70, cfg(), sv.ServingLoad(100, 100, concurrent_requests=1))
    assert not res.fits and "weights take" in (res.reason or "")


def test_a_model_that_fits_the_card_but_not_the_runtime_says_what_else_takes_memory():
    """16 GB of weights on an 18 GB card: "weights take 15 GB of 17 GB" alone reads as room
    to spare, so the reason names the runtime's claim and what its activations and context
    take, and those figures add up to more than the claim."""
    card = dataclasses.replace(RTX4090, memory_gb=18.0)
    res = run(card, LLAMA8, cfg(), sv.ServingLoad(100, 100, concurrent_requests=1))
    why = res.reason or ""
    assert not res.fits and why.startswith("weights take")
    rt = profile("vllm", card)
    share = rt.memory_utilization
    assert f"vllm claims {share:.0%} of" in why
    # the usable figure is the claim, as the row gives it (r31 fx), then the card's memory
    numbers = [float(x) for x in re.findall(r"([\d.]+) GiB", why)]
    weights, claim, usable, more = numbers[0], numbers[1], numbers[2], numbers[3]
    assert claim == pytest.approx(usable * share, abs=0.06)
    assert weights < usable  # the weights alone would fit the card
    assert weights + more > claim  # what the reason names leaves no room


def test_tensor_parallelism_splits_weights_and_adds_all_reduce_time():
    load = sv.ServingLoad(200, 200, concurrent_requests=1)
    two = run(H100, LLAMA70, cfg(tp=2, w="fp8"), load)
    four = run(H100, LLAMA70, cfg(tp=4, w="fp8"), load)
    assert four.weights_gb_per_gpu == pytest.approx(two.weights_gb_per_gpu / 2)
    assert four.itl_ms is not None and two.itl_ms is not None
    assert two.itl_ms / 2 < four.itl_ms < two.itl_ms  # faster, but the all-reduces cost


def test_a_llama_cpp_layer_split_adds_memory_not_token_speed():
    # llama.cpp's default --split-mode layer: whole layers per GPU, a token through them in turn
    load = sv.ServingLoad(200, 200, concurrent_requests=1)
    rt = profile("llama.cpp")
    four = run(RTX4090, LLAMA70, cfg(tp=4, w="int4", rt="llama.cpp"), load)
    eight = run(RTX4090, LLAMA70, cfg(tp=8, w="int4", rt="llama.cpp"), load)
    assert not run(RTX4090, LLAMA70, cfg(w="int4", rt="llama.cpp"), load).fits
    assert four.fits and eight.fits
    assert eight.weights_gb_per_gpu == pytest.approx(four.weights_gb_per_gpu / 2)
    assert eight.kv_pool_gb_per_gpu > four.kv_pool_gb_per_gpu  # the memory adds up
    assert four.itl_ms is not None and eight.itl_ms is not None
    # one GPU's bandwidth reads all the weights, whatever the split (plus a hand-off per stage)
    bw = RTX4090.memory_bandwidth_gbs * 1e9 * rt.decode.memory
    assert four.itl_ms > sv.weight_bytes(LLAMA70, "int4", rt.bits("int4")) / bw * 1e3
    assert eight.itl_ms == pytest.approx(four.itl_ms, rel=0.05)
    # vLLM's tensor parallelism on the same cards: twice the GPUs, faster tokens, though the
    # eight-GPU ring's all-reduces cost more a call than the four-GPU ring's (0.82× the ITL)
    v4 = run(RTX4090, LLAMA70, cfg(tp=4, w="int4"), load)
    v8 = run(RTX4090, LLAMA70, cfg(tp=8, w="int4"), load)
    assert v4.itl_ms is not None and v8.itl_ms is not None and v8.itl_ms < 0.9 * v4.itl_ms
    assert v8.step is not None and v4.step is not None and v8.step.comm_s > v4.step.comm_s
    assert v8.itl_ms < 1 / 3 * eight.itl_ms  # over 3x (each kernel's floor bounds TP8's gain)


def test_llama_cpp_int4_is_gguf_q4_k_m_and_needs_no_marlin_kernels():
    rt = profile("llama.cpp")
    assert rt.int4_format == "q4_k_m" and rt.bits("int4") == TABLE.bits_per_weight["q4_k_m"]
    # the GGUF file's mean bits cover every weight, embeddings included
    assert sv.weight_bytes(LLAMA70, "int4", rt.bits("int4")) == pytest.approx(70.6e9 * 4.84 / 8)
    pascal = dataclasses.replace(RTX4090, slug="p40", compute_capability="6.1")
    assert sv.supports_weights(pascal, "int4") is not None  # vLLM's Marlin AWQ/GPTQ
    assert sv.supports_weights(pascal, "int4", rt) is None
    assert profile("vllm").bits("int4") is None


def test_a_layer_split_overlaps_prompt_micro_batches_only_where_the_runtime_does():
    # llama.cpp runs a 2,000-token prompt as -ub 512 micro-batches that pipeline over the GPUs:
    # the prompt gets faster with the split, a token does not
    load = sv.ServingLoad(2000, 100, concurrent_requests=1)
    one = run(RTX4090, LLAMA8, cfg(rt="llama.cpp"), load)
    four = run(RTX4090, LLAMA8, cfg(tp=4, rt="llama.cpp"), load)
    assert one.ttft_ms is not None and four.ttft_ms is not None
    assert four.ttft_ms < 0.6 * one.ttft_ms
    assert four.itl_ms == pytest.approx(one.itl_ms, rel=0.05)
    # Accelerate's device_map (transformers) runs one GPU at a time: no gain either way
    h1 = run(H100, LLAMA8, cfg(rt="transformers"), load)
    h2 = run(H100, LLAMA8, cfg(tp=2, rt="transformers"), load)
    assert h2.ttft_ms == pytest.approx(h1.ttft_ms, rel=0.05)
    assert h2.itl_ms == pytest.approx(h1.itl_ms, rel=0.05)


def test_the_planner_tries_only_the_multi_gpu_shapes_a_runtime_has():
    assert profile("llama.cpp").multi_gpu == "layers"
    assert profile("llama.cpp").microbatch_tokens == 512
    assert profile("vllm").multi_gpu == "tensor"
    assert profile("mlx").multi_gpu == "none"
    # the shapes serving_step.plan makes configurations of: MLX spans no GPUs, on any card
    mlx = _card_options(H100, runtime=profile("mlx", H100))
    assert serving_step.shapes(mlx) == [(1, range(1, 9))]
    vllm = _card_options(H100, runtime=profile("vllm", H100))
    assert [tp for tp, _ in serving_step.shapes(vllm)] == [1, 2, 4, 8]


def test_replicas_share_the_load():
    load = sv.ServingLoad(1000, 300, concurrent_requests=64)
    one = run(H100, LLAMA8, cfg(), load)
    two = run(H100, LLAMA8, cfg(r=2), load)
    assert two.itl_ms is not None and one.itl_ms is not None and two.itl_ms < one.itl_ms
    assert two.max_output_tokens_per_s == pytest.approx(2 * one.max_output_tokens_per_s)


def test_moe_reads_only_routed_experts_at_small_batches():
    dense, experts = sv.expert_split(MIXTRAL)
    assert dense + experts == pytest.approx(MIXTRAL.params)
    assert dense + experts * 2 / 8 == pytest.approx(MIXTRAL.active_params)
    one = run(H100, MIXTRAL, cfg(tp=2), sv.ServingLoad(100, 100, concurrent_requests=1))
    many = run(H100, MIXTRAL, cfg(tp=2), sv.ServingLoad(100, 100, concurrent_requests=64))
    assert one.itl_ms is not None and many.itl_ms is not None
    assert many.itl_ms > 1.8 * one.itl_ms  # a big batch touches every expert


def test_quantised_weights_keep_embeddings_in_16_bit():
    fp8 = sv.weight_bytes(LLAMA8, "fp8")
    emb = 2 * 128256 * 4096
    assert fp8 == pytest.approx((8.03e9 - emb) + emb * 2)
    assert sv.weight_bytes(LLAMA8, "int4") < fp8 < sv.weight_bytes(LLAMA8, "bf16")


def test_one_request_at_a_time_runtimes_queue_users():
    load = sv.ServingLoad(500, 200, concurrent_requests=4)
    eager = run(H100, LLAMA8, cfg(rt="transformers"), load)
    served = run(H100, LLAMA8, cfg(), load)
    assert eager.max_concurrency == 1
    assert eager.ttft_ms is not None and served.ttft_ms is not None
    assert eager.ttft_ms > 10 * served.ttft_ms
    assert eager.itl_ms is not None and served.itl_ms is not None and eager.itl_ms > served.itl_ms


def test_fp4_and_fp8_need_the_hardware():
    assert sv.supports_weights(H100, "fp4") is not None
    assert sv.supports_weights(B200, "fp4") is None
    assert sv.supports_weights(A100, "fp8") is not None
    assert sv.supports_kv(A100, "fp8") is not None
    peak, mode = sv.peak_tflops(B200, "fp4")
    assert (peak, mode) == (9000, "fp4")


def _card_options(gpu, **kw) -> serving_step.Options:
    base = dict(
        runtime=profile("vllm", gpu), weight_precisions=("bf16", "fp8", "int4", "fp4"),
        kv_precisions=("bf16", "fp8"), max_gpus=8, usable_gb=gpu.memory_gb,
        memory_efficiency=0.88, compute_efficiency={"bf16": 0.56, "fp8": 0.51, "fp4": 0.51},
    )  # fmt: skip
    base.update(kw)
    return serving_step.Options(**base)


# ---------------------------------------------------------------- the planner: the pipeline
# Each card's shapes are planned (serving_step.plan via evaluate.plan), solved and judged
# against the targets (evaluate.evaluate), and one picked per card by the objective
# (rank.best_per_card); a card with none that meets shows its closest (card_exclusion).


def _context(
    model, ttft=None, itl=None, *, users=50.0, prompt=1000, output=300, runtime="vllm",
    precision="fp8", allow_4bit=True, offers=None, **limits,
) -> ev.Context:  # fmt: skip
    """A serving request: ``model`` (publishing ``precision`` weights) for ``users`` at once;
    the weight formats of the old planner's tests (bf16, fp8, int4, fp4) unless pinned."""
    spec = ServingSpec(
        prompt, output, concurrent_requests=users, ttft_ms_target=ttft, itl_ms_target=itl
    )
    work = WorkloadSpec(
        task="serving", model=model, precision=precision, runtime=runtime,
        runtime_given=runtime != "vllm", efficiency=TABLE, serving=spec,
    )  # fmt: skip
    return ev.Context(
        work=work, rules=RULES, limits=ev.Limits(**limits), offers=offers,
        serving=serving_step.Ask(allow_4bit=allow_4bit),
    )  # fmt: skip


def _solved(gpu, ctx: ev.Context) -> list[ev.ConfigResult] | ev.Exclusion:
    """Every shape of the card planned and evaluated, or why the card has none."""
    planned = ev.plan(gpu, ctx)
    if isinstance(planned, ev.Exclusion):
        return planned
    return [ev.evaluate(c, ctx) for c in planned]


@dataclasses.dataclass(frozen=True)
class _Pick:
    """What the pipeline answers for one card: the shape its objective picks and the card's
    other shapes that meet the targets, or (none meets) the closest miss and why."""

    best: sv.ServingResult | None
    others: tuple[sv.ServingResult, ...] = ()
    closest: sv.ServingResult | None = None
    misses: tuple[str, ...] = ()
    reason: str | None = None
    code: str | None = None


def _pick(gpu, ctx: ev.Context) -> _Pick:
    results = _solved(gpu, ctx)
    if isinstance(results, ev.Exclusion):
        return _Pick(None, reason=results.reason, code=results.code)
    ok = [rank.Candidate.of(r) for r in results if r.ok]
    if ok:
        ((chosen, others),) = rank.best_per_card(ok, ctx.limits.objective)
        assert chosen.serving is not None and all(o.serving for o in others)
        return _Pick(chosen.serving.result, tuple(o.serving.result for o in others))  # type: ignore[union-attr]
    why, near = serving_step.card_exclusion(results, ctx)
    if near is None or near.serving is None:
        return _Pick(None, reason=why.reason, code=why.code)
    s = near.serving
    return _Pick(None, closest=s.result, misses=s.misses, reason=why.reason, code=why.code)


def test_planner_picks_the_fewest_gpus_that_meet_the_targets():
    loose = _pick(H100, _context(LLAMA70, 2000, 100))
    tight = _pick(H100, _context(LLAMA70, 500, 25))
    assert loose.best is not None and tight.best is not None
    assert loose.best.total_gpus <= tight.best.total_gpus
    assert tight.best.ttft_ms is not None and tight.best.ttft_ms <= 500
    assert tight.best.itl_ms is not None and tight.best.itl_ms <= 25
    # balanced (the default objective) takes the fewest GPUs among the shapes that meet
    assert all(o.total_gpus >= tight.best.total_gpus for o in tight.others)
    # Hopper has no fp4 tensor cores: vLLM runs fp4 weight-only (Marlin FP4), a runtime
    # without such kernels plans none; pinned, the card says why
    planned = ev.plan(H100, _context(LLAMA70, 2000, 100))
    assert not isinstance(planned, ev.Exclusion)
    assert {c.precision for c in planned} == {"bf16", "fp8", "int4", "fp4"}
    trt = _context(LLAMA70, 2000, 100, runtime="tensorrt-llm")
    planned = ev.plan(H100, trt)
    assert not isinstance(planned, ev.Exclusion)
    assert {c.precision for c in planned} == {"bf16", "fp8", "int4"}
    fp4 = dataclasses.replace(
        _context(LLAMA70, runtime="tensorrt-llm"), serving=serving_step.Ask(precision="fp4")
    )
    out = ev.plan(H100, fp4)
    assert isinstance(out, ev.Exclusion) and out.code == "precision_unsupported"
    assert "fp4" in out.reason and "Blackwell" in out.reason


def test_planner_returns_the_closest_miss_and_why_when_nothing_meets():
    res = _pick(A100, _context(LLAMA70, 50, 2))
    assert res.best is None and res.closest is not None and res.code == "misses_targets"
    assert any("ITL" in m for m in res.misses)
    assert res.reason is not None and "ITL" in res.reason


def test_planner_explains_a_model_no_count_can_hold():
    res = _pick(RTX4090, _context(LLAMA70, precision="bf16", allow_4bit=False, max_gpus=1))
    assert res.best is None and res.closest is None and "weights take" in (res.reason or "")
    # 70B at 16 bits fits eight 24 GB cards: the request's max_gpus of 1 is what leaves the
    # card out, and the reason says to raise it (the memory miss on one GPU follows)
    assert res.code == "filtered_out"
    assert "raise constraints.max_gpus to 8" in (res.reason or "")


def test_p95_targets_are_stricter_than_p50():
    res = run(H100, LLAMA8, cfg(), sv.ServingLoad(2000, 200, concurrent_requests=64))
    assert res.ttft_p95_ms is not None and res.ttft_ms is not None
    assert res.ttft_p95_ms >= res.ttft_ms
    ok50, _ = sv.meets(res, sv.ServingTargets(ttft_ms=res.ttft_ms * 1.01))
    ok95, miss = sv.meets(res, sv.ServingTargets(ttft_ms=res.ttft_ms * 1.01, percentile="p95"))
    assert res.ttft_p95_ms > res.ttft_ms * 1.01  # prompts queue behind each other at this load
    assert ok50 and not ok95 and "TTFT" in miss[0]


# ---------------------------------------------------------------- default targets


def test_blank_targets_default_to_mlperf_llama2_70b_server_and_say_so():
    blank = sv.with_defaults(sv.ServingTargets(percentile="p95"))
    # mlcommons/inference loadgen/mlperf.conf: llama2-70b.Server ttft 2000 ms, tpot 200 ms
    assert (blank.ttft_ms, blank.itl_ms, blank.percentile) == (2000.0, 200.0, "p95")
    assert blank.ttft_default and blank.itl_default
    assert "MLPerf" in sv.DEFAULT_TARGETS_SOURCE and "p99" in sv.DEFAULT_TARGETS_SOURCE
    mine = sv.with_defaults(sv.ServingTargets(itl_ms=40))
    assert (mine.ttft_ms, mine.itl_ms) == (2000.0, 40)
    assert mine.ttft_default and not mine.itl_default


def test_a_configuration_that_only_eventually_answers_does_not_meet_the_default_targets():
    # llama-server's 4 slots and 50 users: the rest wait minutes for a slot. Without targets
    # that "meets" the load; with the defaults it is the closest miss, on TTFT.
    d = sv.with_defaults(sv.ServingTargets())
    cpp = dict(runtime="llama.cpp", precision="bf16", allow_4bit=False, max_gpus=1)
    none = _pick(RTX4090, _context(LLAMA8, **cpp))
    assert none.best is not None and none.best.ttft_ms is not None
    assert none.best.ttft_ms > 10 * sv.DEFAULT_TTFT_MS
    default = _pick(RTX4090, _context(LLAMA8, d.ttft_ms, d.itl_ms, **cpp))
    assert default.best is None and default.closest is not None
    assert any(m.startswith("TTFT") for m in default.misses)
    # vLLM batches all 50 on the same card within the defaults
    served = _pick(RTX4090, _context(LLAMA8, d.ttft_ms, d.itl_ms, precision="bf16", max_gpus=1))
    assert served.best is not None and sv.meets(served.best, d)[0]


# ---------------------------------------------------------------- the planner with prices


def _offers(*nodes: tuple[int, float]) -> dict[str, costs.GpuOffers]:
    """H100 instances of ``gpus`` GPUs at ``usd`` an hour each, on demand."""
    return {
        H100.slug: costs.GpuOffers(
            tuple(
                costs.CloudOffer("lab", f"h100x{n}", n, usd, None, "on-demand", "2026-11-01", "t")
                for n, usd in nodes
            ),
            (),
        )
    }


def test_planner_takes_the_cheapest_priced_shape_not_the_fewest_gpus():
    # single GPUs cost a fortune, 4-GPU nodes are cheap: the plan rents the node
    pricey = _offers((1, 100.0), (4, 20.0))
    cheap = _pick(H100, _context(LLAMA70, 2000, 100, offers=pricey, objective="cheapest",
                                 acquisition="rent"))  # fmt: skip
    fewest = _pick(H100, _context(LLAMA70, 2000, 100))
    assert cheap.best is not None and fewest.best is not None
    # the pick fills one 4-GPU node ($20/h; 1 GPU costs $100/h), not the fewest GPUs
    assert fewest.best.total_gpus < 4 == cheap.best.total_gpus
    # a shape no instance holds (8 GPUs in one group) is not priced: it is never the pick
    assert cheap.best.config.gpus_per_replica <= 4


def test_a_node_paid_whole_is_used_whole_and_other_sizes_are_alternatives():
    node = _offers((8, 24.0))
    ctx = _context(LLAMA70, 2000, 100, offers=node, objective="cheapest", acquisition="rent")
    res = _pick(H100, ctx)
    assert res.best is not None
    # every shape costs one node: the pick is the fastest use of its eight GPUs
    assert res.best.total_gpus == 8
    fewest = _pick(H100, _context(LLAMA70, 2000, 100))
    assert fewest.best is not None and fewest.best.total_gpus < 8
    assert res.best.itl_ms is not None and fewest.best.itl_ms is not None
    assert res.best.itl_ms < fewest.best.itl_ms
    # the card's other shapes that meet the targets are its alternatives, at other
    # tensor-parallel sizes too
    sizes = {o.config.gpus_per_replica for o in res.others}
    assert len(sizes) > 1 and res.best.config not in {o.config for o in res.others}
    assert all(sv.meets(o, sv.ServingTargets(2000, 100))[0] for o in res.others)


# ---------------------------------------------------------------- runtimes from the one table


def test_serving_runtimes_come_from_the_efficiency_table_with_sources():
    from app.recommend.schemas import ServingRuntime
    from app.shipped import yamlio

    doc = yamlio.safe_load((ROOT / "data" / "efficiency.yaml").read_text(encoding="utf-8"))
    names = set(get_args(ServingRuntime))
    assert set(TABLE.serving) == names
    for name, spec in TABLE.serving.items():
        assert spec.sources and all(src in doc["sources"] for src in spec.sources), name
        assert doc["serving_runtimes"][name]["note"], name
        assert 0 < spec.memory_utilization <= 1, name
    # a runtime that batches nothing holds one sequence; the paged servers hundreds
    assert TABLE.serving["transformers"].max_batch == 1
    assert TABLE.serving["vllm"].max_batch >= 256


def test_eager_host_dispatch_is_the_figure_inference_uses():
    # serving and inference read one constant: the transformers decode rows' ops × µs
    decode = TABLE.profile(H100, "cuda", "transformers", "bf16", "decode")
    eager = profile("transformers")
    assert decode.host_us_per_op > 0 and decode.ops_per_layer > 0
    rep = sv.replica(H100, LLAMA8, cfg(rt="transformers"), eager, 0.88, sv.DEFAULT_COMPUTE)
    assert rep.host_s == pytest.approx(32 * decode.host_us_per_op * decode.ops_per_layer * 1e-6)
    graphs = sv.replica(H100, LLAMA8, cfg(), profile("vllm"), 0.88, sv.DEFAULT_COMPUTE)
    assert graphs.host_s == 0.0  # CUDA graphs: no host dispatch


def test_tensorrt_llm_dispatches_steps_with_prompts_eagerly():
    # its PyTorch backend replays CUDA graphs for decode-only steps alone (scheduler.py
    # can_run_cuda_graph): a step with a prompt pays the eager figure per kernel; vLLM's
    # piecewise graphs cover mixed steps, so it pays none
    from app.domain import llm_step

    assert TABLE.serving["tensorrt-llm"].mixed_step_host_us_per_kernel == 10.0
    assert TABLE.serving["vllm"].mixed_step_host_us_per_kernel == 0.0
    trt = sv.replica(H100, LLAMA8, cfg(rt="tensorrt-llm"), profile("tensorrt-llm"), 0.88,
                     sv.DEFAULT_COMPUTE)  # fmt: skip
    kernels = llm_step._kernels_per_layer(LLAMA8)
    assert trt.mixed_host_s == pytest.approx(32 * kernels * 10e-6)
    vllm = sv.replica(H100, LLAMA8, cfg(), profile("vllm"), 0.88, sv.DEFAULT_COMPUTE)
    assert vllm.mixed_host_s == 0.0


def test_a_serving_runtime_missing_a_field_is_rejected():
    from app.domain.efficiency import parse_table

    with pytest.raises(ValueError, match="missing"):
        parse_table({"serving_runtimes": {"vllm": {"version": "x", "max_batch": 4}}})
    with pytest.raises(ValueError, match="no serving runtime"):
        sv.runtime_profile(parse_table({}), "vllm")


# ---------------------------------------------------------------- one engine with inference


def test_one_gib_rule_and_one_usable_memory_function_for_every_task():
    from app.domain import efficiency
    from app.domain import evaluate as ev

    # an "80 GB" H100 is 80 GiB (nvidia-smi: 81,559 MiB), to serving as to every other task
    assert efficiency.usable_gb(H100) == pytest.approx(80 * 2**30 / 1e9)
    assert ev.usable_gb(H100) == efficiency.usable_gb(H100)
    # Llama 3.3 70B in fp8 for four users on one H100 under vLLM: inference counts 0.9 of the
    # GiB (gpu_memory_utilization); the serving plan takes the same share of the same GiB, and
    # both keep out vLLM's startup profiling peak (its sampler over the 1,024-sequence default
    # on an 80 GiB GPU): no KV cache is left, as vLLM's own log says (llm-d, -1.44 GiB)
    rt = profile("vllm")
    _weights, act, _fw, pool = sv.memory_plan(
        H100, LLAMA70, cfg(w="fp8"), rt, efficiency.usable_gb(H100)
    )
    assert act == pytest.approx(efficiency.profiling_peak_gb(38.9, 1024, LLAMA70.vocab_size))
    assert pool < 0
    res = sv.evaluate(
        H100, LLAMA70, cfg(w="fp8"), sv.ServingLoad(1000, 300, concurrent_requests=4),
        runtime=rt, usable_gb=efficiency.usable_gb(H100),
    )  # fmt: skip
    assert not res.fits and "--max-num-seqs" in (res.reason or "")


def test_one_weight_format_table_sizes_weights_for_inference_and_serving():
    from app.domain import formats
    from app.domain.workload import BYTES, WorkloadSpec

    # AWQ/GPTQ g128: 4 + 16/128 + 4/128; NVFP4: 4 + 8/16 — as data/efficiency.yaml's formats
    assert formats.bits("int4") == pytest.approx(TABLE.bits_per_weight["awq"], abs=0.01)
    assert formats.bits("int4") == pytest.approx(TABLE.bits_per_weight["gptq"], abs=0.01)
    assert formats.bits("fp4") == TABLE.bits_per_weight["nvfp4"]
    for p in ("int4", "fp4", "fp8", "bf16"):
        assert sv.WEIGHT_BITS[p] == formats.bits(p)
        assert BYTES[p] == formats.bits(p) / 8  # the inference memory model's bytes
        work = WorkloadSpec(task="inference", model=LLAMA8, precision=p)
        # one weight rule: quantised formats keep the embeddings and head in 16-bit
        assert work.weight_bytes == sv.weight_bytes(LLAMA8, p)
        assert work.weight_bytes_per_param == sv.weight_bytes(LLAMA8, p) / LLAMA8.params
    assert sv.KV_BYTES == {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0}


def _inference(gpu, model, runtime, n, *, p=1000, o=300, w="bf16", bits=None):
    from app.domain import perf
    from app.domain.workload import WorkloadSpec

    work = WorkloadSpec(
        task="inference", model=model, precision=w, batch_size=1, seq_len=p, output_tokens=o,
        runtime=runtime, efficiency=TABLE, weight_bits=bits,
    )  # fmt: skip
    return perf.estimate(gpu, work, num_gpus=n, backend="cuda")


def _serve(gpu, model, runtime, n, *, p=1000, o=300, w="bf16"):
    from app.domain import efficiency, perf

    eff = perf.efficiencies(gpu, None)
    rt = _profile(gpu, runtime, w)
    return rt, sv.evaluate(
        gpu, model, cfg(tp=n, w=w, rt=runtime), sv.ServingLoad(p, o, concurrent_requests=1),
        runtime=rt, usable_gb=efficiency.usable_gb(gpu), memory_efficiency=eff.memory,
        compute_efficiency=perf.llm_efficiency(eff),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("runtime", "n", "model", "w"),
    [("transformers", 1, LLAMA8, "bf16"), ("transformers", 2, LLAMA8, "bf16"),
     ("vllm", 1, LLAMA8, "bf16"), ("vllm", 4, LLAMA70, "fp8"), ("tensorrt-llm", 2, LLAMA70, "fp8")],
)  # fmt: skip
def test_inference_and_serving_agree_on_one_user(runtime, n, model, w):
    # one step function: a served user's token is inference's token plus the server's own
    # per-step cost, whether the runtime batches continuously or not: one user's next prompt
    # is sent when the answer ends, so no prompt shares its decode steps
    inf = _inference(H100, model, runtime, n, w=w)
    rt, srv = _serve(H100, model, runtime, n, w=w)
    assert srv.fits and srv.itl_ms is not None and inf.ms_per_token is not None
    # (a synchronous server's host work per running sequence, once: one user, one sequence)
    sched_ms = (rt.step_overhead_s + rt.serial_per_seq_s) * 1e3
    assert srv.itl_ms == pytest.approx(inf.ms_per_token + sched_ms, rel=1e-6)


def test_one_user_with_a_long_prompt_decodes_at_inferences_speed():
    # Qwen3-32B-shaped, 32,000 tokens in and 77 out on an A100 80GB under vLLM: each decode
    # step read the whole prompt's worth of "replacement" prefill (415 tokens a step) and
    # gave ~258 ms between tokens where LLM inference gives ~48 ms for the same job
    qwen32 = ModelSpec(
        family="decoder", params=32.8e9, layers=64, hidden_size=5120, num_heads=64,
        num_kv_heads=8, intermediate_size=25600, vocab_size=151936, max_context=131072,
    )  # fmt: skip
    a100 = dataclasses.replace(
        H100, slug="a100-sxm4-80gb", name="A100 SXM4 80GB", architecture="Ampere",
        memory_gb=80, memory_bandwidth_gbs=2039, bf16_tflops=312, fp16_tflops=312,
        fp8_tflops=None, compute_capability="8.0",
    )  # fmt: skip
    inf = _inference(a100, qwen32, "vllm", 1, p=32000, o=77)
    rt, srv = _serve(a100, qwen32, "vllm", 1, p=32000, o=77)
    assert srv.fits and srv.itl_ms is not None and inf.ms_per_token is not None
    one_seq_ms = (rt.step_overhead_s + rt.serial_per_seq_s) * 1e3
    assert srv.itl_ms == pytest.approx(inf.ms_per_token + one_seq_ms, rel=1e-6)
    assert srv.ttft_ms is not None and inf.ttft_ms is not None
    # the prompt runs alone (no other request decodes beside it): inference's first token,
    # but for its chunked-prefill steps, whose attention kernels fill the SMs' last wave less
    # than one whole-prompt pass does (llm_step.prompt_attention_seconds, kernels.wave_fill:
    # a 2,048-token chunk's 64 heads are 1,024 blocks of 128 query rows, 0.95 of their waves
    # busy, where the whole prompt's 16,000 keep 0.997; issue 21, 2026-12-07): +1.6 % here
    assert srv.ttft_ms == pytest.approx(inf.ttft_ms, rel=0.02)


def test_a_layer_split_is_the_same_speed_as_inference_and_as_serving():
    # 8 x RTX 3080 10GB, Llama 3 70B Q4_K_M under llama.cpp: 42.7 GB over one card's bandwidth
    rtx3080 = dataclasses.replace(
        RTX4090, slug="rtx-3080-10gb", memory_gb=10, memory_bandwidth_gbs=760.3,
        fp32_tflops=29.77, fp16_tflops=59.5, bf16_tflops=59.5, fp8_tflops=None,
        compute_capability="8.6",
    )  # fmt: skip
    rt = profile("llama.cpp", rtx3080)
    bits = rt.bits("int4")
    inf = _inference(rtx3080, LLAMA70, "llama.cpp", 8, w="int4", bits=bits)
    _, srv = _serve(rtx3080, LLAMA70, "llama.cpp", 8, w="int4")
    bound = rtx3080.memory_bandwidth_gbs * 1e9 / sv.weight_bytes(LLAMA70, "int4", bits)
    assert inf.ms_per_token is not None and srv.itl_ms is not None
    assert 1e3 / inf.ms_per_token < bound and 1e3 / srv.itl_ms < bound  # ~18 tok/s at most
    assert srv.itl_ms == pytest.approx(inf.ms_per_token + rt.step_overhead_s * 1e3, rel=0.1)


DEEPSEEK_R1 = ModelSpec(
    family="decoder", params=671e9, active_params=37e9, experts=256, active_experts=8,
    layers=61, hidden_size=7168, num_heads=128, num_kv_heads=1, intermediate_size=2048,
    vocab_size=129280, kv_elements_per_token=35136,
)  # fmt: skip


@pytest.mark.parametrize("runtime", ["tensorrt-llm", "vllm", "sglang"])
def test_moe_decode_for_one_user_is_bound_by_its_many_small_kernels(runtime):
    # DeepSeek-R1 on 8 x B200 in NVFP4, one user, 1k in / 2k out: NVIDIA's latency record is
    # 368 tokens/s WITH three MTP layers of speculative decoding (67 without, at first;
    # TensorRT-LLM tech blog "Pushing Latency Boundaries"). A step reads only ~21 GB of active
    # weights over 8 × 7.7 TB/s (~0.4 ms), but runs 17 kernels and 2 all-reduces per layer
    # over 61 layers: those, not the bytes, bound it.
    b200 = dataclasses.replace(B200, int8_tops=4500, interconnect="NVLink 5 (HGX B200)",
                               interconnect_gbs=1800)  # fmt: skip
    _, res = _serve(b200, DEEPSEEK_R1, runtime, 8, p=1000, o=2000, w="fp4")
    assert res.fits and res.itl_ms is not None
    assert 1e3 / res.itl_ms < 368
    rep = sv.replica(
        b200, DEEPSEEK_R1, cfg(tp=8, w="fp4", rt=runtime), profile(runtime, b200), 0.88,
        sv.DEFAULT_COMPUTE,
    )  # fmt: skip
    one = rep.parts(1.0, 2000.0, 0.0, 1000.0)
    assert one.launch_s > one.memory_s  # the kernel floor, not the bytes
    # the kernels' gaps, and the routed block's small kernels (routing, quantisation, permute,
    # finalize: moe_block_us) in each of the 61 layers; vLLM's piecewise graphs add their
    # split per layer (graph_split_us; 0 for the whole-forward graphs of the other two)
    split = profile(runtime, b200).decode.graph_split_us
    assert (split > 0.0) == (runtime == "vllm")
    assert rep.launch_s == pytest.approx(
        61 * (llm_step.KERNELS_PER_LAYER + llm_step.MOE_KERNELS_PER_LAYER) * 2e-6
        + 61 * (21e-6 + split * 1e-6)
    )


def test_moe_decode_for_a_few_users_meets_a_published_h200_run():
    # SemiAnalysis InferenceX issue #870 (2026-03): DeepSeek-R1-0528 FP8 under SGLang v0.5.7,
    # TP8 on one 8 x H200 node, 1k in / 1k out at concurrency 8: mean TPOT 12.8 ms (P99 14.3).
    # Not a tuning row: nothing was fitted to it. The engine gave 15.3 ms while a server's
    # average MoE step was priced at its mean tokens; 11.7 ms once priced as the mix of decode
    # and prompt steps (llm_step.Replica.linear_step), 13.2 ms with the dense GEMMs' floors
    # beside the routed grouped GEMMs (Replica.gemm_time)
    from app.domain import efficiency, perf

    h200 = dataclasses.replace(
        H100, slug="h200-sxm", name="H200 SXM", memory_gb=141, memory_bandwidth_gbs=4800,
        interconnect="NVLink 4 (HGX H200)", interconnect_gbs=900,
    )  # fmt: skip
    r1 = dataclasses.replace(DEEPSEEK_R1, attention="mla", shared_experts=1)
    eff = perf.efficiencies(h200, None)
    rt = _profile(h200, "sglang", "fp8")
    res = sv.evaluate(
        h200, r1, cfg(tp=8, w="fp8", kv="fp8", rt="sglang"),
        sv.ServingLoad(1024, 1024, concurrent_requests=8), runtime=rt,
        usable_gb=efficiency.usable_gb(h200), memory_efficiency=eff.memory,
        compute_efficiency=perf.llm_efficiency(eff),
    )  # fmt: skip
    assert res.fits and res.itl_ms is not None
    assert 12.8 / 1.25 <= res.itl_ms <= 12.8 * 1.25, res.itl_ms


def test_the_planner_honours_exactly_n_gpus():
    # constraints.num_gpus means "exactly N GPUs" for serving as for every other task
    for n in (1, 2, 4, 8):
        res = _pick(H100, _context(LLAMA8, users=8, exact_gpus=n))
        shapes = [r.config for r in (res.best, *res.others) if r is not None]
        assert shapes and all(c.gpus_per_replica * c.replicas == n for c in shapes), n
    # a model that needs more than N GPUs' memory: nothing fits, said so
    bf16 = _context(LLAMA70, users=8, precision="bf16", allow_4bit=False, exact_gpus=1)
    res = _pick(H100, bf16)
    assert res.best is None and res.closest is None and res.reason and res.code == "does_not_fit"
    # 3 GPUs asked are three 1-GPU replicas (no replica spans 3): the reason says so, where the
    # 1-GPU memory miss alone read as if 3 cards could not hold the model
    three = _pick(
        H100, _context(LLAMA70, users=8, precision="bf16", allow_4bit=False, exact_gpus=3)
    )
    assert three.best is None and three.reason, three.reason
    assert "3 GPUs run as 3 replicas of 1" in three.reason, three.reason
    assert "replicas of" not in (res.reason or "")  # one GPU asked: one GPU tried, nothing to add
    # a card that runs as one device (a laptop GPU) has no count but 1
    laptop = dataclasses.replace(H100, slug="h100-laptop", segment="laptop")
    one = _pick(laptop, _context(LLAMA8, users=8, exact_gpus=2))
    assert one.best is None and one.reason and "one device" in one.reason


def test_the_step_token_budget_bounds_the_decoding_batch():
    # Each steady step carries b decodes plus the b × p ÷ o prompt tokens of the requests that
    # replace finished ones; a runtime's max_num_batched_tokens / max_num_tokens holds that sum,
    # so at most budget × o ÷ (p + o) sequences decode at once (the rest wait, in TTFT).
    p, o = 2048, 128
    model, gpu = LLAMA8, H100
    wide = dataclasses.replace(profile("tensorrt-llm"), chunk_tokens=1 << 20)
    tight = dataclasses.replace(wide, chunk_tokens=8192)
    c = cfg(w="fp8", kv="fp8", rt="tensorrt-llm")
    eng = sv.replica(gpu, model, c, wide, 0.88, sv.DEFAULT_COMPUTE)
    free = sv._solve(eng, wide, 4096.0, None, p, o, 512)
    held = sv._solve(eng, tight, 4096.0, None, p, o, 512)
    assert free is not None and held is not None
    assert free.batch == 512  # the batch cap alone: 512 × 17 = 8,704 tokens a step
    assert held.batch == pytest.approx(8192 * o / (p + o))  # 482 sequences, 8,192 tokens
    assert held.itl < free.itl  # a step of fewer tokens
    assert held.ttft > free.ttft  # requests wait for the budget
    # a budget the batch never reaches changes nothing, to the bit
    loose = dataclasses.replace(wide, chunk_tokens=512 * (p + o) // o)
    assert sv._solve(eng, loose, 4096.0, None, p, o, 512) == free


def test_vllm_sizes_its_batch_limits_by_the_gpus_memory():
    # vLLM's OpenAI server defaults: 1,024 sequences and 8,192 tokens a step on a GPU of at
    # least 70 GiB (not an A100), else 256 and 2,048 (vllm/engine/arg_utils.py)
    rt = profile("vllm")
    assert (rt.max_batch, rt.chunk_tokens) == (256, 2048)
    big = rt.on(H100)
    assert (big.max_batch, big.chunk_tokens) == (1024, 8192)
    assert rt.on(A100) is rt and rt.on(RTX4090) is rt
    assert profile("tensorrt-llm").on(H100) == profile("tensorrt-llm")  # one limit everywhere
    load = sv.ServingLoad(128, 128, concurrent_requests=4096)
    res = run(H100, LLAMA8, cfg(), load)  # evaluate picks the GPU's limits
    assert res.max_concurrency > 256


def test_the_rate_at_saturation_is_never_below_a_rate_the_configuration_reaches():
    # Llama 70B bf16 on 2 A100 80GB under vLLM: at one user more than the KV cache holds, the
    # answer said "353 output tokens/s (up to 352 at saturation)" — saturation is solved at
    # 4 × cap users, where a request's own next prompt is a smaller share of the arrivals
    from app.domain import efficiency, perf

    eff = perf.efficiencies(A100, None)
    rt = _profile(A100, "vllm")

    def at(users: int) -> sv.ServingResult:
        return sv.evaluate(
            A100, LLAMA70, cfg(tp=2, rt="vllm"), sv.ServingLoad(1000, 300, concurrent_requests=users),
            runtime=rt, usable_gb=efficiency.usable_gb(A100), memory_efficiency=eff.memory,
            compute_efficiency=perf.llm_efficiency(eff),
        )  # fmt: skip

    cap = at(1).max_concurrency
    assert cap > 4
    for users in (cap - 1, cap + 1, 2 * cap):
        res = at(users)
        assert res.output_tokens_per_s is not None
        assert res.max_output_tokens_per_s >= res.output_tokens_per_s, users


@pytest.mark.parametrize("objective", ["cheapest", "balanced", "fastest", "best_value"])
def test_with_the_targets_lifted_the_pick_holds_every_concurrent_request(objective):
    # 64 users of a 70B on exactly 4 H100s with no latency limit: two TP2 replicas hold 2
    # requests at once (bf16 weights leave ~8 GB of KV each) and the rest wait minutes for a
    # slot; one TP4 replica runs them all. The 2-slot shape had "met" the lifted targets and,
    # with the lower ITL of its tiny batch, won.
    ctx = _context(
        LLAMA70, 3_600_000, 3_600_000, users=64, prompt=1000, output=500, precision="bf16",
        allow_4bit=False, exact_gpus=4, objective=objective,
    )  # fmt: skip
    res = _pick(H100, ctx)
    assert res.best is not None and not res.best.saturated, res.best
    assert res.best.max_concurrency * res.best.config.replicas >= 64
    queued = [o for o in res.others if o.saturated]
    assert queued, "the 2-slot shape is still planned, as an alternative"
    # the speed a waiting user sees is the shape's output rate shared by every user
    results = _solved(H100, ctx)
    assert not isinstance(results, ev.Exclusion)
    for r in results:
        s = r.serving
        if s is not None and s.result.saturated and s.result.output_tokens_per_s:
            assert s.speed == pytest.approx(s.result.output_tokens_per_s / 64)
            assert s.speed < 1e3 / (s.result.itl_ms or 1.0)


def test_a_batchs_prompts_pay_what_they_add_to_its_steps_not_a_lone_prefill_each():
    # DeepSeek-V3 at 36 requests/s on 8 x B200 had its prompts take ~100 % of the hour (each
    # charged a lone prefill's pass over the weights) and its output tokens $0.02/M; in a
    # batch the decodes read the weights anyway, and a prompt costs what its chunks add.
    rt = _profile(H100, "vllm")
    one = sv.evaluate(
        H100, LLAMA8, cfg(), sv.ServingLoad(1000, 300, concurrent_requests=1), runtime=rt
    )
    alone = sv.replica(H100, LLAMA8, cfg(), rt.on(H100), 0.88, sv.DEFAULT_COMPUTE)
    t_alone = alone.step(0.0, 0.0, 1000.0, 1000.0, with_prompt=True)[0]
    assert one.requests_per_s is not None
    # one user: its prompt runs alone, so its share is its lone prefill's time per request
    assert one.prefill_share == pytest.approx(one.requests_per_s * t_alone)
    busy = sv.evaluate(
        H100, LLAMA8, cfg(), sv.ServingLoad(1000, 300, concurrent_requests=64), runtime=rt
    )
    assert busy.requests_per_s is not None
    assert busy.prefill_share < busy.requests_per_s * t_alone  # no pass over the weights each
    assert 0.0 < busy.prefill_share < 0.9
    # per token, a prompt (1,000 in one chunk) costs less GPU time than a decode step's token
    per_in = busy.prefill_share / (busy.requests_per_s * 1000)
    per_out = (1 - busy.prefill_share) / (busy.requests_per_s * 300)
    assert per_in < per_out


def test_a_latent_attention_cache_fills_every_gpu_of_its_group_as_its_capacity_counts():
    # DeepSeek on 8 GPUs: the breakdown gave 264 requests' cache ÷ 8 per GPU while the capacity
    # (and vLLM) hold the whole latent cache on each; ordinary attention splits by KV head
    r1 = dataclasses.replace(DEEPSEEK_R1, attention="mla", shared_experts=1)
    h200 = dataclasses.replace(H100, slug="h200-sxm", memory_gb=141, memory_bandwidth_gbs=4800)
    load = sv.ServingLoad(1000, 300, concurrent_requests=64)
    mla = sv.evaluate(h200, r1, cfg(tp=8, w="fp8", kv="bf16"), load, runtime=_profile(h200, "vllm"))
    assert mla.fits and mla.kv_copies == 8
    assert mla.kv_gb_per_gpu(64) == pytest.approx(64 * mla.kv_held_gb)
    gqa = sv.evaluate(
        H100, LLAMA70, cfg(tp=4, w="fp8", kv="bf16"), load, runtime=_profile(H100, "vllm")
    )
    assert gqa.kv_copies == 1 and gqa.kv_gb_per_gpu(64) == pytest.approx(64 * gqa.kv_held_gb / 4)
    # the pool holds what the capacity says: max_concurrency requests fill it, not 8x that
    assert mla.kv_gb_per_gpu(mla.max_concurrency) <= mla.kv_pool_gb_per_gpu * 1.0001


def test_replicas_without_a_request_produce_nothing() -> None:
    """Fewer concurrent requests than replicas leave the rest idle: one user on 4 replicas of
    one GPU gets one replica's speed, not four (the output and $/M were overstated 4×)."""
    one = run(H100, LLAMA8, cfg(), sv.ServingLoad(1000, 200, concurrent_requests=1))
    four = run(H100, LLAMA8, cfg(r=4), sv.ServingLoad(1000, 200, concurrent_requests=1))
    three = run(H100, LLAMA8, cfg(r=4), sv.ServingLoad(1000, 200, concurrent_requests=3))
    assert one.output_tokens_per_s and four.output_tokens_per_s and three.output_tokens_per_s
    assert four.output_tokens_per_s == pytest.approx(one.output_tokens_per_s)
    assert three.output_tokens_per_s == pytest.approx(3 * one.output_tokens_per_s)
    assert four.itl_ms == pytest.approx(one.itl_ms)
    # half a user on average (one client, busy half the time) produces half as much
    half = run(H100, LLAMA8, cfg(r=4), sv.ServingLoad(1000, 200, concurrent_requests=0.5))
    assert half.output_tokens_per_s == pytest.approx(one.output_tokens_per_s / 2)
    # saturation still counts every replica
    assert four.max_output_tokens_per_s == pytest.approx(4 * one.max_output_tokens_per_s)


def test_kv_heads_fewer_than_the_tensor_parallel_gpus_are_copied_onto_each() -> None:
    """vLLM's QKVParallelLinear gives every GPU a whole KV head where tp ≥ kv heads: a model
    of 4 KV heads (Qwen3-235B-A22B) at TP8 holds each head twice, so a GPU's share of the
    cache is twice 1/8 (the pool held half the requests the capacity counted)."""
    four = dataclasses.replace(LLAMA8, num_kv_heads=4)
    assert llm_step.kv_copies(four, 8) == 2.0
    assert llm_step.kv_copies(four, 4) == llm_step.kv_copies(LLAMA8, 8) == 1.0
    assert llm_step.kv_copies(four, 1) == 1.0
    load = sv.ServingLoad(4000, 1000, concurrent_requests=64)
    wide = run(H100, four, cfg(tp=8), load)
    assert wide.kv_copies == 2.0
    assert wide.kv_gb_per_gpu(64) == pytest.approx(64 * wide.kv_held_gb * 2 / 8)
    narrow = run(H100, LLAMA8, cfg(tp=8), load)
    # half the KV bytes per token, but twice the copies: the same room per request per GPU
    assert wide.max_concurrency == pytest.approx(narrow.max_concurrency, rel=0.02)


def test_idle_replicas_spend_their_time_on_neither_prompts_nor_tokens() -> None:
    """The hour's $ split between prompts and output read a busy replica's prompt share as the
    whole hour's: one user on 4 replicas paid 4× per input token."""
    load = sv.ServingLoad(1000, 300, concurrent_requests=1)
    one, four = run(H100, LLAMA8, cfg(), load), run(H100, LLAMA8, cfg(r=4), load)
    assert four.prefill_share == pytest.approx(one.prefill_share / 4)

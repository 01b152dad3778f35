"""Task 'serving' runs the one pipeline every task runs: evaluate.plan and evaluate.evaluate
(the serving planner is its evaluate step), the same filters and software gate, the same
pricing and budget, the same rank.rank."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain import cost as costs
from app.domain import evaluate as ev
from app.domain import llm_step, rank, serving_step
from app.domain.workload import ServingSpec, WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import A100, H100, LLAMA3_8B, MI300X, RULES, llm_inference

TABLE = load_efficiency()
LOAD = ServingSpec(1000, 300, concurrent_requests=8, ttft_ms_target=2000.0, itl_ms_target=200.0)


def _serving(**limits: object) -> ev.Context:
    work = WorkloadSpec(
        task="serving", model=LLAMA3_8B, runtime="vllm", efficiency=TABLE, serving=LOAD
    )
    return ev.Context(work=work, rules=RULES, limits=ev.Limits(**limits))  # type: ignore[arg-type]


def _inference(**limits: object) -> ev.Context:
    return ev.Context(work=llm_inference(), rules=RULES, limits=ev.Limits(**limits))  # type: ignore[arg-type]


def _results(gpu, ctx: ev.Context) -> list[ev.ConfigResult] | ev.Exclusion:
    """Every shape of the card evaluated (plan → evaluate), as the service does."""
    planned = ev.plan(gpu, ctx)
    if isinstance(planned, ev.Exclusion):
        return planned
    return [ev.evaluate(c, ctx) for c in planned]


def _run(gpu, ctx: ev.Context) -> ev.ConfigResult | ev.Exclusion:
    """The card's shape rank.best_per_card picks under the context's objective, else the
    card's exclusion (its closest miss's result when the targets are why)."""
    results = _results(gpu, ctx)
    if isinstance(results, ev.Exclusion):
        return results
    ok = [r for r in results if r.ok]
    if not ok:
        why, near = serving_step.card_exclusion(results, ctx)
        return near if near is not None else ev.ConfigResult(results[0].config, why)
    ((chosen, _),) = rank.best_per_card([rank.Candidate.of(r) for r in ok], ctx.limits.objective)
    return next(r for r in ok if r.serving is chosen.serving)


NODE = costs.CloudOffer("lab", "h100x2", 2, 6.0, None, "on-demand", "2026-11-01", "test")
OFFERS = {
    "h100-sxm": costs.GpuOffers(
        (dataclasses.replace(NODE, instance_type="h100x1", gpus=1, usd_per_hour=3.0), NODE), ()
    ),
    "a100-sxm4-80gb": costs.GpuOffers(
        (dataclasses.replace(NODE, instance_type="a100x1", gpus=1, usd_per_hour=1.5),), ()
    ),
}


def test_a_serving_card_is_planned_and_evaluated_by_the_engine_entry_points() -> None:
    r = _run(H100, _serving())
    assert isinstance(r, ev.ConfigResult) and r.ok and r.serving is not None
    # the shape the planner found is the configuration's GPU count, its rate the estimate's
    assert r.num_gpus == r.serving.result.total_gpus
    assert r.perf is not None and r.perf.throughput == r.serving.result.output_tokens_per_s
    assert rank.Candidate.of(r).serving is r.serving


@pytest.mark.parametrize(
    ("limits", "framework", "gpu", "code"),
    [
        ({"vendors": ("amd",)}, "pytorch", H100, "filtered_out"),
        ({"segments": ("consumer",)}, "pytorch", H100, "filtered_out"),
        # the request's framework gates serving as it gates inference (it was ignored)
        ({}, "jax", MI300X, "framework_unsupported"),
    ],
)
def test_serving_is_filtered_and_gated_as_inference_is(
    limits: dict[str, object], framework: str, gpu, code: str
) -> None:
    serve = dataclasses.replace(_serving(**limits), framework=framework)
    infer = dataclasses.replace(_inference(**limits), framework=framework)
    out, ref = _run(gpu, serve), ev.plan(gpu, infer)
    assert isinstance(out, ev.Exclusion) and isinstance(ref, ev.Exclusion)
    assert (out.code, out.reason) == (ref.code, ref.reason) and out.code == code


def test_the_same_shape_costs_what_inference_pays_for_it_and_budgets_judge_it_alike() -> None:
    serve = dataclasses.replace(_serving(exact_gpus=2), offers=OFFERS)
    r = _run(H100, serve)
    assert isinstance(r, ev.ConfigResult) and r.ok and r.serving is not None
    assert r.num_gpus == 2 and r.pricing is not None and r.pricing.rent is not None
    same = ev.evaluate(ev.Configuration(H100, 2), dataclasses.replace(_inference(), offers=OFFERS))
    assert same.pricing is not None and same.pricing.rent is not None
    assert r.pricing.rent.offer == same.pricing.rent.offer
    assert r.pricing.rent.usd_per_hour == same.pricing.rent.usd_per_hour
    # a budget under that hour excludes the card with evaluate.budget's own words
    tight = dataclasses.replace(
        _serving(exact_gpus=2, max_hourly_usd=5.0, acquisition="rent"), offers=OFFERS
    )
    out = _run(H100, tight)
    assert isinstance(out, ev.ConfigResult) and out.exclusion is not None
    assert out.exclusion.code == "over_budget" and "$6.00/h > $5.00/h" in out.exclusion.reason


def test_serving_candidates_are_ranked_by_rank_rank_with_the_objectives_of_every_task() -> None:
    ctx = dataclasses.replace(_serving(acquisition="rent"), offers=OFFERS)
    found = [_run(g, ctx) for g in (H100, A100)]
    cands = [rank.Candidate.of(r) for r in found if isinstance(r, ev.ConfigResult) and r.ok]
    assert len(cands) == 2
    hours: dict[str, float] = {}
    speeds: dict[str, float] = {}
    for c in cands:
        assert c.serving is not None and c.serving.hourly is not None
        hours[c.gpu.slug], speeds[c.gpu.slug] = c.serving.hourly, c.serving.speed
    cheapest = rank.rank(list(cands), "cheapest")
    assert [c.gpu.slug for c in cheapest] == sorted(hours, key=lambda s: hours[s])
    assert cheapest[0].score == 1.0 and 0 < cheapest[1].score < 1  # best = 1, as every task
    fastest = rank.rank(list(cands), "fastest")
    assert [c.gpu.slug for c in fastest] == sorted(speeds, key=lambda s: -speeds[s])
    # balanced: speed^w × value^(1−w), the value output tokens per dollar (issue #23)
    w = 0.3
    tokens = {c.gpu.slug: c.serving.result.output_tokens_per_s or 0.0 for c in cands if c.serving}
    mix = {s: speeds[s] ** w * (tokens[s] * 3600 / hours[s]) ** (1 - w) for s in hours}
    balanced = rank.rank(list(cands), "balanced", w)
    assert [c.gpu.slug for c in balanced] == sorted(mix, key=lambda s: -mix[s])


# ---------------------------------------------------------------- shapes as configurations


def _shapes(gpu, ctx: ev.Context) -> list[ev.Configuration]:
    planned = ev.plan(gpu, ctx)
    assert not isinstance(planned, ev.Exclusion)
    return planned


def test_each_serving_shape_is_a_configuration_of_its_gpu_count() -> None:
    planned = _shapes(H100, _serving())
    shapes = [c.shape for c in planned]
    assert all(s is not None for s in shapes) and len(set(shapes)) == len(shapes) > 1
    for c in planned:
        assert c.shape is not None
        assert c.num_gpus == c.shape.replicas * c.shape.gpus_per_replica <= 8
        assert c.precision == c.shape.weight_precision and c.runtime == c.shape.runtime == "vllm"
        # an idle replica is not planned
        assert c.shape.replicas <= (LOAD.concurrent_requests or 0)
    # every GPUs-per-replica size the runtime spans, both KV formats, more replicas than one
    assert {c.shape.gpus_per_replica for c in planned if c.shape} == {1, 2, 4, 8}
    # the cache in the model's dtype unless an 8-bit one is asked (a quality trade)
    assert {c.shape.kv_precision for c in planned if c.shape} == {"bf16"}
    assert max(c.shape.replicas for c in planned if c.shape) == 8
    asked = WorkloadSpec(
        task="serving", model=LLAMA3_8B, runtime="vllm", efficiency=TABLE,
        serving=dataclasses.replace(LOAD, kv_cache_precision="fp8"),
    )  # fmt: skip
    fp8 = _shapes(H100, ev.Context(work=asked, rules=RULES))
    assert {c.shape.kv_precision for c in fp8 if c.shape} == {"fp8"}


def test_num_gpus_and_max_gpus_are_honoured_by_plan_as_for_every_task() -> None:
    exact = _shapes(H100, _serving(exact_gpus=2))
    assert {c.num_gpus for c in exact} == {2}
    assert {(c.shape.replicas, c.shape.gpus_per_replica) for c in exact if c.shape} == {
        (2, 1),
        (1, 2),
    }
    assert {c.num_gpus for c in _shapes(H100, _serving(max_gpus=2))} == {1, 2}
    # inference plans the same counts under the same limits
    infer = ev.plan(H100, _inference(exact_gpus=2))
    assert not isinstance(infer, ev.Exclusion) and {c.num_gpus for c in infer} == {2}


def _meeting(gpu, ctx: ev.Context) -> list[rank.Candidate]:
    results = _results(gpu, ctx)
    assert not isinstance(results, ev.Exclusion)
    return [rank.Candidate.of(r) for r in results if r.ok]


def _itl(c: rank.Candidate) -> float:
    assert c.serving is not None and c.serving.result.itl_ms is not None
    return c.serving.result.itl_ms


def _hour(c: rank.Candidate) -> float:
    """$/h of the shape (inf unpriced: a TP group of 4 or 8 fits none of OFFERS' instances)."""
    assert c.serving is not None
    return c.serving.hourly if c.serving.hourly is not None else float("inf")


def test_best_per_card_picks_each_cards_shape_by_the_objective() -> None:
    ctx = dataclasses.replace(_serving(acquisition="rent"), offers=OFFERS)
    cands = _meeting(H100, ctx)
    assert len(cands) > 4 and all(c.serving is not None and c.serving.meets for c in cands)
    picks = {}
    for objective in ("fastest", "cheapest", "best_value", "balanced"):
        ((chosen, others),) = rank.best_per_card(list(cands), objective)
        # the others are the card's alternatives: every other shape that meets the targets
        assert len(others) == len(cands) - 1 and chosen not in others
        picks[objective] = chosen
    # fastest: the lowest inter-token latency that meets the targets (it used to be the
    # cheapest shape whatever the objective)
    assert _itl(picks["fastest"]) == min(_itl(c) for c in cands)
    assert picks["fastest"].n > 1
    # cheapest: the lowest $/h; best value: the most output tokens per dollar (issue #23);
    # balanced, as every task: the fewest GPUs
    assert _hour(picks["cheapest"]) == min(_hour(c) for c in cands)
    values = [c.serving.value for c in cands if c.serving and c.serving.value is not None]
    assert picks["best_value"].serving is not None
    assert picks["best_value"].serving.value == max(values)
    assert picks["balanced"].n == min(c.n for c in cands) == 1
    assert _itl(picks["fastest"]) < _itl(picks["cheapest"])


def test_a_shape_that_misses_the_targets_is_not_a_candidate_and_the_card_shows_its_closest() -> (
    None
):
    ctx = _serving()
    itls = sorted(_itl(c) for c in _meeting(H100, ctx))
    target = itls[len(itls) // 2]  # half the shapes are within it
    tight = dataclasses.replace(LOAD, itl_ms_target=target)
    ctx = dataclasses.replace(ctx, work=dataclasses.replace(ctx.work, serving=tight), memo={})
    results = _results(H100, ctx)
    assert not isinstance(results, ev.Exclusion)
    ok = [rank.Candidate.of(r) for r in results if r.ok]
    missed = [r for r in results if not r.ok]
    assert missed and all(r.exclusion and r.exclusion.code == "misses_targets" for r in missed)
    assert ok and all(_itl(c) <= target for c in ok)
    # with a target no shape meets, the card's reason is its closest miss
    none = dataclasses.replace(LOAD, itl_ms_target=1.0)
    ctx = dataclasses.replace(ctx, work=dataclasses.replace(ctx.work, serving=none), memo={})
    results = _results(H100, ctx)
    assert not isinstance(results, ev.Exclusion) and not any(r.ok for r in results)
    why, near = serving_step.card_exclusion(results, ctx)
    assert why.code == "misses_targets" and why.reason.startswith("best within 8 GPUs (")
    assert near is not None and near.serving is not None and near.exclusion == why
    fastest = min(r.serving.result.itl_ms or 1e9 for r in results if r.serving)
    assert near.serving.result.itl_ms == fastest  # the ITL target alone: the nearest is fastest


def test_without_offers_serving_is_priced_from_the_catalog_as_every_task() -> None:
    ctx = _serving(acquisition="rent")
    assert ctx.offers is None and H100.hourly_usd is not None
    cands = _meeting(H100, ctx)
    assert cands and all(rank.price_known(c) for c in cands)
    for c in cands:
        # per-GPU catalog price × N, as inference's evaluate prices N GPUs
        assert _hour(c) == pytest.approx(H100.hourly_usd * c.n)
        same = ev.evaluate(ev.Configuration(H100, c.n), _inference())
        assert same.cost is not None and c.cost.hourly_usd == same.cost.hourly_usd
    ((chosen, _),) = rank.best_per_card(cands, "cheapest")
    assert chosen.n == 1  # the cheapest is no longer "fewest GPUs, unpriced"


@pytest.mark.parametrize("objective", ["fastest", "cheapest", "best_value", "balanced"])
@pytest.mark.parametrize(
    "limits",
    [{}, {"acquisition": "rent"}, {"acquisition": "rent", "max_hourly_usd": 10.0}],
    ids=["catalog", "offers", "budget"],
)
def test_skipping_the_shapes_no_objective_picks_keeps_every_cards_pick(
    objective: str, limits: dict[str, object]
) -> None:
    ctx = _serving(objective=objective, max_gpus=16, **limits)
    if limits:
        ctx = dataclasses.replace(ctx, offers=OFFERS)
    planned = _shapes(H100, ctx)
    full = serving_step.evaluate_card(planned, ctx, every=True)
    some = serving_step.evaluate_card(planned, ctx, every=False)
    assert len(some) < len(full) == len(planned)

    def pick(results: list[ev.ConfigResult]) -> object:
        cands = [rank.Candidate.of(r) for r in results if r.ok]
        ((chosen, _),) = rank.best_per_card(cands, objective)
        assert chosen.serving is not None
        return chosen.serving.result.config

    assert pick(some) == pick(full)


def test_a_runtime_the_rules_call_experimental_makes_the_row_experimental() -> None:
    """vLLM on Intel XPU is experimental in the shipped rules: a serving row on an Arc card
    carried the warning but framework_status 'supported', so it led a balanced answer ahead of
    every supported card. The runtime's status now is the row's, as inference's gate has it."""
    from app.catalog.loader import read_catalog
    from app.catalog.mapping import spec_from_create
    from app.shipped.rules import DATA_DIR, load_rules

    rules = load_rules()
    b580 = next(spec_from_create(g) for g in read_catalog(DATA_DIR) if g.slug == "arc-b580")
    work = WorkloadSpec(
        task="serving", model=LLAMA3_8B, runtime="vllm", efficiency=TABLE, serving=LOAD
    )
    ctx = ev.Context(work=work, rules=rules, limits=ev.Limits())
    results = _results(b580, ctx)
    assert not isinstance(results, ev.Exclusion)
    ok = [r for r in results if r.ok]
    assert ok and all(r.framework_status == "experimental" for r in ok)
    assert all(any("experimental" in w for w in r.warnings) for r in ok)
    # the same card asked as inference under vLLM: the gate says the same
    inf = ev.Context(
        work=dataclasses.replace(llm_inference(), runtime="vllm", efficiency=TABLE),
        rules=rules,
        limits=ev.Limits(),
    )
    done = _results(b580, inf)
    assert not isinstance(done, ev.Exclusion)
    assert all(r.framework_status == "experimental" for r in done if r.ok)


def test_a_replica_splits_the_heads_evenly_or_is_not_planned() -> None:
    """vLLM refuses a tensor-parallel size that does not divide the attention heads, and splits
    KV heads evenly or repeats each on tp ÷ kv ranks: Phi-4 (40 heads, 10 KV heads) was ranked
    at TP4 and TP8, and a 70B (64 heads) estimated at TP3 'meets the targets'."""
    phi4 = dataclasses.replace(LLAMA3_8B, num_heads=40, num_kv_heads=10)
    assert llm_step.head_split_error(phi4, 2) is None
    assert (
        llm_step.head_split_error(phi4, 5) is None and llm_step.head_split_error(phi4, 10) is None
    )
    assert "10 KV heads" in (llm_step.head_split_error(phi4, 4) or "")
    assert "40 attention heads" in (llm_step.head_split_error(phi4, 3) or "")
    assert llm_step.head_split_error(LLAMA3_8B, 8) is None  # 32 heads, 8 KV heads
    assert "32 attention heads" in (llm_step.head_split_error(LLAMA3_8B, 3) or "")
    # latent attention: one cache every rank holds whole, only the query heads split
    mla = dataclasses.replace(LLAMA3_8B, num_heads=128, num_kv_heads=128, attention="mla")
    assert llm_step.head_split_error(mla, 8) is None
    ctx = _serving(max_gpus=8)
    work = dataclasses.replace(ctx.work, model=phi4)
    planned = ev.plan(H100, dataclasses.replace(ctx, work=work))
    assert not isinstance(planned, ev.Exclusion)
    assert {c.shape.gpus_per_replica for c in planned if c.shape} == {1, 2}
    # a context's memo holds the card's options: a fresh context for each count
    exact = _serving(max_gpus=8, exact_gpus=4)
    four = ev.plan(
        H100, dataclasses.replace(exact, work=dataclasses.replace(exact.work, model=phi4))
    )
    assert not isinstance(four, ev.Exclusion)
    assert {(c.shape.replicas, c.shape.gpus_per_replica) for c in four if c.shape} == {
        (4, 1),
        (2, 2),
    }
    three = ev.plan(H100, _serving(max_gpus=8, exact_gpus=3))
    assert not isinstance(three, ev.Exclusion)  # 3 replicas of one GPU
    assert {(c.shape.replicas, c.shape.gpus_per_replica) for c in three if c.shape} == {(3, 1)}


def test_llm_inference_spans_only_gpu_counts_that_split_the_heads() -> None:
    """The same rule for one LLM inference job under a tensor-parallel runtime: three GPUs are
    refused by name (vLLM would not start), a layer split (llama.cpp) runs on any count."""
    work = dataclasses.replace(llm_inference(), runtime="vllm", efficiency=TABLE)
    three = ev.plan(H100, ev.Context(work=work, rules=RULES, limits=ev.Limits(exact_gpus=3)))
    assert isinstance(three, ev.Exclusion) and three.code == "runtime_unsupported"
    assert "32 attention heads do not split evenly over 3 GPUs" in three.reason
    four = ev.plan(H100, ev.Context(work=work, rules=RULES, limits=ev.Limits(exact_gpus=4)))
    assert isinstance(four, list) and {c.num_gpus for c in four} == {4}
    split = dataclasses.replace(work, runtime="llama.cpp", precision="int4")
    layer = ev.plan(H100, ev.Context(work=split, rules=RULES, limits=ev.Limits(exact_gpus=3)))
    assert isinstance(layer, list) and {c.num_gpus for c in layer} == {3}


def test_a_dense_fp8_checkpoint_runs_weight_only_on_ampere_under_vllm() -> None:
    """vLLM runs FP8 checkpoints on Turing/Ampere as W8A16 (FP8 Marlin); Llama 3.3 70B FP8 on
    two A100s was refused ("no fp8 tensor cores"). Dense models only: vLLM's fused MoE kernel
    has no FP8 Marlin path."""
    fp8_min = TABLE.serving["vllm"].fp8_weight_only_min_cc
    assert fp8_min == "7.5"
    assert llm_step.fp8_weight_only(A100, LLAMA3_8B, fp8_min)
    assert not llm_step.fp8_weight_only(H100, LLAMA3_8B, fp8_min)  # native FP8: not weight-only
    moe = dataclasses.replace(LLAMA3_8B, experts=8, active_experts=2)
    assert not llm_step.fp8_weight_only(A100, moe, fp8_min)
    assert TABLE.serving["sglang"].fp8_weight_only_min_cc is None
    work = dataclasses.replace(llm_inference(), runtime="vllm", precision="fp8", efficiency=TABLE)
    planned = ev.plan(A100, ev.Context(work=work, rules=RULES, limits=ev.Limits()))
    assert isinstance(planned, list)
    res = ev.evaluate(planned[0], ev.Context(work=work, rules=RULES, limits=ev.Limits()))
    assert res.ok and res.work is not None and res.work.precision == "fp8"
    assert any("runs FP8 weights through weight-only kernels" in w for w in res.warnings)
    # the weights are read at 8 bits: half the bf16 run's weight memory
    bf16 = ev.Context(work=dataclasses.replace(work, precision="bf16"), rules=RULES)
    plan16 = ev.plan(A100, bf16)
    assert isinstance(plan16, list)
    full = ev.evaluate(plan16[0], bf16)
    assert res.memory is not None and full.memory is not None
    # the embeddings and LM head stay 16-bit: a little over half
    assert 0.5 < res.memory.weights / full.memory.weights < 0.6


# Llama 3.1 405B's shape (its config.json): 810 GB in bf16, more than a server of 8 H100s
LLAMA_405B = dataclasses.replace(
    LLAMA3_8B,
    params=405.9e9,
    layers=126,
    hidden_size=16384,
    num_heads=128,
    num_kv_heads=8,
    intermediate_size=53248,
)


def _big(**limits: object) -> ev.Context:
    work = WorkloadSpec(
        task="serving",
        model=LLAMA_405B,
        runtime="vllm",
        efficiency=TABLE,
        serving=dataclasses.replace(LOAD, ttft_ms_target=None, itl_ms_target=None),
        precision="bf16",
        quantization="bf16",
    )
    return ev.Context(work=work, rules=RULES, limits=ev.Limits(**limits))  # type: ignore[arg-type]


def test_a_model_bigger_than_a_server_spans_servers_as_pipeline_stages() -> None:
    planned = _shapes(H100, _big(max_gpus=32))
    assert {c.shape.gpus_per_replica for c in planned if c.shape} <= {16, 32}
    assert {c.shape.weight_precision for c in planned if c.shape} == {"bf16"}
    r = _run(H100, _big(exact_gpus=16))
    assert isinstance(r, ev.ConfigResult) and r.ok and r.serving is not None
    res = r.serving.result
    assert res.config.gpus_per_replica == 16
    # tensor parallel 8 in each server, two stages: a token still reads every weight once, at
    # one server's bandwidth (the stages run in turn), so the step is no faster than that bound
    assert llm_step.span(r.serving.runtime.decode, 16) == (8, 2)
    one_server_s = 810e9 / (8 * H100.memory_bandwidth_gbs * 1e9)
    assert res.itl_ms is not None and res.itl_ms / 1000.0 > one_server_s
    assert res.weights_gb_per_gpu == pytest.approx(LLAMA_405B.params * 2 / 16 / 1e9, rel=0.02)
    # a model that fits one server never spans two: replicas of a server serve better
    fits = _shapes(H100, _serving(max_gpus=32))
    assert max(c.shape.gpus_per_replica for c in fits if c.shape) == 8


def test_only_server_gpus_under_a_tensor_parallel_server_span_servers() -> None:
    rtx = dataclasses.replace(H100, slug="rtx-x", segment="consumer")
    planned = ev.plan(rtx, _big(max_gpus=32))
    assert isinstance(planned, ev.Exclusion) and planned.code == "does_not_fit"
    assert "across servers" not in planned.reason
    refused = ev.plan(H100, _big(max_gpus=8))
    assert isinstance(refused, ev.Exclusion)
    assert "or 16 or 32 across servers" in refused.reason


def test_a_replica_across_servers_rents_whole_servers_of_a_providers_cluster() -> None:
    node = dataclasses.replace(NODE, instance_type="h100x8", gpus=8, usd_per_hour=24.0)
    market = dataclasses.replace(node, provider="vast", tier="community", usd_per_hour=12.0)
    placed = costs.choose_replica_offer([node, market], 16, 1)
    assert placed is not None and placed.choice.offer is node
    assert (placed.choice.instances, placed.spans, placed.choice.usd_per_hour) == (2, 2, 48.0)
    assert placed.note is not None and "as one cluster" in placed.note
    assert costs.choose_replica_offer([market], 16, 1) is None
    # two replicas of 16: four servers; a 2-GPU instance is not a server to span
    two = costs.choose_replica_offer([node], 16, 2)
    assert two is not None and two.choice.instances == 4
    assert costs.choose_replica_offer([NODE], 16, 1) is None


def test_a_runtime_without_an_fp8_kv_cache_plans_only_its_own() -> None:
    """llama.cpp's cache types are f16, q8_0, q4_0...: an fp8 KV plan would start with an f16
    cache twice the size it was sized for."""
    work = WorkloadSpec(
        task="serving",
        model=LLAMA3_8B,
        runtime="llama.cpp",
        runtime_given=True,
        efficiency=TABLE,
        serving=LOAD,
    )
    ctx = ev.Context(work=work, rules=RULES, limits=ev.Limits())
    planned = _shapes(H100, ctx)
    assert {c.shape.kv_precision for c in planned if c.shape} == {"bf16"}
    asked = dataclasses.replace(LOAD, kv_cache_precision="fp8")
    refused = ev.plan(H100, ev.Context(work=dataclasses.replace(work, serving=asked), rules=RULES))
    assert isinstance(refused, ev.Exclusion) and refused.code == "precision_unsupported"
    assert "llama.cpp" in refused.reason
    # vLLM, which has one, plans it where asked
    vllm = dataclasses.replace(work, runtime="vllm", serving=asked)
    fp8 = _shapes(H100, ev.Context(work=vllm, rules=RULES))
    assert {c.shape.kv_precision for c in fp8 if c.shape} == {"fp8"}


def test_a_block_fp8_moe_checkpoint_splits_only_on_its_128_wide_blocks() -> None:
    """vLLM refuses Qwen3-235B-A22B-FP8 at TP8 (1,536 ÷ 8 = 192 columns per GPU, not a
    multiple of the 128-wide block): such a shape is not planned, a 16-bit one is."""
    qwen = dataclasses.replace(
        LLAMA3_8B, experts=128, active_experts=8, intermediate_size=1536, num_kv_heads=4,
        num_heads=64, params=235e9, active_params=22e9, layers=94,
    )  # fmt: skip
    assert serving_step.fp8_block_error(qwen, "fp8", 8) is not None
    assert serving_step.fp8_block_error(qwen, "fp8", 4) is None  # 384 = 3 blocks
    assert serving_step.fp8_block_error(qwen, "bf16", 8) is None
    assert serving_step.fp8_block_error(LLAMA3_8B, "fp8", 8) is None  # dense: per-tensor
    small = dataclasses.replace(qwen, intermediate_size=768, params=30.5e9, active_params=3.3e9)
    assert [t for t in (2, 4, 8) if serving_step.fp8_block_error(small, "fp8", t)] == [4, 8]
    work = WorkloadSpec(
        task="serving", model=qwen, runtime="vllm", efficiency=TABLE,
        serving=dataclasses.replace(LOAD, ttft_ms_target=None, itl_ms_target=None),
        precision="fp8", quantization="fp8",
    )  # fmt: skip
    planned = ev.plan(H100, ev.Context(work=work, rules=RULES, limits=ev.Limits(max_gpus=8)))
    assert isinstance(planned, list) and planned
    fp8 = {c.shape.gpus_per_replica for c in planned if c.shape and c.precision == "fp8"}
    assert fp8 == {4}
    # 16-bit weights (470 GB) split over 8 as they did
    assert {c.shape.gpus_per_replica for c in planned if c.shape and c.precision != "fp8"} == {8}

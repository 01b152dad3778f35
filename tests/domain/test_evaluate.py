"""One evaluation per configuration: memory, speed, cost, gating and exclusions."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

import pytest

from app.domain import compat, perf
from app.domain import evaluate as ev
from app.domain.gpu import GpuSpec
from app.domain.workload import MemoryBreakdown, WorkloadSpec, memory_breakdown
from tests.domain.fixtures import (
    A100,
    H100,
    LLAMA3_8B,
    M2,
    MI300X,
    NOFIG,
    RESNET50,
    RTX4090,
    RULES,
    T4,
    llm_inference,
)


def _ctx(work: WorkloadSpec | None = None, **limits: object) -> ev.Context:
    return ev.Context(
        work=work or llm_inference(),
        rules=RULES,
        limits=ev.Limits(**limits),  # type: ignore[arg-type]
    )


def test_result_matches_the_parts_it_is_made_of() -> None:
    work = llm_inference()
    res = ev.evaluate(ev.Configuration(H100, 1), _ctx(work, objective="fastest"))
    assert res.ok and res.perf is not None and res.memory is not None and res.cost is not None
    direct = perf.estimate(H100, work, num_gpus=1)
    assert res.perf.throughput == pytest.approx(direct.throughput)
    assert res.memory.total == pytest.approx(memory_breakdown(work).total)
    assert res.available_gb == pytest.approx(ev.usable_gb(H100))
    assert res.backend == "cuda" and res.framework_status == "supported"


def test_a_count_that_does_not_hold_the_job_is_excluded_with_its_size() -> None:
    big = replace(LLAMA3_8B, params=70e9, layers=80, hidden_size=8192)
    work = llm_inference(model=big)
    res = ev.evaluate(ev.Configuration(RTX4090, 2), _ctx(work, objective="fastest"))
    assert not res.ok and res.exclusion is not None
    assert res.exclusion.code == "does_not_fit"
    assert "per GPU on 2" in res.exclusion.reason


def test_plan_picks_the_fewest_cards_that_hold_the_job() -> None:
    big = replace(LLAMA3_8B, params=70e9, layers=80, hidden_size=8192)
    work = llm_inference(model=big)
    planned = ev.plan(H100, _ctx(work, objective="fastest"))
    assert isinstance(planned, list) and planned[0].num_gpus == 2
    # Apple silicon is one device: a job beyond its unified memory has no configuration
    out = ev.plan(M2, _ctx(work, objective="fastest"))
    assert isinstance(out, ev.Exclusion) and out.code == "does_not_fit"
    assert "one GPU" in out.reason


@pytest.mark.parametrize(
    ("work", "gpu"),
    [
        (llm_inference(), T4),  # bf16 falls back to fp16: the variant names both
        (llm_inference(model=replace(LLAMA3_8B, params=70e9, layers=80)), H100),
        # several variants: 2 plain cards, or 1 with checkpointing and 8-bit AdamW
        (
            WorkloadSpec(task="training", model=replace(LLAMA3_8B, params=2e9), batch_size=16),
            RTX4090,
        ),
        (WorkloadSpec(task="training", model=RESNET50, batch_size=64), RTX4090),
    ],
)
def test_a_planned_configuration_carries_the_variant_it_would_resolve(
    work: WorkloadSpec, gpu: GpuSpec
) -> None:
    def fresh() -> ev.Context:
        return replace(_ctx(work, objective="fastest"), savers_allowed=frozenset(ev.SAVER_LABELS))

    ctx = fresh()
    planned = ev.plan(gpu, ctx)
    assert isinstance(planned, list)
    for cfg in planned:
        bare = replace(cfg, variant=None)
        assert cfg.variant is not None
        assert ev._variant(bare, fresh()) == cfg.variant
        ours, theirs = ev.evaluate(cfg, ctx), ev.evaluate(bare, fresh())
        assert ours.ok == theirs.ok and ours.work == theirs.work
        assert ours.perf is not None and theirs.perf is not None
        assert ours.perf.throughput == theirs.perf.throughput
    if work.training and work.model.family == "decoder":
        # the case with savers: plain cards, micro-batches, checkpointing weighed against them
        assert len({cfg.variant for cfg in planned}) >= 3


def test_a_memory_total_follows_its_parts() -> None:
    mem = memory_breakdown(WorkloadSpec(task="training", model=LLAMA3_8B, batch_size=4))
    assert mem.total == pytest.approx(sum(mem.parts().values()))
    more = replace(mem, activations=mem.activations + 3.0)
    assert more.total == pytest.approx(mem.total + 3.0)


def test_unified_memory_is_three_quarters_usable() -> None:
    # vendors' "GB" of HBM/GDDR/unified memory are GiB (app.domain.efficiency)
    gib = 2**30 / 1e9
    assert ev.usable_gb(M2) == pytest.approx(M2.memory_gb * gib * 0.75)
    assert ev.usable_gb(H100) == pytest.approx(H100.memory_gb * gib)


def test_precision_falls_back_with_a_warning() -> None:
    work = llm_inference(seq_len=256, output_tokens=64)
    res = ev.evaluate(ev.Configuration(T4, 2), _ctx(work, objective="fastest"))
    assert res.ok and res.work is not None and res.work.precision == "fp16"
    assert any("bf16" in w for w in res.warnings)


def test_gating_is_memoised_per_gpu_framework_precision_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, str, str | None]] = []
    real = ev._gate

    def counted(gpu: GpuSpec, precision: str, runtime: str | None, ctx: ev.Context) -> ev.Gate:
        calls.append((gpu.slug, precision, runtime))
        return real(gpu, precision, runtime, ctx)

    monkeypatch.setattr(ev, "_gate", counted)
    rules = compat.Rules(RULES.frameworks, RULES.features)  # a fresh memo
    for _request in range(2):  # the memo lives on the rules: it outlasts one request
        ctx = dataclasses.replace(_ctx(objective="fastest"), rules=rules, memo={})
        for n in (1, 2, 4):
            ev.evaluate(ev.Configuration(H100, n), ctx)
        ev.evaluate(ev.Configuration(H100, 1, precision="fp8"), ctx)
    assert calls == [("h100-sxm", "bf16", ctx.work.runtime), ("h100-sxm", "fp8", ctx.work.runtime)]
    # an edited spec is another key: the memo never answers for the old figures
    edited = dataclasses.replace(H100, fp8_tflops=None)
    ev.evaluate(ev.Configuration(edited, 1), ctx)
    assert len(calls) == 3


def test_memory_is_computed_once_per_job_count_and_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = ev.memory_breakdown

    def counted(work: WorkloadSpec, **kw: Any) -> MemoryBreakdown:
        calls.append(kw["num_gpus"])
        return real(work, **kw)

    monkeypatch.setattr(ev, "memory_breakdown", counted)
    ctx = _ctx(objective="fastest")
    other = dataclasses.replace(H100, slug="other-cuda-card", name="Other")
    for gpu in (H100, other):
        for n in (1, 2):
            assert ev.evaluate(ev.Configuration(gpu, n), ctx).ok
    assert sorted(calls) == [1, 2]  # the second GPU (same backend and kernels) reuses them


def test_price_cut_happens_before_the_roofline(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: object, **k: object) -> None:
        raise AssertionError("roofline ran for a configuration the budget already excludes")

    monkeypatch.setattr(perf, "estimate", boom)
    res = ev.evaluate(
        ev.Configuration(RTX4090, 2),
        _ctx(objective="best_value", acquisition="buy", max_purchase_usd=1000.0),
    )
    assert res.exclusion is not None and res.exclusion.code == "over_budget"


def test_no_figures_and_no_price() -> None:
    small = WorkloadSpec(task="inference", model=RESNET50, batch_size=8)
    res = ev.evaluate(ev.Configuration(NOFIG, 1), _ctx(small, objective="fastest"))
    assert res.exclusion == ev.Exclusion(
        "no_figures", "the catalog has no compute figures to model this GPU"
    )
    res = ev.evaluate(ev.Configuration(H100, 1), _ctx(objective="cheapest", acquisition="buy"))
    assert res.exclusion is not None and res.exclusion.code == "no_price"


def test_filters_exclude_before_anything_else() -> None:
    res = ev.evaluate(ev.Configuration(A100, 1), _ctx(objective="fastest", vendors=("amd",)))
    assert res.exclusion is not None and res.exclusion.code == "filtered_out"


def test_offer_prices_the_configuration() -> None:
    offer = ev.Offer(provider="cloudy", name="4x", gpus=4, hourly_usd=8.0, as_of="2026-01-01")
    work = WorkloadSpec(task="training", model=RESNET50, batch_size=64, dataset_samples=1e6)
    res = ev.evaluate(ev.Configuration(A100, 4, offer=offer), _ctx(work, objective="cheapest"))
    assert res.ok and res.cost is not None
    assert res.cost.hourly_usd == pytest.approx(8.0)
    assert res.cost.hourly_provider == "cloudy"


def test_time_to_finish_counts_generated_tokens_for_llm_inference() -> None:
    work = llm_inference(dataset_samples=1000.0)
    res = ev.evaluate(ev.Configuration(H100, 1), _ctx(work, objective="fastest"))
    assert res.perf is not None and res.cost is not None
    hours = 1000 * work.output_tokens / res.perf.throughput / 3600
    assert res.cost.time_to_finish_h == pytest.approx(hours)


def test_offer_prices_are_kept_across_requests_by_their_offers_snapshot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.domain import cost as costs

    calls: list[int] = []
    real = costs.price_configuration

    def counted(offers: costs.GpuOffers, n: int, *a: Any) -> costs.Pricing:
        calls.append(n)
        return real(offers, n, *a)

    monkeypatch.setattr(costs, "price_configuration", counted)
    node = costs.CloudOffer("lab", "x8", 8, 16.0, None, "on-demand", "2026-11-01", "test")
    offers = costs.OfferBook({"h100-sxm": costs.GpuOffers((node,), ())})
    for _request in range(2):
        ctx = dataclasses.replace(_ctx(objective="fastest"), offers=offers, memo={})
        res = ev.evaluate(ev.Configuration(H100, 2), ctx)
        assert res.pricing is not None and res.pricing.rent is not None
        assert res.pricing.rent.usd_per_hour == 16.0
    assert calls == [2]
    # new offers (the service reloads them after an edit) are priced afresh
    cheaper = costs.OfferBook({"h100-sxm": costs.GpuOffers((replace(node, usd_per_hour=8.0),), ())})
    ctx = dataclasses.replace(_ctx(objective="fastest"), offers=cheaper, memo={})
    res = ev.evaluate(ev.Configuration(H100, 2), ctx)
    assert res.pricing is not None and res.pricing.rent is not None
    assert res.pricing.rent.usd_per_hour == 8.0 and calls == [2, 2]
    # another rental policy is another question
    ctx = dataclasses.replace(ctx, rental=costs.RentalPolicy(tiers=("on-demand",)), memo={})
    ev.evaluate(ev.Configuration(H100, 2), ctx)
    assert calls == [2, 2, 2]
    # plain offers (no snapshot to keep them with) are priced once per request
    plain = dict(cheaper)
    for _request in range(2):
        ctx = dataclasses.replace(_ctx(objective="fastest"), offers=plain, memo={})
        ev.evaluate(ev.Configuration(H100, 2), ctx)
        ev.evaluate(ev.Configuration(H100, 2), ctx)
    assert calls == [2, 2, 2, 2, 2]


def test_a_deadline_excludes_a_configuration_that_takes_longer() -> None:
    work = llm_inference(dataset_samples=1000.0)
    free = ev.evaluate(ev.Configuration(H100, 1), _ctx(work, objective="fastest"))
    assert free.ok and free.cost is not None and free.cost.time_to_finish_h is not None
    took = free.cost.time_to_finish_h
    late = ev.evaluate(
        ev.Configuration(H100, 1), _ctx(work, objective="fastest", max_hours=took * 0.9)
    )
    assert late.exclusion is not None and late.exclusion.code == "misses_deadline"
    assert "more than the" in late.exclusion.reason
    in_time = ev.evaluate(
        ev.Configuration(H100, 1), _ctx(work, objective="fastest", max_hours=took * 1.1)
    )
    assert in_time.ok


def test_a_deadline_does_not_judge_a_job_of_unknown_length() -> None:
    work = llm_inference()  # no dataset: no time to finish
    res = ev.evaluate(ev.Configuration(H100, 1), _ctx(work, objective="fastest", max_hours=1e-6))
    assert res.ok and res.cost is not None and res.cost.time_to_finish_h is None


def test_a_framework_rules_caveat_reaches_the_row_and_only_its_frameworks() -> None:
    from app.domain.compat import FeatureRule, FrameworkRule, Rules

    rules = Rules(
        frameworks=(
            FrameworkRule("pytorch", "rocm", "amd", gfx_targets=("gfx942",)),
            FrameworkRule(
                "tensorflow", "rocm", "amd", gfx_targets=("gfx942",), caveat="AMD's own TF build"
            ),
        ),
        features=(
            FeatureRule(
                "rocm_windows", "amd", gfx_targets=("gfx942",), backends=("rocm",),
                status="experimental", notes="ROCm PyTorch on Windows is a preview",
            ),
        ),
    )  # fmt: skip
    work = replace(llm_inference(), precision="fp16")

    def warnings(framework: str, runtime: str | None = None) -> tuple[str, ...]:
        job = work if runtime is None else replace(work, runtime=runtime)
        ctx = ev.Context(work=job, rules=rules, framework=framework)
        res = ev.evaluate(ev.Configuration(MI300X, 1), ctx)
        assert res.ok, res.exclusion
        return res.warnings

    assert "AMD's own TF build" in warnings("tensorflow")
    assert not any("PyTorch" in w for w in warnings("tensorflow"))
    assert "AMD's own TF build" not in warnings("pytorch")
    # ROCm PyTorch's Windows preview is no caveat of a question that names no operating
    # system (a tip for Windows readers: rank.windows_note), nor of llama.cpp's
    assert not any("Windows" in w for w in warnings("pytorch"))
    assert not any("PyTorch" in w for w in warnings("pytorch", "llama.cpp"))


def test_exactly_n_gpus_lifts_most_gpus() -> None:
    """ "Exactly 16" beside "most GPUs" at its default of 8 asks for 16; below it, nothing moves."""
    assert ev.Limits(max_gpus=8, exact_gpus=16).max_gpus == 16
    assert ev.Limits(max_gpus=8, exact_gpus=4).max_gpus == 8
    assert ev.Limits(max_gpus=8).max_gpus == 8


def test_a_duration_under_a_minute_is_said_in_seconds() -> None:
    from app.domain.evaluate import hours_text

    assert hours_text(30 / 3600) == "30 s"  # once "0 min"
    assert hours_text(1e-6) == "0.0036 s"
    assert hours_text(0.75) == "45 min"
    assert hours_text(29.0) == "29 h"  # three significant figures (figures.duration)
    assert hours_text(24 * 46.2) == "46.2 days"


def test_lora_gets_8bit_adamw_only_where_micro_batches_cannot_do_without_it() -> None:
    """Under (Q)LoRA the optimiser state is the adapters': 8-bit AdamW saves next to nothing,
    so the savers ladder tries every micro-batch (the same update) before it and an answer
    never names an optimiser change that bought nothing."""
    full = WorkloadSpec(task="training", model=replace(LLAMA3_8B, params=1.5e9), batch_size=16)
    lora = replace(full, task="fine-tuning", peft="lora", gradient_checkpointing=True)
    ladder = ev._build_ladder(lora, frozenset(ev.SAVER_LABELS))
    first_8bit = next(i for i, (savers, _) in enumerate(ladder) if "adam8bit" in savers)
    exact = [micro for savers, micro in ladder[:first_8bit] if "micro_batch" in savers]
    assert exact == [8, 4, 2, 1]
    assert all("adam8bit" in savers for savers, _ in ladder[first_8bit:])

    def planned(job: WorkloadSpec) -> list[ev.Configuration]:
        ctx = replace(_ctx(job, objective="fastest"), savers_allowed=frozenset(ev.SAVER_LABELS))
        out = ev.plan(RTX4090, ctx)
        assert isinstance(out, list) and out
        return out

    # an 8B LoRA at Alpaca's batch of 128: micro-batches alone fit one card
    configs = planned(replace(lora, model=LLAMA3_8B, batch_size=128))
    fewest = min(configs, key=lambda c: c.num_gpus)
    assert fewest.num_gpus == 1 and "micro_batch" in fewest.savers
    assert all("adam8bit" not in c.savers for c in configs)
    # a full fine-tune whose AdamW state overflows a 24 GB card still gets 8-bit AdamW
    assert any("adam8bit" in c.savers for c in planned(full))


def test_derived_peak_names_only_the_datapath_the_precision_runs_on() -> None:
    """A row is widened for a derived peak (bands.DERIVED_PEAK) and its provenance says
    "derived" only where the 16-bit peak its math runs at is derived. A card that publishes
    its FP16 and BF16 tensor peaks but not TF32 (the RTX 5090's whitepaper table) runs an fp16,
    bf16 or weight-only int4 job at a published peak (perf's datapath: fp16 / bf16, int4
    dequantised to fp16); only a tf32 job runs at a derived one. fp32 reads no 16-bit peak."""
    card = replace(RTX4090, fp16_tflops=165.2, bf16_tflops=165.2, tf32_tflops=None)
    assert perf.peak_tflops(card, "tf32")[1]  # derivable: fp32 × the Ada consumer ratio
    assert not ev.derived_peak(card, "fp16")
    assert not ev.derived_peak(card, "bf16")
    assert not ev.derived_peak(card, "int4")
    assert ev.derived_peak(card, "tf32")
    assert not ev.derived_peak(card, "fp32")
    # a card publishing none of the three derives every 16-bit peak
    bare = replace(card, fp16_tflops=None, bf16_tflops=None)
    assert all(ev.derived_peak(bare, p) for p in ("fp16", "bf16", "tf32", "int4", "int8"))


def test_full_training_tries_micro_batches_before_8bit_adamw() -> None:
    """Micro-batches with gradient accumulation are the same update; 8-bit AdamW changes the
    optimiser's numerics. Full training too tries every micro-batch before it, and reaches it
    only where micro-batches of one sample still need more cards (Llama 3 8B pretraining at
    GPT-3's 1,024 sequences was answered with 8-bit AdamW on 8 H100s, where micro-batches of
    64 alone hold it in 56 of 80 GB)."""
    full = WorkloadSpec(task="training", model=LLAMA3_8B, batch_size=1024, seq_len=2048)
    ladder = ev._build_ladder(full, frozenset(ev.SAVER_LABELS))
    first_8bit = next(i for i, (savers, _) in enumerate(ladder) if "adam8bit" in savers)
    exact = [micro for savers, micro in ladder[:first_8bit] if "micro_batch" in savers]
    assert exact[0] == 512 and exact[-1] == 1
    ctx = replace(_ctx(full, objective="fastest"), savers_allowed=frozenset(ev.SAVER_LABELS))
    configs = ev.plan(H100, ctx)
    assert isinstance(configs, list) and configs
    eight = [c for c in configs if c.num_gpus == 8]
    assert eight and all("adam8bit" not in c.savers for c in eight), eight
    assert all("micro_batch" in c.savers for c in eight)
    # a 1.2B model whose fp32 AdamW state alone (9.6 GB) overflows a 24 GB card beside the
    # weights, master copy and accumulated gradients still reaches 8-bit AdamW for one card
    small = replace(full, model=replace(LLAMA3_8B, params=1.2e9), batch_size=16)
    # a context of its own: the memo holds the 8B job's variants by their savers
    fresh = replace(_ctx(small, objective="fastest"), savers_allowed=frozenset(ev.SAVER_LABELS))
    one = ev.plan(RTX4090, fresh)
    assert isinstance(one, list)
    assert any(c.num_gpus == 1 and "adam8bit" in c.savers for c in one)


def test_a_data_parallel_row_holds_a_whole_copy_of_the_model_on_each_gpu() -> None:
    """Issue #23 walk: LoRA on Llama 3 8B over 8 H100s was laid out as DDP ('data parallel')
    while its memory showed the frozen 16 GB base split eight ways (2 GB per GPU, 36 GB in all):
    each DDP replica holds the whole model and 1/8 of the batch."""
    work = WorkloadSpec(
        task="fine-tuning",
        model=LLAMA3_8B,
        precision="bf16",
        peft="lora",
        batch_size=16,
        seq_len=2048,
        gradient_checkpointing=True,
    )
    res = ev.evaluate(ev.Configuration(H100, 8), _ctx(work, objective="fastest"))
    assert res.ok and res.perf is not None and res.memory is not None
    assert "DDP" in res.perf.parallelism and res.perf.shard_group == 1
    replica = memory_breakdown(replace(work, batch_size=2), num_gpus=1)
    assert res.memory.weights == pytest.approx(replica.weights)
    assert res.memory.total == pytest.approx(replica.total)


def test_fsdp_qlora_is_named_only_where_the_row_shards() -> None:
    """Issue #23 walk: 4× RTX 3070 QLoRA rows laid out as DDP (each GPU a whole 4-bit copy,
    bitsandbytes as on one card) were told 'QLoRA on several GPUs needs FSDP-QLoRA'."""
    work = WorkloadSpec(
        task="fine-tuning",
        model=LLAMA3_8B,
        precision="bf16",
        peft="qlora",
        batch_size=2,
        seq_len=1024,
        gradient_checkpointing=True,
    )
    ddp = ev.evaluate(ev.Configuration(RTX4090, 2), _ctx(work, objective="fastest"))
    assert ddp.ok and ddp.perf is not None and ddp.perf.shard_group == 1
    assert not any("FSDP-QLoRA" in w for w in ddp.warnings)
    big = replace(work, model=replace(LLAMA3_8B, params=70e9, layers=80, hidden_size=8192))
    sharded = ev.evaluate(ev.Configuration(RTX4090, 4), _ctx(big, objective="fastest"))
    assert sharded.ok and sharded.perf is not None and sharded.perf.shard_group != 1
    assert any("FSDP-QLoRA" in w for w in sharded.warnings)


def test_an_fp4_checkpoint_run_at_another_precision_is_sized_at_that_precision() -> None:
    """An MXFP4 release (gpt-oss) under Transformers: from compute capability 7.5 its weights
    stay MXFP4 behind weight-only kernels at 16-bit math (Hugging Face's MXFP4 page); below it
    they are dequantised at load, so a Volta card holds 16-bit weights, not 4.25-bit ones (the
    row said 'estimated at fp16' while counting MXFP4 bytes; an Ada card was 'estimated at fp8',
    a path Transformers does not take)."""
    from app.shipped.rules import load_efficiency

    table = load_efficiency()
    job = llm_inference(
        precision="fp4", quantization="mxfp4", weight_bits=4.25, runtime="transformers",
        efficiency=table,
    )  # fmt: skip
    assert table.serving["transformers"].fp4_weight_only_min_cc == "7.5"
    ada = RTX4090  # no FP4 tensor cores
    kept = ev.evaluate(ev.Configuration(ada, 1), _ctx(job, objective="fastest"))
    assert kept.ok and kept.work is not None and kept.work.precision == "fp4"
    assert kept.work.quantization == "mxfp4" and kept.perf is not None
    assert kept.perf.compute_precision == "bf16"
    volta = replace(ada, slug="volta-24", compute_capability="7.0", fp8_tflops=None)
    dequantised = ev.evaluate(ev.Configuration(volta, 1), _ctx(job, objective="fastest"))
    assert dequantised.work is not None and dequantised.work.precision in ("fp16", "bf16")
    assert dequantised.work.quantization == "none"
    sixteen = memory_breakdown(
        replace(job, precision="fp16", quantization="none", weight_bits=None)
    )
    assert dequantised.memory is not None
    assert dequantised.memory.weights == pytest.approx(sixteen.weights)
    assert kept.memory is not None and kept.memory.weights < sixteen.weights / 2


def test_a_mac_that_misses_only_by_the_wired_share_is_told_how_to_raise_it() -> None:
    """A 64 GB M1 Max refused a 54 GB model as "48 GB usable" and said no more: macOS wires
    about 75 % of unified memory for the GPU by default, a limit a sysctl raises. The reason
    now says so where the job fits in the machine's memory, and only there."""
    from tests.domain.fixtures import A100, M2

    total = 80.0  # GB (10^9 bytes): above 75 % of the M2 Max's 96 GiB, below all of it
    hint = ev._wired_limit(M2, total)
    assert "sudo sysctl iogpu.wired_limit_mb=N" in hint and "75%" in hint
    assert ev._wired_limit(M2, 120.0) == ""  # more than the machine has: no sysctl helps
    assert ev._wired_limit(A100, 90.0) == ""  # a discrete GPU's memory is its own


def test_a_training_job_never_shards_one_sample_over_data_parallel_gpus() -> None:
    """FSDP and DDP split the batch, never a sample: a full fine-tune that fits only sharded
    over more GPUs than its batch has samples was planned at that count (its activations a
    fraction of one sample's), so an 8-card answer 'fitted' a job that runs out of memory."""
    full = WorkloadSpec(
        task="fine-tuning", model=LLAMA3_8B, peft="none", batch_size=1, seq_len=1024,
        gradient_checkpointing=False,
    )  # fmt: skip

    def plan(job: WorkloadSpec, **limits: object) -> list[ev.Configuration] | ev.Exclusion:
        return ev.plan(A100, _ctx(job, objective="fastest", **limits))

    one = plan(full)  # the states alone overflow one 80 GB card; a batch of 1 feeds one GPU
    assert isinstance(one, ev.Exclusion) and "a batch of 1 feeds at most 1 GPU " in one.reason
    two = plan(full, exact_gpus=2)
    assert isinstance(two, ev.Exclusion) and "feeds at most 1 GPU" in two.reason
    fed = plan(replace(full, batch_size=4))
    assert isinstance(fed, list) and fed
    assert all(c.num_gpus <= (c.micro_batch or 4) for c in fed)
    assert min(c.num_gpus for c in fed) == 2
    # inference replicas need no sample per GPU: a batch of 1 still spans GPUs
    inf = plan(llm_inference(batch_size=1, model=replace(LLAMA3_8B, params=70e9)))
    assert isinstance(inf, list) and max(c.num_gpus for c in inf) > 1


def test_micro_batches_without_checkpointing_are_weighed_against_checkpointing() -> None:
    """The savers ladder put checkpointing first and never tried a micro-batch without it, so
    answers paid a recomputed forward pass where gradient accumulation alone held the job (8
    H100s pretraining a 1.1B model: 351k tokens/s against 444k by the engine's own figures).
    Both are planned at the counts that need a saver, and the objective picks."""
    work = WorkloadSpec(
        task="training", model=replace(LLAMA3_8B, params=1e9), batch_size=64, seq_len=1024
    )
    ctx = replace(_ctx(work, objective="fastest"), savers_allowed=frozenset(ev.SAVER_LABELS))
    planned = ev.plan(RTX4090, ctx)
    assert isinstance(planned, list)
    one = [c for c in planned if c.num_gpus == 1]
    micro = [c for c in one if "micro_batch" in c.savers and "checkpointing" not in c.savers]
    ckpt = [c for c in one if "checkpointing" in c.savers]
    assert micro and ckpt, [c.savers for c in one]
    # a count the job holds with no saver is not planned again with checkpointing
    plain = {c.num_gpus for c in planned if not c.savers}
    assert not any(c.num_gpus in plain and "checkpointing" in c.savers for c in planned)
    # no recomputation: accumulation alone runs faster here, and the planner now sees it
    fast = ev.evaluate(micro[0], ctx)
    slow = ev.evaluate(ckpt[0], ctx)
    assert fast.ok and slow.ok and fast.perf and slow.perf
    assert fast.perf.throughput > slow.perf.throughput


def test_an_over_budget_reason_names_the_gpus_its_price_covers():
    # "purchase $3,192.00 > $3,000.00" beside a GTX 1080 Ti read as one card at that price;
    # it was eight at $399
    lim = ev.Limits(acquisition="buy", max_purchase_usd=3000)
    _, excl = ev.budget(ev.PriceOnly(3192.0, None), lim, gpus=8)
    assert excl is not None and excl.code == "over_budget"
    assert excl.reason == "purchase of 8 GPUs $3,192 > $3,000"
    _, one = ev.budget(ev.PriceOnly(3192.0, None), lim)
    assert one is not None and one.reason == "purchase $3,192 > $3,000"
    hour = ev.Limits(acquisition="rent", max_hourly_usd=3.0)
    _, rent = ev.budget(ev.PriceOnly(None, 4.6), hour, gpus=2)
    assert rent is not None and rent.reason == "rent of 2 GPUs $4.60/h > $3.00/h"


def test_each_count_runs_plain_data_parallel_where_a_smaller_micro_batch_holds_a_copy_each() -> (
    None
):
    """An 8B LoRA whose one sample fits a 24 GB card: 2, 4 and 8 cards each hold a whole copy
    at one sample a card (more accumulation steps, the same update) and all-reduce only the
    adapters, where the first step that held them sharded the model over PCIe: 8 RTX 4090s
    had run at 4.0× one card, not ~8×."""
    lora = WorkloadSpec(
        task="fine-tuning", model=LLAMA3_8B, peft="lora", batch_size=16, seq_len=2048,
        gradient_checkpointing=True,
    )  # fmt: skip
    ctx = replace(_ctx(lora, objective="fastest"), savers_allowed=frozenset(ev.SAVER_LABELS))
    planned = ev.plan(RTX4090, ctx)
    assert isinstance(planned, list)
    by_count = {c.num_gpus: c for c in planned}
    assert set(by_count) == {1, 2, 4, 8}
    for k, c in by_count.items():
        assert c.micro_batch == k and "micro_batch" in c.savers  # one sample a card
    rate = {k: ev.evaluate(c, ctx).perf for k, c in by_count.items()}
    one = rate[1]
    assert one is not None
    for k in (2, 4, 8):
        r = rate[k]
        assert r is not None and r.throughput >= 0.9 * k * one.throughput

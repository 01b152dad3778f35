"""Objectives, deterministic ties, explanations, tips and uncertainty."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from app.domain import bands, cost, perf, rank
from app.domain import serving as sv
from app.domain.gpu import GpuSpec, Price
from app.domain.workload import WorkloadSpec, memory_breakdown
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import (
    A100,
    BERT_LARGE,
    H100,
    LLAMA2_7B,
    LLAMA3_8B,
    MI300X,
    RESNET50,
    RTX3090,
    RTX4090,
    candidate,
    llm_inference,
)


def _cand(gpu: GpuSpec, work: WorkloadSpec | None = None, n: int = 1) -> rank.Candidate:
    return candidate(gpu, work or llm_inference(), n)


def test_fastest_orders_by_throughput() -> None:
    out = rank.rank([_cand(A100), _cand(H100), _cand(RTX3090)], "fastest")
    assert [c.gpu.slug for c in out] == ["h100-sxm", "a100-sxm4-80gb", "rtx-3090"]
    assert out[0].score == 1.0 and 0 < out[-1].score < 1


def test_cheapest_prefers_lowest_job_cost() -> None:
    out = rank.rank([_cand(A100), _cand(H100), _cand(RTX4090)], "cheapest")
    assert out[0].gpu.slug == "rtx-4090"


def test_ties_break_by_slug() -> None:
    twin = replace(RTX4090, slug="a-twin", name="Twin")
    out = rank.rank([_cand(RTX4090), _cand(twin)], "fastest")
    assert [c.gpu.slug for c in out] == ["a-twin", "rtx-4090"]
    assert out[0].score == out[1].score


def test_latency_target_misses_go_last() -> None:
    a, b = _cand(A100), _cand(H100)
    b.meets_latency = False
    a.meets_latency = True
    assert rank.rank([b, a], "fastest")[0].gpu.slug == "a100-sxm4-80gb"


def test_explanation_says_what_decided() -> None:
    out = rank.rank([_cand(A100), _cand(H100)], "fastest")
    lines = rank.explain(out[1], 2, out[0], "fastest")
    assert any("H100" in line and "×" in line for line in lines)
    assert any("memory bandwidth" in line for line in lines)


def test_tips_follow_the_job() -> None:
    c = _cand(H100)
    tips = " ".join(rank.tips(c, c.work))
    assert "4-bit weights (" in tips and "batching" in tips
    full = WorkloadSpec(task="fine-tuning", model=LLAMA2_7B, precision="fp32", seq_len=512)
    t = " ".join(rank.tips(_cand(H100, full, n=4), full))
    assert "mixed precision" in t and "LoRA" in t
    # pretraining from scratch is not told to fine-tune adapters instead
    scratch = replace(full, task="training")
    assert "LoRA" not in " ".join(rank.tips(_cand(H100, scratch, n=4), scratch))


def test_uncertainty_is_wider_when_modelled_than_measured() -> None:
    c = _cand(A100)
    lo, hi, _ = rank.uncertainty(c)
    c.perf = replace(c.perf, efficiency_source="measured")
    mlo, mhi, basis = rank.uncertainty(c)
    assert lo < mlo < 1 < mhi < hi
    assert "measured" in basis


def test_cheapest_explanation_keeps_cents_for_small_costs() -> None:
    # Two jobs of $6.98 and $6.94 once read "$7 against $7": the explanation must show
    # the difference that decided the order.
    cheap = replace(RTX4090, cloud_price=Price(usd=0.10, as_of="2026-01-01"))
    dear = replace(RTX3090, slug="rtx-3090-dear", cloud_price=Price(usd=0.45, as_of="2026-01-01"))
    out = rank.rank([_cand(cheap), _cand(dear)], "cheapest")
    line = rank.explain(out[1], 2, out[0], "cheapest")
    text = " ".join(line)
    assert re.search(r"\$\d+\.\d\d? against \$\d+\.\d\d?", text), text


def test_multi_card_desktop_builds_get_power_and_slot_tips() -> None:
    card = replace(RTX4090, tdp_w=450.0, slot_width=3.0)
    c = _cand(card, n=4)
    text = " ".join(rank.tips(c, c.work))
    assert "1,800 W of GPU power" in text and "2,700 W" in text
    assert "do not fit" in text  # 4 × 3 slots > 7
    single = _cand(card, n=1)
    single.acquisition = "rent"  # a bought single card gets its supply line (test_r25words_*)
    assert not any("GPU power" in t for t in rank.tips(single, single.work))
    server = _cand(replace(H100, tdp_w=700.0), n=8)
    assert not any(
        "GPU power" in t for t in rank.tips(server, server.work)
    )  # a datacenter part lives in a server


def test_balanced_speed_weight_moves_between_value_and_speed() -> None:
    def order(objective: str, w: float = rank.DEFAULT_SPEED_WEIGHT) -> list[str]:
        cands = [_cand(g) for g in (H100, RTX4090, RTX3090)]
        return [c.gpu.slug for c in rank.rank(cands, objective, w)]

    fastest, value = order("fastest"), order("best_value")
    assert fastest != value  # the weight has something to choose between
    assert order("balanced", 1.0) == fastest
    assert order("balanced", 0.0) == value
    # ½ is the geometric mean of the two scores, as the methodology says
    out = rank.rank([_cand(g) for g in (H100, RTX4090, RTX3090)], "balanced", 0.5)
    for c in out:
        assert c.value_score is not None
        raw = (c.speed_score * c.value_score) ** 0.5
        top = max((x.speed_score * (x.value_score or 0)) ** 0.5 for x in out)
        assert c.score == pytest.approx(raw / top, abs=1e-6)


def test_a_candidate_carries_each_part_of_its_result_to_its_namesake() -> None:
    from app.domain import evaluate as ev
    from tests.domain.fixtures import RESNET50, RULES, T4

    # a batch one T4 holds only as smaller micro-batches: savers and accumulation are set
    work = WorkloadSpec(model=RESNET50, task="training", batch_size=2048, precision="fp16")
    ctx = ev.Context(
        work=work,
        rules=RULES,
        limits=ev.Limits(objective="fastest"),
        savers_allowed=frozenset({"checkpointing", "adam8bit", "micro_batch"}),
    )
    planned = ev.plan(T4, ctx)
    assert not isinstance(planned, ev.Exclusion)
    r = next(x for x in (ev.evaluate(c, ctx) for c in planned) if x.ok and x.accumulation_steps > 1)
    c = rank.Candidate.of(r)
    assert (c.gpu, c.work, c.memory, c.available_gb, c.perf, c.cost) == (
        r.gpu, r.work, r.memory, r.available_gb, r.perf, r.cost,
    )  # fmt: skip
    assert c.warnings == list(r.warnings) and c.warnings is not r.warnings
    assert (c.derived_peak, c.framework_status, c.meets_latency, c.acquisition) == (
        r.derived_peak, r.framework_status, r.meets_latency, r.acquisition,
    )  # fmt: skip
    assert c.savers == r.config.savers and c.savers
    assert c.micro_batch == r.config.micro_batch and c.accumulation_steps == r.accumulation_steps
    assert c.pricing is r.pricing
    assert (c.score, c.speed_score, c.value_score) == (0.0, 0.0, None)


def test_best_value_against_a_lead_priced_another_way_says_so() -> None:
    lead, other = _cand(H100), _cand(A100)
    lead.cost = replace(lead.cost, samples_per_usd_rent=None)  # the lead can only be bought
    other.acquisition = "rent"
    assert other.cost.samples_per_usd_rent is not None
    line = next(x for x in rank.explain(other, 2, lead, "best_value") if "Ranked #2" in x)
    # an LLM row's value is its output tokens: their price per million, as rented
    assert "per million output tokens rented" in line and "has no such price to compare" in line
    assert "of the best" not in line  # no score relative to cards the answer may not show


def test_a_limit_orders_only_the_rows_shown_and_scores_every_candidate() -> None:
    twin = replace(RTX4090, slug="a-twin", name="Twin")  # an exact tie with the RTX 4090
    gpus = (H100, A100, RTX4090, twin, RTX3090)
    for objective in ("fastest", "best_value", "cheapest", "balanced"):
        full = rank.rank([_cand(g) for g in gpus], objective)
        for k in (1, 2, 3, 5):
            cands = [_cand(g) for g in gpus]
            top = rank.rank(cands, objective, limit=k)
            assert [c.gpu.slug for c in top] == [c.gpu.slug for c in full[:k]]
            scores = {c.gpu.slug: c.score for c in full}
            assert {c.gpu.slug: c.score for c in cands} == scores  # every one scored


def test_an_llm_rows_first_token_band_is_its_row_band_in_the_prefill_regime() -> None:
    """The time to first token takes the calibrated prefill band, through the row's own
    inputs (its widenings too), not the decode band its throughput carries."""
    from app.domain import bands
    from app.domain.efficiency import EfficiencyTable

    table = EfficiencyTable(
        bands={("decode", "all"): (0.9, 1.1), ("prefill", "all"): (0.6, 1.7)},
        covered={"prefill": (frozenset({"pytorch"}), frozenset({"Ampere"}))},
    )
    c = _cand(H100, llm_inference(efficiency=table))
    got = rank.first_token_uncertainty(c)
    assert got is not None
    want = bands.band(replace(rank.band_inputs(c), regime="prefill"), table)
    assert got == want
    assert bands.UNMEASURED_ARCHITECTURE.reason in got[2]  # Hopper: outside prefill's set
    assert got[:2] != rank.uncertainty(c)[:2]
    assert got[0] < 0.6 and got[1] > 1.7  # widened about the calibrated prefill band
    train = _cand(H100, llm_inference(task="training", efficiency=table))
    assert rank.first_token_uncertainty(train) is None


def test_multi_card_and_headroom_tips_speak_the_rows_runtime() -> None:
    """A llama.cpp row over several cards is told its layer split adds memory, not decode
    speed, and its headroom tip names llama.cpp's own knobs; neither quotes PyTorch's memory
    tools nor a training benchmark's scaling."""
    gguf = llm_inference(runtime="llama.cpp", precision="int4")
    c = _cand(RTX3090, gguf, n=2)
    c.available_gb = c.memory.total * 1.05  # a tight fit
    tips = " ".join(rank.tips(c, gguf))
    assert "--split-mode layer" in tips and "not decode speed" in tips
    assert "-ngl" in tips and "torch.cuda" not in tips and "Lambda" not in tips
    # the same shape under eager PyTorch keeps PyTorch's advice
    eager = llm_inference()
    e = _cand(RTX3090, eager, n=2)
    e.available_gb = e.memory.total * 1.05
    assert "torch.cuda.max_memory_allocated()" in " ".join(rank.tips(e, eager))


def test_checkpointing_is_suggested_only_where_memory_is_short() -> None:
    """Activation checkpointing costs about a third more compute: a ResNet-50 with most of
    its card free is not told to take it; the same job filling the card at 256 images a pass
    is told to halve its micro-batch, which frees as much for less (the one-sample case keeps
    the checkpointing tip: test_r33ex_checkpoint_tip)."""
    job = WorkloadSpec(task="training", model=RESNET50, precision="fp16", batch_size=256)
    c = _cand(RTX4090, job)
    assert c.memory.activations > 0.4 * c.memory.total
    c.available_gb = c.memory.total * 4
    assert not any("checkpointing" in t for t in rank.tips(c, job))
    c.available_gb = c.memory.total * 1.1
    tips = " ".join(rank.tips(c, job))
    assert "per_device_train_batch_size 128 with twice the gradient-accumulation" in tips
    assert "checkpointing" not in tips


def test_a_serving_replica_keys_its_band_as_an_llm_inference_row() -> None:
    """A serving shape's band names a layer split as an LLM inference row's does: one replica
    of two GPUs under llama.cpp (the serving and prefill regimes' multi-GPU rows are tensor
    parallel, data/efficiency.yaml multi_gpu_spans), not vLLM's tensor-parallel replica nor
    replicas of one GPU each (replicas share nothing)."""
    table = load_efficiency()

    def basis(runtime: str, per_replica: int, regime: str) -> str:
        decode = table.profile(H100, "cuda", runtime, "bf16", "decode")
        rt = sv.runtime_profile(table, runtime, decode)
        cfg = sv.ServingConfig(per_replica, 2, "bf16", "bf16", runtime)
        return bands.band(rank.serving_band_inputs(H100, cfg, rt, regime, model=LLAMA3_8B), table)[
            2
        ]

    for regime in ("serving", "prefill"):
        assert bands.MULTI_GPU_SPAN.reason in basis("llama.cpp", 2, regime)
        assert bands.MULTI_GPU_SPAN.reason not in basis("vllm", 2, regime)
        assert bands.MULTI_GPU_SPAN.reason not in basis("llama.cpp", 1, regime)


def _job(gpu: GpuSpec, work: WorkloadSpec, n: int, samples: float, acq: str) -> rank.Candidate:
    est = perf.estimate(gpu, work, num_gpus=n)
    hours = samples / est.throughput / 3600.0
    c = rank.Candidate(
        gpu=gpu,
        work=work,
        memory=memory_breakdown(work, num_gpus=n),
        available_gb=gpu.memory_gb,
        perf=est,
        cost=cost.estimate_cost(gpu, n, est.throughput, hours),
    )
    c.acquisition = acq
    return c


def test_balanced_weighs_a_jobs_time_to_finish_against_its_money_within_a_card() -> None:
    """Issue #23: balanced showed each card with the fewest GPUs that hold the job, so a
    pretraining job was answered with one B200 for 94 days where 8 finish in 11 days for
    less. Between one card's counts it now makes its own trade, time to finish^-w × money to
    finish^-(1−w): rented by the GPU-hour, 8 cards that finish ~8× sooner for about the same
    money win; bought, 8 cards are 8 purchases for a job one card finishes, and one wins."""
    work = WorkloadSpec(task="training", model=RESNET50, batch_size=256)
    samples = 1.28e6 * 90  # ImageNet-1k, 90 epochs
    rent = [_job(H100, work, n, samples, "rent") for n in (1, 2, 4, 8)]
    assert rent[3].perf.throughput > 5 * rent[0].perf.throughput  # 8 cards ~6x one
    ((chosen, others),) = rank.best_per_card(rent, "balanced")
    assert chosen.n == 8 and [c.n for c in others] == [1, 2, 4]
    # the fewest cards still win where the extra ones cost more than they speed up
    bought = [_job(H100, work, n, samples, "buy") for n in (1, 2, 4, 8)]
    ((chosen, _),) = rank.best_per_card(bought, "balanced")
    assert chosen.n == 1
    # a speed weight of 0 is value alone: the cheapest way to finish
    ((chosen, _),) = rank.best_per_card(rent, "balanced", speed_weight=0.0)
    cheapest = min(rent, key=lambda c: (cost.job_cost(c.cost, "rent") or 0.0, c.n))
    assert chosen is cheapest
    # without a length (no time to finish) there is nothing to trade: the fewest cards
    open_ended = [_job(H100, work, n, samples, "rent") for n in (1, 8)]
    for c in open_ended:
        c.cost = replace(c.cost, rent_to_finish_usd=None, buy_to_finish_usd=None)
    ((chosen, _),) = rank.best_per_card(open_ended, "balanced")
    assert chosen.n == 1


def test_rocm_pytorch_on_windows_is_a_last_tip_for_windows_readers_not_a_caveat() -> None:
    """Issue #23: every Radeon answer led its verdict with 'ROCm PyTorch on Windows is a
    preview' though the question named no operating system. The note is the last of the
    row's tips, said to a reader on Windows, and only where the runtime is a PyTorch
    program (not TensorFlow's, nor llama.cpp)."""
    from app.domain.compat import FeatureRule, FrameworkRule, Rules

    note = "ROCm PyTorch on Windows is a preview"
    rules = Rules(
        frameworks=(FrameworkRule("pytorch", "rocm", "amd", gfx_targets=("gfx942",)),),
        features=(
            FeatureRule(
                "rocm_windows", "amd", gfx_targets=("gfx942",), backends=("rocm",),
                status="experimental", notes=note,
            ),
        ),
    )  # fmt: skip
    work = WorkloadSpec(task="training", model=RESNET50, batch_size=256)
    c = _cand(MI300X, work)
    assert c.perf.backend == "rocm" and c.perf.runtime == "pytorch"
    tips = rank.tips(c, work, rules)
    assert tips[-1] == f"If you run Windows: {note}."
    for runtime in ("tensorflow", "llama.cpp"):
        other = _cand(MI300X, replace(work, runtime=runtime))
        assert not any("Windows" in t for t in rank.tips(other, work, rules)), runtime
    assert not any("Windows" in t for t in rank.tips(_cand(H100, work), work, rules))


def test_scaling_tip_speaks_only_where_scaling_is_poor_and_names_the_right_remedy() -> None:
    """Issue #23 walk: '4× RTX A4000 talk over PCIe: 100% scaling (Lambda: 2× RTX 4090 gave
    1.49×); fewer cards ... scale better' contradicted itself, and 64 H100s across InfiniBand
    were told to buy 'an NVLink/NVSwitch part' they already had, beside a PCIe measurement."""
    job = WorkloadSpec(task="training", model=BERT_LARGE, precision="bf16", seq_len=512)
    pcie = _cand(RTX3090, job, n=2)
    pcie.perf = replace(pcie.perf, scaling_efficiency=0.99)
    assert not any("scaling" in t for t in rank.tips(pcie, job))
    pcie.perf = replace(pcie.perf, scaling_efficiency=0.75)
    said = " ".join(rank.tips(pcie, job))
    assert "75% scaling" in said and "Lambda" in said  # the measurement is of this link
    nodes = _cand(H100, job, n=16)
    nodes.perf = replace(nodes.perf, scaling_efficiency=0.7)
    said = " ".join(rank.tips(nodes, job))
    assert "70% scaling" in said and "fewer nodes" in said
    assert "NVLink/NVSwitch part" not in said and "Lambda" not in said


def test_scaling_tip_offers_fewer_cards_only_where_fewer_hold_the_job() -> None:
    """Issue #23 walk: 2× RTX PRO 6000 running Llama 3 70B in bf16 (140 GB on 2 × 96 GB) were
    told 'fewer cards or an NVLink/NVSwitch part scale better', where one card cannot hold it."""
    big = replace(LLAMA3_8B, params=14e9)  # 28 GB of bf16 weights: not on one 3090
    job = WorkloadSpec(task="inference", model=big, precision="bf16", seq_len=512)
    two = _cand(RTX3090, job, n=2)
    assert memory_breakdown(job, num_gpus=1).total > RTX3090.memory_gb
    two.perf = replace(two.perf, scaling_efficiency=0.5)
    said = " ".join(rank.tips(two, job))
    assert "50% scaling" in said and "fewer cards cannot hold the job" in said
    assert "fewer cards or" not in said
    # a job one card holds keeps the remedy
    small = WorkloadSpec(task="inference", model=LLAMA3_8B, precision="bf16", seq_len=512)
    pair = _cand(RTX3090, small, n=2)
    pair.perf = replace(pair.perf, scaling_efficiency=0.5)
    assert "fewer cards or an NVLink/NVSwitch part" in " ".join(rank.tips(pair, small))


def test_scaling_tip_says_pcie_stands_in_for_an_unsourced_fabric() -> None:
    """Issue #23 walk: 2× MI325X were said to talk 'over PCIe beyond its Infinity Fabric, 8
    GPUs', where 2 GPUs sit inside the fabric; the catalog has no sourced bandwidth for it."""
    no_if = replace(MI300X, slug="mi300x-no-if", interconnect_gbs=None)
    job = WorkloadSpec(task="training", model=BERT_LARGE, precision="bf16", seq_len=512)
    two = _cand(no_if, job, n=2)
    two.perf = replace(two.perf, scaling_efficiency=0.6)
    said = " ".join(rank.tips(two, job))
    assert "60% scaling" in said and "beyond its" not in said
    assert "no sourced bandwidth for its Infinity Fabric" in said


def test_balanced_keeps_one_bought_card_when_a_second_only_doubles_speed_and_price() -> None:
    """A bought card's price does not grow with the job: 2 × RTX 4080 bought ($1,460) for a
    QLoRA job that one finishes in 14 minutes tied with one at w = ½ (twice the speed for
    twice the money) and won on a rounding. Buying keeps the fewest cards that hold the job;
    renting, whose money grows with the cards and the hours, still trades."""
    work = WorkloadSpec(task="training", model=RESNET50, batch_size=256)
    samples = 1.28e6
    one = _job(RTX4090, work, 1, samples, "buy")
    two = _job(RTX4090, work, 2, samples, "buy")
    # exactly linear: twice the speed, the job in half the time, twice the purchase
    two.perf = replace(two.perf, throughput=2.0 * one.perf.throughput * (1 + 1e-9))
    two.cost = cost.estimate_cost(
        RTX4090, 2, two.perf.throughput, samples / two.perf.throughput / 3600
    )
    ((chosen, _),) = rank.best_per_card([one, two], "balanced")
    assert chosen.n == 1
    # the same pair rented: equal money to finish, half the time, so two cards win
    for c in (one, two):
        c.acquisition = "rent"
    assert one.cost.rent_to_finish_usd and two.cost.rent_to_finish_usd
    ((chosen, _),) = rank.best_per_card([one, two], "balanced")
    assert chosen.n == 2


def test_a_host_bound_pass_that_is_not_llm_decoding_gets_a_tip_that_fits_it() -> None:
    # An SDXL or CNN forward pass waiting on eager dispatch is not a decode loop, and no LLM
    # serving engine runs it: the tip names torch.compile and, on CUDA, TensorRT (it read
    # "Decoding ... vLLM, SGLang" until 2026-12-04)
    work = WorkloadSpec(task="inference", model=RESNET50, precision="fp16", batch_size=1)
    c = _cand(RTX4090, work)
    c = replace(c, perf=replace(c.perf, bottleneck="host overhead"))
    said = [t for t in rank.tips(c, work) if "dispatch" in t]
    assert len(said) == 1
    assert said[0].startswith("Each pass waits on PyTorch dispatching its ops")
    assert "torch.compile" in said[0] and "TensorRT" in said[0]
    assert not re.search(r"vLLM|SGLang|Decoding", said[0])
    # where the rules rule torch.compile out (Triton needs compute capability 7.0), it is not
    # named; off CUDA, TensorRT is not either
    assert "torch.compile" not in rank._dispatch_tip("cuda", frozenset())
    assert "TensorRT" not in rank._dispatch_tip("rocm", None)
    assert rank._dispatch_tip("mps", frozenset()).endswith("more work.")
    # an LLM decode row keeps the decode tip
    llm = _cand(RTX4090)
    llm = replace(llm, perf=replace(llm.perf, bottleneck="host overhead"))
    assert any(
        t.startswith("Decoding is bound by eager dispatch") for t in rank.tips(llm, llm.work)
    )


def test_fastest_takes_more_cards_only_where_they_are_materially_faster() -> None:
    """Eight host-bound cards ran an eager batch 2.4 % faster than one (each GPU's process
    dispatches every kernel) and were the 'fastest' answer; each card added must now add at
    least FASTEST_TIE - 1 of a card's speed, and a real speed-up still wins."""
    work = WorkloadSpec(task="inference", model=RESNET50, precision="fp16", batch_size=8)
    one, two, four, eight = (_cand(A100, work, n) for n in (1, 2, 4, 8))
    t = one.perf.throughput

    def speeds(*x: float) -> None:
        for c, f in zip((two, four, eight), x, strict=True):
            c.perf = replace(c.perf, throughput=t * f)

    speeds(1.036, 1.048, 1.054)  # the host-bound MI325X's counts: none pays for its cards
    ((chosen, others),) = rank.best_per_card([one, two, four, eight], "fastest")
    assert chosen is one and others == [two, four, eight]
    speeds(1.06, 1.08, 1.09)  # the second card adds 6 % of one: taken; the rest add ~1 %
    ((chosen, _),) = rank.best_per_card([one, two, four, eight], "fastest")
    assert chosen is two
    speeds(1.9, 3.6, 6.5)  # scale-out that pays: every card
    ((chosen, _),) = rank.best_per_card([one, two, four, eight], "fastest")
    assert chosen is eight
    # best value keeps its own metric: no gain rule
    assert rank.card_pick([one], "best_value") is one


def test_headroom_advice_names_the_backends_own_memory_counter() -> None:
    """A Mac's tight fit was told to watch torch.cuda.max_memory_allocated(), which MPS has
    not got; CUDA and ROCm builds share torch.cuda."""
    mac = rank._headroom_advice("pytorch", "mps")
    assert "torch.mps." in mac and "torch.cuda" not in mac
    assert "torch.cuda.max_memory_allocated()" in rank._headroom_advice("pytorch", "rocm")
    assert "torch.xpu.max_memory_allocated()" in rank._headroom_advice("transformers", "xpu")


def test_a_training_row_that_barely_fits_is_told_to_halve_its_per_gpu_micro_batch() -> None:
    """'lower the batch size' changed nothing: the engine chose the micro-batch itself. The
    tip names the per-device setting to halve (the same update), else the savers left."""
    c = _cand(H100, n=4)
    c.work = replace(c.work, task="training", batch_size=32, gradient_checkpointing=False)
    # the tip names only what is large (rank._what_frees): a training row's own memory
    c.memory = memory_breakdown(c.work, num_gpus=4)
    c.micro_batch = 16
    said = rank._training_headroom(c, "cuda")
    assert "per_device_train_batch_size 2" in said and "torch.cuda.max_memory_allocated()" in said
    c.micro_batch = 4
    one = rank._training_headroom(c, "mps")
    assert "one sample a GPU" in one and "activation checkpointing" in one
    assert "torch.mps." in one

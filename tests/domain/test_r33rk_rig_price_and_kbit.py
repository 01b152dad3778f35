"""A new-user walk (session 33): QLoRA of Llama 3 8B bought for $1,500 picked 4 × RTX 3080
under balanced, its fit said to hold "only if" PEFT's fp32 cast were skipped, over one RTX 4080.
Two rules: FSDP-QLoRA (the model states sharded over the GPUs) runs no
prepare_model_for_kbit_training, so its cast is neither counted nor said there; and a bought rig
of four or more cards (or a module) priced without the host it needs is listed after the rows
priced whole under an objective that weighs money."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from app.domain import compat, cost, perf, rank, ranking
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec, memory_breakdown
from tests.domain.fixtures import A100, H100, LLAMA3_8B, RTX4090

# ---------------------------------------------------------------- QLoRA's fp32 cast, sharded


def test_kbit_upcast_is_none_where_the_model_is_sharded() -> None:
    one = rank.kbit_upcast_gb("qlora", 128_256, 4_096, False)
    assert one == pytest.approx(2.10, abs=0.01)
    assert rank.kbit_upcast_gb("qlora", 128_256, 4_096, False, sharded=True) is None


def _qlora() -> WorkloadSpec:
    return WorkloadSpec(
        task="fine-tuning",
        model=LLAMA3_8B,
        precision="bf16",
        batch_size=128,
        seq_len=2048,
        peft="qlora",
        gradient_checkpointing=True,
    )


def _cand(gpu: GpuSpec, work: WorkloadSpec, n: int) -> rank.Candidate:
    mem = memory_breakdown(work, num_gpus=n)
    est = perf.estimate(gpu, work, num_gpus=n)
    return rank.Candidate(
        gpu=gpu,
        work=work,
        memory=mem,
        available_gb=mem.total + 0.5,  # under the ~2.1 GB cast
        perf=est,
        cost=cost.estimate_cost(gpu, n, est.throughput, 10.0),
        micro_batch=n,
        accumulation_steps=128 // n,
    )


def _cast_tips(c: rank.Candidate) -> list[str]:
    return [t for t in rank.tips(c, c.work) if "prepare_model_for_kbit_training" in t]


def test_sharded_qlora_row_has_no_cast_tip_where_one_card_has() -> None:
    work = _qlora()
    assert _cast_tips(_cand(RTX4090, work, 1))  # one card: the tip stands
    four = _cand(RTX4090, work, 4)
    assert four.memory.num_gpus == 4  # the states sharded: FSDP-QLoRA
    assert _cast_tips(four) == []


# ---------------------------------------------------------------- a rig priced without its host


def _offer(note: str | None = None) -> cost.PurchaseOffer:
    return cost.PurchaseOffer(
        usd=25_000.0, condition="new", as_of="2026-07", source="test", note=note
    )


def test_host_unpriced_is_four_pcie_cards_or_a_module_priced_alone() -> None:
    assert compat.host_unpriced(RTX4090, 4, buys=True)
    assert compat.host_unpriced(RTX4090, 16, buys=True)  # past one server: servers too
    assert not compat.host_unpriced(RTX4090, 3, buys=True)  # a desktop holds them
    assert not compat.host_unpriced(RTX4090, 4, buys=False)  # a rented instance has one
    pcie = replace(A100, form_factor="PCIe dual-slot")
    assert compat.host_unpriced(pcie, 4, buys=True)  # a server, as host_caveat says
    assert not compat.host_unpriced(pcie, 1, buys=True)  # one card: a desktop, shrouded
    sxm = H100  # SXM5
    assert compat.host_unpriced(sxm, 1, buys=True, buy=_offer())  # the module alone
    shared = _offer(note=f"priced as a server ÷ 8: {cost.SERVER_SHARE_WORDS}")
    assert not compat.host_unpriced(sxm, 8, buys=True, buy=shared)  # its host in the price


def _walk_columns(rig_host: bool) -> ranking.Columns:
    """The walk's three rows as the ranking sees them: 4 × RTX 3080 (2,725 tokens/s, $1,220 for
    the cards), one RTX 4080 (1,181, $730) and a card with no price (1,000)."""
    return ranking.columns(
        throughput=[2725.0, 1181.0, 1000.0],
        value=[2725.0 / 1220, 1181.0 / 730, None],
        price=[1220.0, 730.0, None],
        num_gpus=[4, 1, 1],
        slugs=["rtx-3080-10gb", "rtx-4080", "unpriced"],
        host_unpriced=[rig_host, False, False],
    )


@pytest.mark.parametrize("objective", ["balanced", "best_value", "cheapest"])
def test_rig_without_its_host_comes_after_rows_priced_whole(objective: str) -> None:
    before = ranking.rank_columns(_walk_columns(False), objective, keep_unpriced=True)
    got = ranking.rank_columns(_walk_columns(True), objective, keep_unpriced=True)
    if objective != "cheapest":
        assert before.order.tolist()[0] == 0  # on the cards' price alone the rig won
    # the one card first, the rig next, the unpriced card last (it has no price of any kind)
    assert got.order.tolist() == [1, 0, 2]
    # the scores are unchanged: the order moves, not what each row is worth on its price
    assert np.array_equal(got.score, before.score)


def test_fastest_keeps_the_rig_first() -> None:
    got = ranking.rank_columns(_walk_columns(True), "fastest")
    assert got.order.tolist()[0] == 0


def test_rig_row_says_why_it_is_listed_after() -> None:
    work = _qlora()
    rig = replace(_cand(RTX4090, work, 4), acquisition="buy")
    one = replace(_cand(RTX4090, work, 1), acquisition="buy")
    assert rank.host_unpriced(rig) and not rank.host_unpriced(one)
    said = rank.explain(rig, 2, one, "balanced")
    assert (
        "Its price leaves out the host its 4 GPUs need (see the warnings), so it is listed "
        "after every option priced whole." in said
    )
    assert not any("priced whole" in x for x in rank.explain(rig, 2, one, "fastest"))
    # rented, the instance's price has its host in it
    rented = replace(rig, acquisition="rent")
    assert not rank.host_unpriced(rented)

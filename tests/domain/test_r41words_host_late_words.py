"""Session 41 (words): 8 × RTX 5000 Ada, faster than the pick and scored 1.00 on both speed and
value, read "Ranked #2 by balanced: speed 1.00 and value 1.00 of the best, against 2 × ...":
no word of why it was below a slower row (its bought price leaves out the host its cards need,
so it is listed after every option priced whole), and the lead's own figures unsaid, so 1.00
read as a tie. The Ranked line now says the reason where it is all that puts the row below
#1, and gives the lead's figures, each to as many places as tell differing scores apart."""

from __future__ import annotations

from dataclasses import replace

from app.domain import cost, perf, rank
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec, memory_breakdown
from tests.domain.fixtures import LLAMA3_8B, RTX4090

_WORK = WorkloadSpec(
    task="fine-tuning",
    model=LLAMA3_8B,
    precision="bf16",
    batch_size=128,
    seq_len=2048,
    peft="qlora",
    gradient_checkpointing=True,
)


def _bought(gpu: GpuSpec, n: int, speed: float, value: float, score: float) -> rank.Candidate:
    mem = memory_breakdown(_WORK, num_gpus=n)
    est = perf.estimate(gpu, _WORK, num_gpus=n)
    return rank.Candidate(
        gpu=gpu,
        work=_WORK,
        memory=mem,
        available_gb=mem.total + 4.0,
        perf=est,
        cost=cost.estimate_cost(gpu, n, est.throughput, 10.0),
        acquisition="buy",
        score=score,
        speed_score=speed,
        value_score=value,
    )


def _ranked_line(said: list[str]) -> str:
    return next(x for x in said if x.startswith("Ranked #"))


def test_a_rig_that_outscores_the_pick_says_the_host_is_why_it_is_below() -> None:
    pick = _bought(RTX4090, 1, 0.71, 0.80, 0.755)
    rig = _bought(RTX4090, 8, 1.0, 1.0, 1.0)
    assert rank.host_unpriced(rig) and not rank.host_unpriced(pick)
    said = rank.explain(rig, 2, pick, "balanced")
    assert _ranked_line(said) == (
        "Ranked #2 by balanced, below #1 because its price leaves out the host its 8 GPUs "
        "need (see the warnings), so it is listed after every option priced whole: speed 1.00 "
        "and value 1.00 of the best, against RTX 4090 (0.71 and 0.80)."
    )
    # said once: not again as a line of its own
    assert sum("leaves out the host" in x for x in said) == 1


def test_a_rig_scored_below_the_pick_keeps_its_own_line() -> None:
    pick = _bought(RTX4090, 1, 0.9, 0.9, 0.9)
    rig = _bought(RTX4090, 8, 0.6, 0.7, 0.65)
    said = rank.explain(rig, 2, pick, "balanced")
    assert _ranked_line(said).startswith("Ranked #2 by balanced: speed 0.60 and value 0.70")
    assert (
        "Its price leaves out the host its 8 GPUs need (see the warnings), so it is listed "
        "after every option priced whole." in said
    )


def test_fastest_has_no_host_words() -> None:
    pick = _bought(RTX4090, 1, 0.71, 0.80, 0.71)
    rig = _bought(RTX4090, 8, 1.0, 1.0, 1.0)
    said = rank.explain(rig, 2, pick, "fastest")
    assert not any("host its 8" in x for x in said)


def test_scores_that_differ_never_read_as_a_tie() -> None:
    pick = _bought(RTX4090, 1, 1.0, 0.7123, 0.85)
    row = replace(pick, perf=pick.perf, speed_score=0.996, value_score=0.7141, score=0.84)
    line = _ranked_line(rank.explain(row, 2, pick, "balanced"))
    # 0.996 is not the best's 1.00, nor is 0.714 the lead's 0.712
    assert "speed 0.996 and value 0.714 of the best, against RTX 4090 (1.000 and 0.712)" in line
    same = replace(row, speed_score=0.5, value_score=0.5)
    lead = replace(pick, speed_score=0.5, value_score=0.25)
    line = _ranked_line(rank.explain(same, 2, lead, "balanced"))
    assert "speed 0.50 and value 0.50 of the best, against RTX 4090 (0.50 and 0.25)" in line

"""The slot line of a multi-card desktop build counts a tower's 8 slot openings (an ATX
board's 7 slots, a dual-width card in the 7th over the 8th): 4 dual-width workstation cards
fit, as 4-GPU RTX 6000 Ada towers are sold (they had read "do not fit"); and blower versions
are suggested only for a card wider than one (a dual-width blower card had been told to use
blower cards)."""

from __future__ import annotations

from dataclasses import replace

from app.domain import cost, perf, rank
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec, memory_breakdown
from tests.domain.fixtures import RESNET50, RTX4090

WORK = WorkloadSpec(task="training", model=RESNET50, precision="bf16", batch_size=256)
DUAL = replace(
    RTX4090, slug="dual-ws", name="Dual WS", segment="workstation", slot_width=2.0, tdp_w=300.0
)
TRIPLE = replace(RTX4090, slug="triple", name="Triple", slot_width=3.0)


def _slots(gpu: GpuSpec, n: int) -> list[str]:
    est = perf.estimate(gpu, WORK, num_gpus=n)
    c = rank.Candidate(
        gpu=gpu,
        work=WORK,
        memory=memory_breakdown(WORK, num_gpus=n),
        available_gb=gpu.memory_gb,
        perf=est,
        cost=cost.estimate_cost(gpu, n, est.throughput, 10.0),
    )
    return [t for t in rank.tips(c, c.work) if " slots" in t]


def test_four_dual_width_cards_fit_a_towers_eight_slots() -> None:
    (line,) = _slots(DUAL, 4)
    assert "do not fit" not in line and "blower" not in line, line
    assert "4 cards × 2 slots need a case with 8 slot openings" in line, line
    assert _slots(DUAL, 3) == []


def test_blower_versions_only_for_cards_wider_than_one() -> None:
    (dual,) = _slots(DUAL, 5)
    assert "do not fit" in dual and "blower" not in dual, dual
    assert dual.endswith("use risers or a server chassis."), dual
    (triple,) = _slots(TRIPLE, 3)  # 9 slots; three dual-width blower boards take 6
    assert "do not fit" in triple and "dual-slot blower versions" in triple, triple
    (five,) = _slots(TRIPLE, 5)  # five blower boards take 10: no room gained
    assert "blower" not in five, five


def test_eight_single_slot_cards_need_eight_board_slots() -> None:
    """Each card needs a board slot of its own: 8 single-slot cards do not fit a desktop
    board's 7 slots whatever the case (the regression hunt: they had read 'need a case with 8
    slot openings')."""
    single = replace(DUAL, slug="single-ws", name="Single WS", slot_width=1.0)
    (line,) = _slots(single, 8)
    assert "do not fit a desktop board's 7 slots" in line and "case with 8" not in line, line
    assert _slots(single, 7) == []

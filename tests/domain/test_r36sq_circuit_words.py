"""circuit_said's sentences that name only the circuits are put together once, not per row
(issue 21, thirty-sixth session "sq"): the words for every load stay what formatting them per
call gave."""

from __future__ import annotations

import math

import pytest

from app.domain import rank


def _per_call(wall: float) -> str:
    """circuit_said as it read before (every figure formatted on each call)."""
    if wall <= rank.CIRCUIT_NEAR * rank.CIRCUIT_120V_W:
        return f"within a 15 A/120 V circuit's {rank.CIRCUIT_120V_W:,.0f} W continuous"
    if wall > rank.CIRCUIT_230V_W:
        k = max(1, math.ceil(wall / rank.CIRCUIT_230V_W))
        if k > rank.WALL_CIRCUITS_MAX:
            return (
                f"about {k} times a 16 A/230 V circuit's {rank.CIRCUIT_230V_W:,.0f} W: rack power "
                "(three-phase PDUs), not wall circuits"
            )
        words = {2: "two", 3: "three"}
        return (
            f"over even a 16 A/230 V circuit's {rank.CIRCUIT_230V_W:,.0f} W: it needs "
            f"{words[k]} such circuits"
        )
    small = f"15 A/120 V circuit's {rank.CIRCUIT_120V_W:,.0f} W continuous"
    twenty = f"20 A/120 V circuit ({rank.CIRCUIT_20A_120V_W:,.0f} W continuous)"
    big = (
        f"20 A/240 V circuit ({rank.CIRCUIT_240V_W:,.0f} W continuous) or a 16 A/230 V one "
        f"({rank.CIRCUIT_230V_W:,.0f} W)"
    )
    if wall <= rank.CIRCUIT_120V_W:
        return f"near a {small}: a {twenty} gives room"
    if wall <= rank.CIRCUIT_NEAR * rank.CIRCUIT_20A_120V_W:
        return f"over a {small}: a {twenty} carries it"
    if wall <= rank.CIRCUIT_20A_120V_W:
        return (
            f"over a {small}, near a 20 A/120 V one's {rank.CIRCUIT_20A_120V_W:,.0f} W: a {big} "
            "gives room"
        )
    return (
        f"over a 20 A/120 V circuit's {rank.CIRCUIT_20A_120V_W:,.0f} W continuous: it needs a "
        f"{big}, or two 20 A/120 V circuits"
    )


EDGES = [
    rank.CIRCUIT_NEAR * rank.CIRCUIT_120V_W,
    rank.CIRCUIT_120V_W,
    rank.CIRCUIT_NEAR * rank.CIRCUIT_20A_120V_W,
    rank.CIRCUIT_20A_120V_W,
    rank.CIRCUIT_230V_W,
    2 * rank.CIRCUIT_230V_W,
    3 * rank.CIRCUIT_230V_W,
]


@pytest.mark.parametrize("wall", [0.0, 250.0, 42_000.0, *EDGES, *(e + 1e-9 for e in EDGES)])
def test_circuit_words_at_each_limit(wall: float) -> None:
    assert rank.circuit_said(wall) == _per_call(wall)


def test_circuit_words_over_a_sweep() -> None:
    walls = [w * 7.5 for w in range(0, 2_000)]  # 0 to ~15 kW: every branch
    said = {rank.circuit_said(w) for w in walls}
    assert all(rank.circuit_said(w) == _per_call(w) for w in walls)
    assert len(said) >= 8  # the six fixed sentences and several rack counts


def test_the_supply_rule_is_said_with_its_factor() -> None:
    assert f"({rank.PSU_HEADROOM:g}× board power, a rule)" == rank._PSU_RULE
    assert rank._PSU_RULE == "(1.5× board power, a rule)"

"""An empty answer's nearest changes: those that keep the asker's way of acquiring and budget
come before renting as well as buying, which comes before lifting a budget or deadline."""

from __future__ import annotations

from typing import Any

from app.recommend import schemas as s
from app.recommend import whatif


def _v(change: str, can_run: int, top: str, usd: float | None, hourly: float | None) -> s.WhatIfOut:
    return s.WhatIfOut(
        change=change, top_slug=top, top_name=top, num_gpus=1, throughput=1.0, unit="tokens/s",
        required_gb=40.0, can_run=can_run, same_top=False, purchase_usd=usd, hourly_usd=hourly,
    )  # fmt: skip


def _empty(*variations: s.WhatIfOut) -> s.EmptyAnswerOut:
    # only what empty_answer reads: the rest of an answer plays no part in the order
    fields: dict[str, Any] = {"excluded": [], "what_if": list(variations), "acquisition": "buy"}
    answer = s.RecommendationResponse.model_construct(**fields)
    return whatif.empty_answer(answer)


# the review's question: Llama 3 70B at Q4_K_M, buy within $1,500 on one GPU
RENT_TOO = _v(f"renting {whatif.ACQUISITION_LIFTED}buying", 14, "RTX A6000", 5172.96, 0.35)
MORE_GPUS = _v("up to 8 GPUs instead of 1", 5, "Tesla P40", 340.0, None)
NO_BUDGET = _v(whatif.BUDGET_LIFTED, 17, "M4 Pro", 1869.0, None)


def test_a_change_that_keeps_buying_within_budget_comes_before_renting_as_well() -> None:
    empty = _empty(RENT_TOO, MORE_GPUS, NO_BUDGET)
    assert [n.change for n in empty.nearest] == [
        MORE_GPUS.change, RENT_TOO.change, NO_BUDGET.change,
    ]  # fmt: skip
    assert "Nearest: up to 8 GPUs instead of 1 lets 5 kinds of GPU run it" in empty.message
    assert "$340 to buy" in empty.message


def test_renting_as_well_still_comes_before_lifting_the_budget_or_deadline() -> None:
    late = _v(whatif.DEADLINE_LIFTED, 30, "B200", 40000.0, None)
    empty = _empty(late, NO_BUDGET, RENT_TOO)
    assert empty.nearest[0].change == RENT_TOO.change
    assert {n.change for n in empty.nearest[1:]} == {late.change, NO_BUDGET.change}


def test_among_changes_alike_the_one_opening_most_cards_comes_first() -> None:
    # (r31: "any vendor" now strays as far as renting does, so the alike change is a kind of
    # card: tests/recommend/test_r31vf_mac_4bit.py)
    kind = _v("any kind of card", 9, "RTX A6000", 750.0, None)
    empty = _empty(MORE_GPUS, kind)
    assert [n.change for n in empty.nearest] == [kind.change, MORE_GPUS.change]

"""A row's words (review 25): one named configuration says no rank, a layer split says which
phase runs at one card's speed, a bought single desktop card gets its supply line, and the
wall circuits carry their own figures."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import perf, rank
from app.domain.gpu import GpuSpec
from app.domain.workload import WorkloadSpec
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import RTX3090, RTX4090, candidate
from tests.domain.fixtures import llm_inference as _plain

TABLE = load_efficiency()


def _cand(gpu: GpuSpec, work: WorkloadSpec | None = None, n: int = 1) -> rank.Candidate:
    return candidate(gpu, work or _plain(efficiency=TABLE), n)


def _power(c: rank.Candidate) -> str | None:
    return next((t for t in rank.tips(c, c.work) if "GPU power" in t), None)


# ---------------------------------------------------------------- one named configuration


def test_one_named_configuration_says_no_rank() -> None:
    """POST /api/v1/estimate ranks nothing: "Ranked first by fastest." had said it did."""
    c = _cand(RTX4090)
    rank.rank([c], "fastest")
    c.meets_latency = False
    c.framework_status = "experimental"
    text = " ".join(rank.explain(c, 1, c, rank.UNRANKED))
    assert "Ranked" not in text and "listed after" not in text
    assert "Misses the latency target." in text
    assert "experimental (see the warnings)." in text
    # a ranked answer keeps its rank and its order's reasons
    ranked = " ".join(rank.explain(c, 1, c, "fastest"))
    assert "Ranked first by fastest." in ranked
    assert "listed after every GPU that meets it" in ranked


# ---------------------------------------------------------------- a layer split's phases


def test_a_layer_split_says_decoding_is_one_cards_and_the_factor_end_to_end() -> None:
    """The 1.15× of a llama.cpp split is the whole request's: the decode step is no faster
    than one card's (the cards take turns), the prompt's chunks pipeline through the cards."""
    work = _plain(efficiency=TABLE, runtime="llama.cpp")
    two, one = perf.estimate(RTX4090, work, num_gpus=2), perf.estimate(RTX4090, work, num_gpus=1)
    assert two.ms_per_token is not None and one.ms_per_token is not None
    assert two.ms_per_token >= one.ms_per_token  # decoding: one card's speed, plus hand-offs
    c = _cand(RTX4090, work, n=2)
    line = next(x for x in rank.explain(c, 1, c, "fastest") if x.startswith("Split by layers"))
    factor = f"{c.perf.scaling_efficiency * 2:.2f}× one {RTX4090.name}"
    assert c.perf.scaling_efficiency * 2 > 1.005  # the prompt's chunks pipeline
    assert "decoding runs at about one card's speed" in line
    # the factor is said as the end-to-end figure, from the prompt, not as decoding's
    assert f"end to end {factor}, were one to hold the model, as the prompt's chunks" in line
    assert "so it runs at about one card's speed (" not in line
    # Transformers' device_map pipelines nothing: one card's speed, end to end too
    hf = _cand(RTX4090, _plain(efficiency=TABLE, runtime="transformers"), n=2)
    assert rank.replica_span(hf.gpu, hf.work, hf.perf) == "layers"
    # the split's own line (the row's first-token line names the prompt: session 32)
    said = next(x for x in rank.explain(hf, 1, hf, "fastest") if x.startswith("Split by layers"))
    assert "prompt" not in said and "so it runs at about one card's speed (1.00× one" in said


# ---------------------------------------------------------------- power


def test_a_bought_single_desktop_card_gets_its_supply_line_by_the_stated_rule() -> None:
    """A single 575 W card had had no power line. The catalog holds no vendor's recommended
    supply, so the line gives the rule's figure for the card alone and says it is a rule."""
    card = replace(RTX4090, tdp_w=575.0)
    c = _cand(card)
    c.acquisition = "buy"
    tip = _power(c)
    assert tip is not None
    psu = 575 * rank.PSU_HEADROOM
    assert tip.startswith(f"575 W of GPU power: plan ≥ {psu:,.0f} W of supply for the card alone")
    assert f"({rank.PSU_HEADROOM:g}× board power, a rule)" in tip
    wall = (575 + rank.HOST_W_TWO_CARDS) / rank.PSU_EFFICIENCY
    assert f"about {rank.significant(wall)} W at the wall" in tip
    assert "within a 15 A/120 V circuit's 1,440 W continuous" in tip
    # a rented card is the provider's machine; a card without a price is not bought
    c.acquisition = "rent"
    assert _power(c) is None
    unpriced = _cand(replace(RTX3090, street_price=None, launch_price_usd=None))
    unpriced.acquisition = "buy"
    assert unpriced.cost.purchase_usd is None and _power(unpriced) is None


def test_several_cards_say_the_supply_is_the_cards_alone() -> None:
    tip = _power(_cand(replace(RTX4090, tdp_w=450.0), n=2))
    assert tip is not None and "plan ≥ 1,350 W of supply for the cards alone" in tip


def test_the_circuits_carry_their_own_figures() -> None:
    """A 20 A/240 V circuit is 4,800 W, 3,840 W continuous at NEC's 80 %; a 16 A/230 V one
    3,680 W; a US 20 A/120 V one 1,920 W continuous, the step after 15 A/120 V's 1,440 W."""
    assert pytest.approx(1_920.0) == rank.CIRCUIT_20A_120V_W
    assert pytest.approx(3_840.0) == rank.CIRCUIT_240V_W
    assert pytest.approx(3_680.0) == rank.CIRCUIT_230V_W
    near = rank.circuit_said(1_400)
    assert "near a 15 A/120 V circuit's 1,440 W continuous" in near
    assert "a 20 A/120 V circuit (1,920 W continuous) gives room" in near
    assert "a 20 A/120 V circuit (1,920 W continuous) carries it" in rank.circuit_said(1_600)
    close = rank.circuit_said(1_900)
    assert "near a 20 A/120 V one's 1,920 W" in close and "3,840 W continuous" in close
    over = rank.circuit_said(2_500)
    assert "over a 20 A/120 V circuit's 1,920 W continuous" in over
    assert "20 A/240 V circuit (3,840 W continuous) or a 16 A/230 V one (3,680 W)" in over
    for wall in (1_400, 1_600, 1_900, 2_500):
        assert "20 A/240 V or 16 A/230 V (3,680 W)" not in rank.circuit_said(wall)

"""Session 32 (fz): the serving relax's "more GPUs" lever stops at the widest replica the
planner builds (serving_step.NODE_SPANS: 4 nodes of 8), not at the what-if's 64-GPU step, which
whatif.py had named MOST_GPUS and called "the most GPUs a question may ask for" (vocab.MOST_GPUS
is 512); and rank._rate writes a rate below 1 by the summary's rule (0.029, not "0.0290")."""

from __future__ import annotations

import pytest

from app.domain import rank, serving_step
from app.domain.figures import sig_figs
from app.domain.workload import ServingSpec
from app.recommend import schemas as s
from app.recommend import serving, whatif
from app.recommend.presets import load_presets
from app.vocab import MOST_GPUS

MODEL = load_presets()["llama-3.1-405b"].model
SPEC = ServingSpec(prompt_tokens=1024, output_tokens=256, concurrent_requests=4)


def _tips(max_gpus: int, exact: int | None = None, left_out: int = 0) -> list[str]:
    return serving._relax([], MODEL, SPEC, max_gpus, left_out, {}, exact)


@pytest.mark.parametrize(("cap", "lever"), [(8, True), (16, True), (32, False), (48, False)])
def test_more_gpus_is_offered_only_below_the_widest_replica(cap: int, lever: bool) -> None:
    assert serving.WIDEST_REPLICA == max(serving_step.NODE_SPANS) == 32
    said = [t for t in _tips(cap) if t.startswith(f"allow more than {cap} GPUs")]
    assert bool(said) is lever, _tips(cap)


def test_the_what_if_step_is_named_for_what_it_is() -> None:
    assert not hasattr(whatif, "MOST_GPUS")
    assert whatif.ACROSS_SERVERS_GPUS < MOST_GPUS
    asked = s.ConstraintsIn(max_gpus=8)
    steps = dict(whatif._relaxed(asked, True))
    lifted = {"constraints": {"max_gpus": whatif.ACROSS_SERVERS_GPUS}}
    assert steps[f"up to {whatif.ACROSS_SERVERS_GPUS} GPUs instead of 8"] == lifted


def test_an_exact_count_with_cards_left_out_keeps_its_lever() -> None:
    tips = _tips(8, exact=1, left_out=5)
    assert tips[0].startswith("5 cards are left out")
    assert any(t.startswith("any GPU count instead of exactly 1") for t in tips), tips
    # a cap's lever comes from _wider (the cards max_gpus alone left out), not from here
    assert not any("constraints.max_gpus" in t for t in _tips(1, left_out=5))


@pytest.mark.parametrize("rate", [0.029, 0.0293, 0.0057, 0.5, 0.1, 0.123])
def test_a_rate_below_one_is_written_as_the_summary_writes_it(rate: float) -> None:
    assert rank._rate(rate) == sig_figs(rate) == rank.significant(rate)
    assert not rank._rate(rate).endswith("0")


def test_rates_from_one_keep_their_row_format() -> None:
    assert (rank._rate(1.5), rank._rate(12.34), rank._rate(1639.4)) == ("1.50", "12.3", "1,639")

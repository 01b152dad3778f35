"""A row's prices, verdict, unit and deadline said as they are: stale flags and a purchase
note on the costs, a verdict that says when its rent side is a whole node the job barely uses,
Whisper's samples named as 30-second windows, a deadline met only on the point estimate, and a
custom model's missing figure not blamed on a preset."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from app.config import Settings
from app.domain import cost as costs
from app.domain import rank
from app.domain.workload import ModelSpec, WorkloadSpec
from app.errors import InvalidInput
from app.offers.service import stale_cutoff as offers_cutoff
from app.recommend import deadline, rows, service, workloads
from app.recommend import schemas as s
from tests.domain.fixtures import A100, H100, MI300X, RTX4090, RULES, T4

GPUS = [A100, H100, RTX4090, T4, MI300X]

ND40 = costs.CloudOffer(
    "azure", "Standard_ND40rs_v2", 8, 22.032, None, "on-demand", "2026-11-30", "skypilot"
)


def _cost() -> costs.CostEstimate:
    return costs.CostEstimate(
        purchase_usd=2592.0,
        hourly_usd=22.032,
        energy_usd_per_hour=0.045,
        power_w=300.0,
        time_to_finish_h=None,
        rent_to_finish_usd=None,
        energy_to_finish_usd=None,
        buy_to_finish_usd=None,
        break_even_hours=None,
        samples_per_usd_rent=None,
        samples_per_usd_buy=None,
        horizon_hours=6240.0,
    )


def _pricing(offer: costs.CloudOffer, used: int, buy: costs.PurchaseOffer) -> costs.Pricing:
    rent = costs.OfferChoice(offer, 1, used, offer.usd_per_hour, False)
    return costs.Pricing(rent=rent, buy=buy, num_gpus=used, usage=costs.Usage())


# ---------------------------------------------------------------- 1. stale flags, buy note


def test_rent_and_buy_costs_carry_stale_and_the_prices_note() -> None:
    """GET /api/v1/offers flags an old price stale; a row's cost.rent and cost.buy did not,
    and cost.buy dropped the price's caveat."""
    buy = costs.PurchaseOffer(2592.0, "new", "2025-07-20", "tracker", note="one listing")
    _, rent, bought = rows.priced_parts(_pricing(ND40, 1, buy), _cost(), stale_before="2026-09-06")
    assert rent is not None and bought is not None
    assert rent["stale"] is False  # 2026-11-30
    assert bought["stale"] is True and bought["note"] == "one listing"
    out = s.BuyCostOut.model_validate(bought)
    assert out.stale and out.note == "one listing"
    assert s.RentCostOut.model_validate(rent).stale is False
    # a later cutoff makes the rental stale too; a price without a note says none
    plain = costs.PurchaseOffer(2592.0, "new", "2026-11-01", "tracker")
    _, rent, bought = rows.priced_parts(
        _pricing(ND40, 1, plain), _cost(), stale_before="2026-12-01"
    )
    assert rent is not None and rent["stale"] is True
    assert bought is not None and bought["stale"] is True and bought["note"] is None


def test_the_default_cutoff_is_the_offers_apis_at_the_servers_default_age() -> None:
    today = date(2026, 12, 5)
    assert rows.stale_cutoff(today) == offers_cutoff(Settings.model_construct(), today)
    assert rows.stale_cutoff(today) == "2026-09-06"  # offer_stale_days 90


# ---------------------------------------------------------------- 2. the verdict's rent side


def test_a_verdict_against_a_whole_node_says_how_many_of_its_gpus_the_job_uses() -> None:
    """A 1-GPU job whose only offer is an 8-GPU instance: one bought V100 against the whole
    rented node ("buy $2,873 against rent $137,480") read as like for like."""
    buy = costs.PurchaseOffer(2592.0, "new", "2025-07-20", "tracker")
    parts, _, _ = rows.priced_parts(_pricing(ND40, 1, buy), _cost())
    v = s.VerdictOut.model_validate(parts["verdict"])
    assert v.cheaper == "buy" and v.rent_total_usd == pytest.approx(22.032 * 6240)
    assert (v.rent_gpus_paid, v.gpus_used) == (8, 1)
    assert v.note == "renting a whole 8-GPU Standard_ND40rs_v2, 1 of 8 GPUs used"
    # every GPU paid for is used: nothing to say
    parts, _, _ = rows.priced_parts(_pricing(ND40, 8, buy), _cost())
    whole = s.VerdictOut.model_validate(parts["verdict"])
    assert whole.note is None and whole.rent_gpus_paid is None and whole.gpus_used is None


def test_several_instances_are_said_as_such() -> None:
    two = costs.OfferChoice(ND40, 2, 9, 2 * ND40.usd_per_hour, False)
    assert rows.verdict_note(two) == "renting 2× 8-GPU Standard_ND40rs_v2, 9 of 16 GPUs used"


# ---------------------------------------------------------------- 3. Whisper's unit


def _speech(task: str = "inference", input_size: float | None = 30) -> WorkloadSpec:
    m = ModelSpec(
        family="encoder-decoder",
        params=1.55e9,
        layers=32,
        hidden_size=1280,
        num_heads=20,
        input_size=input_size,
    )
    return WorkloadSpec(model=m, task=task)


def test_a_whisper_sample_is_said_as_a_30_second_window() -> None:
    assert rows.row_rate(_speech(), "samples/s") == (1.0, "30-s windows/s")
    # an encoder-decoder over text (T5, BART: no audio seconds) keeps samples/s
    assert rows.row_rate(_speech(input_size=None), "samples/s") == (1.0, "samples/s")
    # training too (session 42): its tokens/s had counted padded transcript tokens
    assert rows.row_rate(_speech("fine-tuning"), "samples/s") == (1.0, "30-s windows/s")


def test_a_whisper_row_gives_seconds_of_audio_a_second() -> None:
    r = service.recommend(
        s.RecommendationRequest.model_validate(
            {"workload": {"preset": "whisper-large-v3", "dataset_samples": 1000}, "limit": 3}
        ),
        GPUS,
        RULES,
    )
    assert r.recommendations
    for row in r.recommendations:
        t = row.throughput
        assert t.unit == "30-s windows/s"
        assert t.audio_seconds_per_s == pytest.approx(30 * t.value)
        said = [x for x in row.explanation if x.startswith("One sample is a 30-second")]
        assert len(said) == 1, row.explanation
        fast = rank.significant(t.audio_seconds_per_s or 0.0)
        assert f"{fast} seconds of audio a second ({fast}× real time)" in said[0]
        # said right after the line with the rate
        at = row.explanation.index(said[0])
        assert row.explanation[at - 1].startswith("Expected ")
        assert all(a.unit == "30-s windows/s" for a in row.alternatives)


def test_other_rows_give_no_audio_rate() -> None:
    r = service.recommend(
        s.RecommendationRequest.model_validate({"workload": {"preset": "resnet-50"}, "limit": 2}),
        GPUS,
        RULES,
    )
    assert r.recommendations
    assert all(x.throughput.audio_seconds_per_s is None for x in r.recommendations)


# ---------------------------------------------------------------- 4. the deadline's slow end


def _run(**kw: Any) -> s.RecommendationResponse:
    return service.recommend(s.RecommendationRequest.model_validate(kw), GPUS, RULES)


def test_a_deadline_met_only_on_the_estimate_warns_of_the_slow_end() -> None:
    """8× B200 at 46 min under an hour's deadline read "met", though its band's slow end is
    1.3 h: the row and the deadline say it may miss."""
    job = {"preset": "resnet-50"}
    free = _run(workload=job, objective="fastest", constraints={"max_gpus": 1}, limit=50)
    top = next(r for r in free.recommendations if r.price_known)
    took, low = top.time_to_finish_h, top.uncertainty.factor_low
    assert took is not None and low < 0.95
    limit = took * 1.02  # met on the estimate, not at the band's slow end
    r = _run(workload=job, objective="fastest", constraints={"max_gpus": 1, "max_hours": limit})
    assert r.deadline is not None and r.deadline.met is True
    risky = [x for x in r.recommendations if any("may miss the" in w for w in x.warnings)]
    # may_miss counts every ranked configuration at risk (r32), the rows shown among them
    assert risky and r.deadline.may_miss >= len(risky)
    for x in risky:
        assert x.time_to_finish_h is not None and x.time_to_finish_h <= limit
        slow = x.time_to_finish_h / x.uncertainty.factor_low
        assert slow > limit
        assert any(f"up to {deadline.hours(slow)} at the slow end of its range" in w
                   for w in x.warnings)  # fmt: skip
    assert "may miss it at the slow end of" in r.deadline.message
    # a deadline every row meets at its slow end says nothing of it
    easy = _run(workload=job, objective="fastest", constraints={"max_gpus": 1, "max_hours": 1e4})
    assert easy.deadline is not None and easy.deadline.may_miss == 0
    assert "slow end" not in easy.deadline.message
    assert not any("may miss the" in w for x in easy.recommendations for w in x.warnings)


# ---------------------------------------------------------------- 5. a custom model's words


def test_a_custom_cnn_without_gflops_is_not_told_of_a_preset() -> None:
    with pytest.raises(InvalidInput) as caught:
        workloads.resolve_workload(
            s.WorkloadIn.model_validate({"model": {"family": "cnn", "params": 25e6}})
        )
    msg = str(caught.value)
    assert caught.value.field == "workload.model.gflops_per_sample"
    assert "preset" not in msg
    assert msg == (
        "cnn models need gflops_per_sample (forward GFLOPs per sample, 2 × MACs): give "
        "workload.model.gflops_per_sample"
    )


def test_a_preset_without_a_figure_is_named() -> None:
    m = ModelSpec(family="diffusion", params=2.6e9)
    with pytest.raises(InvalidInput, match="the sdxl preset has no sourced figure"):
        workloads._check_model(m, "sdxl")


def test_extra_gpus_copies_says_a_model_one_gpu_cannot_hold_is_refused() -> None:
    _, warned = workloads.resolve_workload(
        s.WorkloadIn.model_validate(
            {"preset": "resnet-50", "task": "inference", "extra_gpus": "copies"}
        )
    )
    said = next(w for w in warned if w.startswith("extra_gpus 'copies' changes nothing"))
    assert "sharded" not in said and "refused, not split" in said

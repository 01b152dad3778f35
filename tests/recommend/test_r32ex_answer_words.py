"""An expert's read of a row's words (session 32, review "ex"): two rented instances are
"both" (not "all 2"), and a Whisper row's audio rate keeps three significant figures like the
rate above it, said as a multiple of real time."""

from __future__ import annotations

from app.domain import cost
from app.domain.perf import PerfEstimate
from app.domain.workload import ModelSpec, WorkloadSpec
from app.recommend import rows


def _rent(instances: int) -> cost.Pricing:
    offer = cost.CloudOffer(
        "cudo", "sapphire-rapids-h100_2x8v16gb", 2, 3.7056, None, "on-demand", "2026-11-30", "t"
    )
    choice = cost.OfferChoice(
        offer, instances=instances, gpus_used=2 * instances, usd_per_hour=3.7056 * instances,
        spot=False,
    )  # fmt: skip
    return cost.Pricing(rent=choice, buy=None, num_gpus=2 * instances, usage=cost.Usage())


def test_two_rented_instances_are_both() -> None:
    """ "at $7.41/h for all 2" read as a slip; three and more keep "all"."""
    (two, *_) = rows.offer_lines(_rent(2))
    assert "at $7.41/h for both ($3.71/h per 2-GPU instance)" in two
    assert "for all" not in two
    (three, *_) = rows.offer_lines(_rent(3))
    assert "at $11.12/h for all 3 ($3.71/h per 2-GPU instance)" in three


def _whisper() -> WorkloadSpec:
    m = ModelSpec(
        family="encoder-decoder", params=1.55e9, layers=32, hidden_size=1280, num_heads=20,
        input_size=30,
    )  # fmt: skip
    return WorkloadSpec(model=m, task="inference")


def test_an_audio_rate_keeps_three_significant_figures() -> None:
    """ "0.322 samples/s" sat above "9.666 seconds of audio a second": the audio line keeps the
    project's three figures (rank.significant) and says the multiple of real time."""
    est = PerfEstimate(
        throughput=0.3222, unit="samples/s", step_time_s=3.1, bottleneck="host overhead",
        compute_s=0.0, memory_s=0.0, overhead_s=0.0, host_s=0.0, comm_s=0.0, num_gpus=1,
        scaling_efficiency=1.0, compute_precision="fp16", efficiency_source="",
    )  # fmt: skip
    lines = rows._with_audio(["Expected 0.322 samples/s.", "Assumes x."], _whisper(), est)
    assert lines[1] == (
        "One sample is a 30-second audio window: 9.67 seconds of audio a second (9.67× real time)."
    )
    assert lines[2] == "Assumes x."

"""A row whose band says its estimate likely overstates the speed (an AMD or Intel CNN or UNet:
bands.LEANS_HIGH) is ranked on its band's low end under every objective (issue 23,
2026-12-07): balanced alone had done so, and best value still ranked a used MI100 first for a
ResNet-50 job on the estimate its own verdict called likely overstated. Best value and
cheapest compare work per dollar and the cost to finish, which an overstated speed overstates
and understates alike; fastest asks which card finishes first."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.domain import cost, perf, rank
from app.domain.gpu import GpuSpec, Price
from app.domain.workload import WorkloadSpec, memory_breakdown
from app.shipped.rules import load_efficiency
from tests.domain.fixtures import BERT_LARGE, H100, MI300X, RESNET50

TABLE = load_efficiency()
CNN = WorkloadSpec(
    model=RESNET50, task="training", batch_size=256, precision="fp16", efficiency=TABLE
)
BERT = WorkloadSpec(
    model=BERT_LARGE, task="training", batch_size=32, seq_len=128, precision="fp16",
    efficiency=TABLE,
)  # fmt: skip
SAMPLES = 1e7  # the job's length: a time and a cost to finish


def _cand(
    gpu: GpuSpec,
    work: WorkloadSpec = CNN,
    *,
    hourly: float = 2.0,
    buy: float = 15_000.0,
    acquisition: str = "rent",
    length: bool = True,
) -> rank.Candidate:
    gpu = replace(
        gpu,
        street_price=Price(buy, "2026-11-30", "x"),
        cloud_price=Price(hourly, "2026-11-30", "x"),
    )
    est = perf.estimate(gpu, work, num_gpus=1)
    hours = SAMPLES / est.throughput / 3600 if length else None
    return rank.Candidate(
        gpu=gpu,
        work=work,
        memory=memory_breakdown(work, num_gpus=1),
        available_gb=gpu.memory_gb,
        perf=est,
        cost=cost.estimate_cost(gpu, 1, est.throughput, hours),
        acquisition=acquisition,
    )


def test_the_fixture_leans_high_on_its_estimate_and_low_on_its_low_end() -> None:
    """What the cases below rest on: the MI300X's ResNet-50 estimate is above the H100's,
    its band's low end below it."""
    amd, nv = _cand(MI300X), _cand(H100)
    low = rank.leans_high(amd)
    assert low is not None and rank.leans_high(nv) is None
    assert amd.perf.throughput > nv.perf.throughput > amd.perf.throughput * low
    assert rank.ranked_share(amd) == low and rank.ranked_share(nv) == 1.0


@pytest.mark.parametrize("objective", ["fastest", "best_value", "cheapest", "balanced"])
def test_every_objective_ranks_the_leaning_row_on_its_low_end(objective: str) -> None:
    """At one hourly price the MI300X's estimate wins every objective; at its low end none."""
    out = rank.rank([_cand(MI300X), _cand(H100)], objective)
    assert [c.gpu.slug for c in out] == ["h100-sxm", "mi300x"]


@pytest.mark.parametrize("objective", ["fastest", "best_value", "cheapest", "balanced"])
def test_a_gemm_network_of_the_same_vendor_keeps_its_estimate(objective: str) -> None:
    """BERT training on the same MI300X: its band names no lean (the GEMM library), so every
    objective ranks its estimate."""
    amd, nv = _cand(MI300X, BERT), _cand(H100, BERT)
    assert rank.ranked_share(amd) == 1.0
    on_estimates = max((amd, nv), key=lambda c: rank.metric(c, objective) or 0.0)
    assert rank.rank([amd, nv], objective)[0] is on_estimates


def test_cheapest_ranks_the_cost_to_finish_at_the_low_end_speed() -> None:
    amd = _cand(MI300X, acquisition="either")
    low = rank.leans_high(amd)
    assert low is not None and amd.cost.time_to_finish_h is not None
    longer = amd.cost.time_to_finish_h / low
    rent = 2.0 * (longer + cost.RENT_STARTUP_H)
    assert amd.cost.energy_usd_per_hour is not None
    buy = 15_000.0 + amd.cost.energy_usd_per_hour * longer
    assert cost.job_cost_at(amd.cost, "rent", low) == pytest.approx(rent)
    assert cost.job_cost_at(amd.cost, "buy", low) == pytest.approx(buy)
    assert cost.job_cost_at(amd.cost, "either", low) == pytest.approx(min(rent, buy))
    assert cost.job_cost_at(amd.cost, "either", 1.0) == cost.job_cost(amd.cost, "either")
    assert rank.ranked_figures(amd)[2] == pytest.approx(rent if rent < buy else buy)


def test_cheapest_without_a_length_ranks_the_price_no_speed_moves() -> None:
    """No job length: 'cheapest' ranks the cheapest way in, which the speed does not move,
    and the row does not say it was ranked on its low end."""
    amd = _cand(MI300X, hourly=1.0, length=False)
    nv = _cand(H100, length=False)
    assert [c.gpu.slug for c in rank.rank([nv, amd], "cheapest")] == ["mi300x", "h100-sxm"]
    lines = rank.explain(amd, 1, amd, "cheapest")
    assert not any(x.startswith("Ranked on the low end") for x in lines)


def test_the_ranked_metric_is_what_the_columns_rank() -> None:
    """The service's bounded answers keep the best metrics of the cards shown
    (rank.ranked_metric) against later cards' bounds: the figure the ranking itself uses."""
    cands = [_cand(MI300X), _cand(H100)]
    for objective in ("fastest", "best_value", "cheapest"):
        out = rank.rank(cands, objective)
        metrics = [rank.ranked_metric(c, objective) or 0.0 for c in out]
        assert [round(m / metrics[0], 6) for m in metrics] == [c.score for c in out]


@pytest.mark.parametrize(
    ("objective", "said"),
    [
        ("fastest", " images/s), not"),
        ("best_value", "images per dollar"),
        ("cheapest", "to finish"),
    ],
)
def test_the_row_says_what_it_is_ranked_on(objective: str, said: str) -> None:
    amd, nv = _cand(MI300X), _cand(H100)
    lines = rank.explain(amd, 2, nv, objective)
    low = next(x for x in lines if x.startswith("Ranked on the low end"))
    assert said in low
    assert "likely overstates" in low
    lead = rank.explain(nv, 2, amd, objective)
    ranked = next(x for x in lead if x.startswith("Ranked #2"))
    assert "MI300X at its range's low end" in ranked


@pytest.mark.parametrize("objective", ["fastest", "best_value", "cheapest"])
def test_a_row_ranked_on_its_low_end_says_so_in_its_comparison(objective: str) -> None:
    """The MI300X's estimate is above the H100's, so "Ranked #2 by fastest: 0.9× the
    throughput of H100" read as a contradiction beside it: the comparison says it is the low
    end's figure, and a row ranked on its estimate says nothing of the kind."""
    amd, nv = _cand(MI300X), _cand(H100)
    ranked = next(x for x in rank.explain(amd, 2, nv, objective) if x.startswith("Ranked #2"))
    assert ": at its range's low end, " in ranked
    lead = next(x for x in rank.explain(nv, 2, amd, objective) if x.startswith("Ranked #2"))
    assert ": at its range's low end" not in lead

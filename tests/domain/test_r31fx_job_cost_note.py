"""r31 review: a bought Mac row had job_cost_usd null beside a known purchase price, so the
page's and the CLI's "job $" was blank with no word why. A bought job's cost is the price plus
the job's electricity at the catalog's power (cost.rates: tdp_w × N); where the catalog has no
power the row now says so (cost.job_cost_missing), and the one priced Mac whose tested
configuration Apple publishes a wall figure for (Mac Studio M4 Max 14-core CPU / 32-core GPU,
145 W, support article 102027) carries it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.catalog.loader import read_gpu_specs
from app.domain import cost as costs

DATA = Path(__file__).resolve().parents[2] / "data"
GPUS = {g.slug: g for g in read_gpu_specs(DATA)}


def _bought(slug: str, **kw: object) -> costs.CostEstimate:
    gpu = replace(GPUS[slug], **kw)  # type: ignore[arg-type]
    pricing = None
    est = costs.estimate_cost(gpu, 1, 100.0, 10.0, 0.2, pricing)
    return replace(
        est,
        purchase_usd=1999.0,
        buy_to_finish_usd=(
            None if est.energy_to_finish_usd is None else 1999.0 + est.energy_to_finish_usd
        ),
    )


def test_a_bought_row_without_power_says_why_it_has_no_job_cost() -> None:
    # the 40-core M4 Max: Apple's tested Mac Studio bin is the smaller 32-core one (r36: the
    # 16-core M4 Pro, the earlier example, now carries its larger tested bin's 140 W)
    mac = _bought("apple-m4-max")
    assert mac.power_w is None and costs.job_cost(mac, "buy") is None
    why = costs.job_cost_missing(mac, "buy", "Apple M4 Max")
    assert why is not None and "no power figure" in why
    # renting has its own cost; a job with no length has no cost to miss
    assert costs.job_cost_missing(mac, "rent", "Apple M4 Max") is None
    assert costs.job_cost_missing(replace(mac, time_to_finish_h=None), "buy", "x") is None


def test_a_bought_row_with_power_has_its_job_cost_and_no_note() -> None:
    mac = _bought("apple-m4-max-32c-36gb")
    assert mac.power_w == 145.0
    job = costs.job_cost(mac, "buy")
    assert job is not None and job > 1999.0
    assert costs.job_cost_missing(mac, "buy", "Apple M4 Max") is None

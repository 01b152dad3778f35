"""An empty answer's nearest rental says what it costs for the whole job (review 30, vf; issue
23, "an empty answer explains itself"): 70B QLoRA under a $300 purchase budget had been told
"renting as well as buying, best 8 × B200 ($36.00/h to rent)", an hourly price a purchase
budget cannot be compared with, for a job that rents for a few dollars."""

from __future__ import annotations

from app.recommend import schemas as s
from app.recommend.whatif import ACQUISITION_LIFTED, DEADLINE_LIFTED, best_config


def _near(change: str, **kw: object) -> s.NearestOut:
    base: dict[str, object] = {
        "change": change,
        "top_slug": "b200",
        "top_name": "NVIDIA B200",
        "num_gpus": 8,
        "can_run": 21,
        "purchase_usd": None,
        "hourly_usd": 36.0,
        "time_to_finish_h": 0.25,
    }
    return s.NearestOut.model_validate(base | kw)


def test_a_rented_nearest_names_the_jobs_cost() -> None:
    said = best_config(_near(ACQUISITION_LIFTED), "buy")
    # $36/h × (0.25 h + the instance's minute of start-up): the job's rent, to the cent under
    # $100
    assert said.startswith("8 × NVIDIA B200 ($36.00/h to rent), $9.60 rented for the whole job")


def test_large_costs_read_in_whole_dollars_and_no_time_no_cost() -> None:
    big = best_config(_near(ACQUISITION_LIFTED, time_to_finish_h=100.0), "buy")
    assert "$3,601 rented for the whole job" in big  # $3,600 and a minute's $0.60
    unknown = best_config(_near(ACQUISITION_LIFTED, time_to_finish_h=None), "buy")
    assert "for the whole job" not in unknown


def test_a_bought_nearest_and_a_lifted_deadline_keep_their_words() -> None:
    bought = best_config(_near("no budget limit", purchase_usd=680.0, hourly_usd=None), "buy")
    assert bought == "8 × NVIDIA B200 ($680 to buy)"
    late = best_config(_near(DEADLINE_LIFTED, time_to_finish_h=100.0), "rent")
    assert late.endswith("finishing in 4.17 days") and "whole job" not in late

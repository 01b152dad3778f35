"""r30 review: a card whose fewest cards cannot hold the job but whose larger count can was
listed as out for the misfit ("needs 22.1 GiB per GPU on 4, has 22.0 GiB usable": Llama 3 70B
QLoRA under a $3,000 purchase on an A10), though 8 A10s hold it and only the budget rules
them out. The reason is now what excludes the least count that holds the job."""

from __future__ import annotations

from typing import Any

import pytest

from app.recommend import schemas as s
from app.recommend import service

QLORA_70B = {"preset": "llama-3-70b", "task": "fine-tuning", "peft": "qlora"}
BUDGET = 3000.0


def _excluded(catalog: Any, objective: str) -> dict[str, s.Excluded]:
    gpus, offers, rules = catalog
    req = s.RecommendationRequest.model_validate(
        {
            "workload": QLORA_70B,
            "constraints": {"acquisition": "buy", "max_purchase_usd": BUDGET},
            "objective": objective,
        }
    )
    return {e.slug: e for e in service.recommend(req, gpus, rules, offers=offers).excluded}


def _estimate(catalog: Any, slug: str, n: int | None = None) -> s.EstimateResponse:
    gpus, offers, rules = catalog
    req = s.EstimateRequest.model_validate({"gpu": slug, "num_gpus": n, "workload": QLORA_70B})
    return service.estimate(
        req, next(g for g in gpus if g.slug == slug), rules, offers=offers.get(slug)
    )


@pytest.mark.parametrize("objective", ["balanced", "fastest", "cheapest"])
@pytest.mark.parametrize("slug", ["a10", "l4"])
def test_a_card_that_fits_at_a_larger_count_is_out_for_the_budget(
    shipped_catalog: Any, slug: str, objective: str
) -> None:
    # the premise, from the engine's own single-card answers: 4 do not hold it, 8 do
    assert _estimate(shipped_catalog, slug, 4).result is None
    eight = _estimate(shipped_catalog, slug, 8).result
    assert eight is not None and eight.num_gpus == 8
    out = _excluded(shipped_catalog, objective)[slug]
    assert out.code == "over_budget", out.reason
    # it names the least count that holds the job, and a price over the budget
    assert "8 GPUs" in out.reason and f"> ${BUDGET:,.0f}" in out.reason
    price = float(out.reason.split("$")[1].split()[0].replace(",", ""))
    assert price > BUDGET


def test_a_card_no_count_of_which_holds_the_job_keeps_its_misfit(shipped_catalog: Any) -> None:
    # a 16 GB card does not hold it on 8 (the most the plan tries): the misfit stays the reason
    out = _excluded(shipped_catalog, "balanced")["rtx-4080"]
    assert out.code == "does_not_fit" and "on 8" in out.reason

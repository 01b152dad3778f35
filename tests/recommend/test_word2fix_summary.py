"""The verdict says what the rows say (reviews 5 and 7): a purchase price's caveat from the data
goes with the price it quotes, and a pick that cannot be had the way the question asks is
followed by the first row that can, or by the word that none can."""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi.testclient import TestClient
from pydantic import BaseModel

from app.recommend import schemas as s
from app.recommend import summary

M = TypeVar("M", bound=BaseModel)

NVL_NOTE = (
    "GPU Poet best deal (mean of the 3 cheapest eBay/Amazon listings); the report says the "
    "five cheapest H200 listings that month were qualification samples"
)


def _buy(usd: float, note: str | None = None) -> s.BuyCostOut:
    return s.BuyCostOut(
        usd=usd,
        unit_usd=usd,
        condition="market",
        as_of="2026-09",
        source="x",
        stale=False,
        note=note,
    )


def _rent(usd: float) -> s.RentCostOut:
    return s.RentCostOut(usd_per_hour=usd, as_of="2026-11-30", source="x", stale=False)


def _built(model: type[M], **fields: Any) -> M:
    """``model`` with only ``fields`` set (model_construct: what the verdict reads of it)."""
    return model.model_construct(**fields)


def _row(
    name: str, *, rent: s.RentCostOut | None = None, buy: s.BuyCostOut | None = None, n: int = 8
) -> s.Recommendation:
    """A row with what the verdict reads of it (model_construct: no validation of the rest)."""
    fields: dict[str, Any] = {
        "gpu": _built(s.RankedGpu, name=name),
        "num_gpus": n,
        "cost": _built(s.CostOut, rent=rent, buy=buy, job_cost_usd=None),
        "offer": None,
        "serving": None,
        "throughput": _built(s.ThroughputOut, value=1000.0, unit="tokens/s"),
        "meets_latency_target": None,
        "framework_status": "supported",
    }
    return s.Recommendation.model_construct(**fields)


def _answer(rows: list[s.Recommendation], **kw: Any) -> s.RecommendationResponse:
    base: dict[str, Any] = {"acquisition": "rent", "objective": "balanced", "count": len(rows)}
    base.update(kw, recommendations=rows)
    return s.RecommendationResponse.model_construct(**base)


# ---------------------------------------------------------------- a price's note (rev5 #10)


def test_a_purchase_price_with_a_note_carries_it_without_its_asides() -> None:
    said = summary._price(_row("H200 NVL", buy=_buy(435_600.0, NVL_NOTE)), "buy")
    assert said is not None
    assert said.startswith("costs $435,600 to buy at its market price")
    assert said.endswith(
        "as of 2026-09 (GPU Poet best deal, mean of the 3 cheapest eBay/Amazon listings; the "
        "report says the five cheapest H200 listings that month were qualification samples)"
    )
    # the stale-price reader still finds the date it quotes
    assert summary._AS_OF.findall(said) == ["2026-09"]
    # an aside is kept, set off by commas: "(not new)" is the point of a refurbished price
    refurb = "Apple Certified Refurbished (not new), last sighting 2026-02-17"
    assert summary._short_note(refurb) == (
        "Apple Certified Refurbished, not new, last sighting 2026-02-17"
    )
    plain = summary._price(_row("H200 NVL", buy=_buy(435_600.0)), "buy")
    assert plain is not None and plain.endswith("as of 2026-09")


# ---------------------------------------------------------------- no price on the basis (rev7 #10)


def test_an_unrentable_balanced_pick_says_no_gpu_that_runs_it_can_be_rented() -> None:
    """ "Pick 8 × B300: no rental offer known" and nothing more: under balanced a priced card
    ranks before every unpriced one, so none of the GPUs that run it has an offer."""
    rows = [_row("B300"), _row("MI355X", n=4)]
    said = summary._priced_instead(rows, _answer(rows, count=2))
    assert said == " None of the 2 GPUs that run it has a rental offer known."
    one = [_row("B300")]
    assert summary._priced_instead(one, _answer(one, count=1)) == (
        " No GPU that runs it has a rental offer known."
    )


def test_a_rentable_row_shown_is_named_instead() -> None:
    rows = [_row("B300"), _row("B200", rent=_rent(36.0))]
    said = summary._priced_instead(rows, _answer(rows))
    assert said.startswith(" The first shown that has one, 8 × B200")
    assert "rents at $36.00/h" in said


def test_under_another_objective_only_the_rows_shown_are_known() -> None:
    rows = [_row("GB200"), _row("B300")]
    said = summary._priced_instead(rows, _answer(rows, objective="fastest", count=9))
    assert said == " None of the 2 rows shown has a rental offer known."
    # a pick that misses the latency target may rank ahead of a priced card: rows shown only
    late = [_row("B300"), _row("MI355X")]
    late[0].meets_latency_target = False
    assert "rows shown" in summary._priced_instead(late, _answer(late, count=5))


def test_the_reviews_renter_is_told_no_gpu_that_runs_it_can_be_rented(
    read_client: TestClient,
) -> None:
    """Review 7's 131,072-token LoRA job, rented, under the default objective: the cards that
    hold it have no rental offer, and the verdict now says so instead of stopping at the pick."""
    body = {
        "workload": {
            "preset": "llama-3.1-8b",
            "task": "fine-tuning",
            "peft": "lora",
            "seq_len": 131072,
            "batch_size": 8,
            "dataset_samples": 1000,
        },
        "constraints": {"max_gpus": 8, "acquisition": "rent"},
        "limit": 2,
    }
    r = read_client.post("/api/v1/recommendations", json=body)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["objective"] == "balanced"
    top = answer["recommendations"][0]
    assert top["cost"]["rent"] is None  # the premise: the pick cannot be rented
    sentence = answer["summary"]["sentence"]
    assert ": no rental offer known" in sentence
    n = answer["count"]
    tail = f"None of the {n} GPUs that run it" if n > 1 else "No GPU that runs it"
    assert f"{tail} has a rental offer known." in sentence, sentence

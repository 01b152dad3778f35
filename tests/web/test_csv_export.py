"""The CSV export: figures to the digits they are good for, the purchase price's date and
source beside it, and what the per-dollar columns count (a review found 102.287454480918
tokens/s, 12.884901888000002 GB, no purchase date and "samples" per dollar for tokens)."""

from __future__ import annotations

import csv
import io
import math
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.web.offer_words import price_is_stale
from app.web.question_pages import CSV_COLUMNS, CSV_DIGITS, _csv_cell, _csv_number

LLM_Q = (
    "preset=llama-3-8b&task=inference&runtime=llama.cpp&quantization=q4_k_m&precision=int4"
    "&acquisition=either"
)
CNN_Q = "preset=resnet-50&task=training&acquisition=either"

# The columns before the review, in their order: readers index them by name and by place.
FIRST_COLUMNS = (
    "rank", "slug", "name", "num_gpus", "fits", "precision", "memory_required_gb",
    "memory_available_gb", "throughput", "throughput_unit", "latency_ms", "time_to_finish_h",
    "bottleneck", "purchase_usd", "purchase_basis", "hourly_usd", "offer_provider",
    "offer_instance_type", "offer_gpus", "offer_instances", "offer_tier", "offer_as_of",
    "rent_to_finish_usd", "buy_to_finish_usd", "job_cost_usd", "samples_per_usd_rent",
    "samples_per_usd_buy", "score", "throughput_low", "throughput_high", "speedup_vs_baseline",
)  # fmt: skip


def _export(client: TestClient, query: str) -> tuple[list[dict[str, str]], dict[str, Any]]:
    r = client.get(f"/recommendations.csv?{query}")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    answer: dict[str, Any] = client.get(f"/recommendations.json?{query}").json()
    assert [row["slug"] for row in rows] == [
        rec["gpu"]["slug"] for rec in answer["recommendations"]
    ]
    return rows, answer


def test_numbers_round_to_four_significant_figures_and_money_to_the_cent() -> None:
    assert _csv_number(102.287454480918) == 102.3
    assert _csv_number(12.884901888000002) == 12.88
    assert _csv_number(0.000123456) == 0.0001235
    assert _csv_number(15699839.56534081) == 15700000
    assert isinstance(_csv_number(15699839.56534081), int)
    assert _csv_number(12345.678, money=True) == 12345.68  # a job's cost keeps its cents
    assert _csv_number(0.19681, money=True) == 0.1968  # an hourly price its fourth figure
    assert _csv_number(453.0, money=True) == 453
    assert _csv_number(0.0) == 0.0 and math.isnan(_csv_number(math.nan))
    assert _csv_cell(3) == 3 and _csv_cell(True) is True  # counts and flags as they are


def test_the_columns_so_far_keep_their_names_and_places() -> None:
    assert CSV_COLUMNS[: len(FIRST_COLUMNS)] == FIRST_COLUMNS
    added = CSV_COLUMNS[len(FIRST_COLUMNS) :]
    assert {"purchase_as_of", "purchase_source", "per_usd_unit"} <= set(added)


def _rounded(value: float, money: bool) -> bool:
    """Whether ``value`` carries no more than CSV_DIGITS significant figures (or, for an
    amount of dollars, no more than cents)."""
    if value == float(f"{value:.{CSV_DIGITS}g}"):
        return True
    return money and value == round(value, 2)


def test_no_figure_has_more_digits_than_it_is_good_for(read_client: TestClient) -> None:
    rows, _ = _export(read_client, LLM_Q)
    floats = 0
    for row in rows:
        for name, text in row.items():
            if name in ("slug", "name", "precision") or not text:
                continue
            try:
                value = float(text)
            except ValueError:
                continue  # a date, a source, a word
            floats += "." in text
            assert _rounded(value, name.endswith("_usd")), (name, text)
    assert floats


def test_the_purchase_price_comes_with_its_date_source_and_staleness(
    read_client: TestClient, read_settings: Settings
) -> None:
    rows, answer = _export(read_client, LLM_Q)
    bought = 0
    for row, rec in zip(rows, answer["recommendations"], strict=True):
        buy = rec["cost"]["buy"]
        if buy is None:
            assert row["purchase_source"] == ""
            continue
        bought += 1
        assert row["purchase_as_of"] == buy["as_of"]
        assert row["purchase_source"] == buy["source"]
        assert row["purchase_basis"] == buy["condition"]
        assert row["purchase_stale"] == str(price_is_stale(buy["as_of"], read_settings))
        offer = rec["offer"]
        if offer is not None:
            assert row["offer_source"] == offer["source"]
            assert row["offer_stale"] == str(price_is_stale(offer["as_of"], read_settings))
    assert bought


@pytest.mark.parametrize(("query", "unit"), [(LLM_Q, "tokens"), (CNN_Q, "images")])
def test_the_per_dollar_columns_say_what_they_count(
    read_client: TestClient, query: str, unit: str
) -> None:
    rows, answer = _export(read_client, query)
    assert answer["recommendations"][0]["throughput"]["unit"].startswith(unit)
    assert {row["per_usd_unit"] for row in rows} == {f"{unit} per USD"}

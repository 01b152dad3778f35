"""r34 new user: a catalog filter the page cannot read gives that filter's own examples, as
the question form does. "Min memory (GiB): abc" had answered "must be a number, like 15k,
8.03B, 1,281,167 or $800" — a dollar sign and a sample count for a memory size."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from fastapi.testclient import TestClient

from app.numbers import parse_number
from app.web.catalog_form import _CATALOG_NUMBERS, _EXAMPLES, parse_catalog


@pytest.mark.parametrize("name", sorted(_CATALOG_NUMBERS))
def test_each_filters_examples_read_and_fall_in_its_range(name: str) -> None:
    said = _EXAMPLES[name]
    assert said.startswith("like ")
    lo, hi = _CATALOG_NUMBERS[name]
    for example in said.removeprefix("like ").split(" or "):
        assert lo <= parse_number(example) <= hi, (name, example)
    if not name.endswith("_usd"):
        assert "$" not in said, name


def test_a_memory_filter_that_is_no_number_gets_memory_examples() -> None:
    form = parse_catalog([("min_memory_gb", "abc"), ("max_hourly_usd", "lots")], ["memory_gb"])
    assert form.errors["min_memory_gb"] == "must be a number, like 24 or 80"
    assert form.errors["max_hourly_usd"] == "must be a number, like 0.5 or $2"


def test_a_range_error_keeps_its_own_words() -> None:
    form = parse_catalog([("max_hourly_usd", "-1")], ["memory_gb"])
    assert form.errors["max_hourly_usd"] == "must be between 0 and 1,000,000"


def test_the_catalog_page_shows_the_filters_examples(read_client: TestClient) -> None:
    r = read_client.get("/gpus", params={"min_memory_gb": "abc"})
    assert r.status_code == 422
    text = html_lib.unescape(re.sub(r"\s+", " ", r.text))
    assert "must be a number, like 24 or 80" in text
    assert "1,281,167" not in text

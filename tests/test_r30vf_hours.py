"""A deadline is read as people write a time (review 30, vf): "Finish within (hours)" refused
"36h" and "2 days" ("'h' is not a unit read here (k, M, B, T, $ or USD)"), the first things a
person types there. The form, the JSON API and the CLI read it alike (app.numbers.parse_hours);
an unknown unit, and "m" (a million to the other number fields, a minute to some), are refused
with the forms that are read."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.cli.recommend import HOURS_FIELDS
from app.numbers import parse_hours
from app.recommend import schemas as s


@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("24", 24.0),
        ("36h", 36.0),
        ("36 h", 36.0),
        ("12 hours", 12.0),
        ("2 days", 48.0),
        ("0.5d", 12.0),
        ("1 week", 168.0),
        ("90 min", 1.5),
        ("1,000 hours", 1000.0),
        ("1.5k", 1500.0),  # a bare number reads as every number field reads it
    ],
)
def test_a_time_reads_in_hours(text: str, hours: float) -> None:
    assert parse_hours(text) == pytest.approx(hours)


@pytest.mark.parametrize("text", ["2 months", "24 hh", "90m", "soon"])
def test_other_words_are_refused_with_what_is_read(text: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_hours(text)
    said = str(err.value)
    assert "36h" in said or "must be a number" in said, said


def test_the_api_and_the_cli_read_the_deadline_alike() -> None:
    assert s.ConstraintsIn.model_validate({"max_hours": "2 days"}).max_hours == 48.0
    assert s.ConstraintsIn.model_validate({"max_hours": 36}).max_hours == 36.0
    assert "max_hours" in HOURS_FIELDS  # the CLI's --max-hours takes the same words
    # other number fields keep their own reading: "36h" is no price
    with pytest.raises(ValueError):
        s.ConstraintsIn.model_validate({"max_purchase_usd": "36h"})


def test_the_form_takes_a_written_time_and_names_the_field_otherwise(
    read_client: TestClient,
) -> None:
    ok = read_client.get("/recommendations?preset=resnet-50&task=training&max_hours=2+days")
    assert ok.status_code == 200, ok.text[:500]
    assert "Finish within" in ok.text and "48" in ok.text
    bad = read_client.get("/recommendations?preset=resnet-50&task=training&max_hours=2+months")
    assert bad.status_code == 422
    assert "not a time unit read here" in bad.text
    api = read_client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": "resnet-50"}, "constraints": {"max_hours": "2 months"}},
    )
    assert api.status_code == 422
    assert api.json()["error"]["details"]["field"] == "constraints.max_hours"

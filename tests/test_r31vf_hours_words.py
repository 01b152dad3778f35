"""r31 review (vf): "finish within: soon" was refused by the API and the CLI with a price's
examples ("must be a number, like 15k, 8.03B, 1,281,167 or $800"), where the form said "like
24, 36h or 2 days". A deadline that is no number says a time's examples wherever it is typed."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.numbers import HOURS_HELP, NUMBER_HELP, parse_hours


@pytest.mark.parametrize("text", ["soon", "asap!", "tomorrow"])
def test_a_deadline_that_is_no_number_gives_a_times_examples(text: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_hours(text)
    said = str(err.value)
    assert said.endswith(HOURS_HELP) and "$800" not in said, said
    assert NUMBER_HELP not in said


def test_the_api_says_the_same_words_for_the_deadline(read_client: TestClient) -> None:
    api = read_client.post(
        "/api/v1/recommendations",
        json={"workload": {"preset": "resnet-50"}, "constraints": {"max_hours": "soon"}},
    )
    assert api.status_code == 422
    error = api.json()["error"]
    assert error["details"]["field"] == "constraints.max_hours"
    assert HOURS_HELP in error["message"] and "$800" not in error["message"]
    page = read_client.get("/recommendations?preset=resnet-50&task=training&max_hours=soon")
    assert page.status_code == 422 and HOURS_HELP in page.text

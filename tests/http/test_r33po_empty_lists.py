"""r33po: one rule for an empty filter. A list filter left out, or given as an empty list in a
JSON body ("vendors": [], the form's boxes all unticked), means no filter; a blank value inside
one ("providers": [""], ?vendor=) is a 422 naming the field, as an empty query parameter is. A
query string has no empty list: leaving the parameter out is how it says "any". The schema's
descriptions (OpenAPI and the form's help) say so."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

URL = "/api/v1/recommendations"
JOB = {"workload": {"preset": "resnet-50", "task": "inference"}, "limit": 3}
LISTS = ("vendors", "segments", "providers", "tiers")


def _ranked(r: object) -> tuple[int, list[str]]:
    body = r.json()  # type: ignore[attr-defined]
    return body["counts"]["ranked"], [row["gpu"]["slug"] for row in body["recommendations"]]


def test_an_empty_list_in_the_body_means_no_filter(read_client: TestClient) -> None:
    left_out = read_client.post(URL, json=JOB)
    assert left_out.status_code == 200, left_out.text
    empty = read_client.post(URL, json={**JOB, "constraints": {name: [] for name in LISTS}})
    assert empty.status_code == 200, empty.text
    assert _ranked(empty) == _ranked(left_out)
    assert _ranked(left_out)[0] > 1


@pytest.mark.parametrize(("name", "blank"), [("providers", ""), ("providers", "  ")])
def test_a_blank_value_in_a_body_list_is_a_422_naming_it(
    read_client: TestClient, name: str, blank: str
) -> None:
    r = read_client.post(URL, json={**JOB, "constraints": {name: [blank]}})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["details"]["field"].startswith(f"constraints.{name}")
    # it had read "no offer comes from ; the providers with offers are ..."
    assert "leave the field out or give [] for any" in error["message"]


@pytest.mark.parametrize("url", ["/api/v1/gpus?vendor=", "/api/v1/offers?provider="])
def test_an_empty_query_parameter_is_a_422_saying_leave_it_out(
    read_client: TestClient, url: str
) -> None:
    r = read_client.get(url)
    assert r.status_code == 422, r.text
    name = url.split("?")[1].rstrip("=")
    assert r.json()["error"]["details"]["field"] == name
    assert "leave the parameter out" in r.json()["error"]["message"]


def test_the_schema_says_what_an_empty_list_means(read_client: TestClient) -> None:
    spec = read_client.get("/openapi.json").json()
    fields = spec["components"]["schemas"]["ConstraintsIn"]["properties"]
    for name in LISTS:
        assert "empty list" in fields[name]["description"], name


def test_the_form_keeps_its_own_words() -> None:
    from app.web.forms import fields_by_name

    fields = fields_by_name()
    assert fields["vendors"].help == "Leave all unticked for any vendor."
    assert fields["segments"].help == "Leave all unticked for any kind."
    assert fields["tiers"].help.endswith("Leave all unticked for any.")

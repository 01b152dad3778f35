"""New user's walk (thirty-sixth session): a startup serving Llama 3.1 70B to 30 users asked to
rent, and the serving table showed a Buy column (a $64,000 card price beside a $4.80/h
rental) and, under rows with both prices, "Renting is cheaper over 6,240 h … buying pays off
after 6.9 years": the README says the ranking shows the columns of the acquisition asked, as
the non-serving ranking does. A serving table now shows Rent, Buy or both as asked, and the
buy-versus-rent verdict only under "either"."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from tests.web.test_pages import page

Q = (
    "/recommendations?preset=llama-3.1-70b&task=serving&concurrent_requests=30"
    "&ttft_ms_target=2000&itl_ms_target=50&acquisition="
)


def _table(text: str) -> str:
    start = text.index("data-serving-table")
    return text[start : text.index("</table>", start)]


@pytest.mark.parametrize(
    ("acquisition", "rent", "buy"),
    [("rent", True, False), ("buy", False, True), ("either", True, True)],
)
def test_a_serving_table_shows_the_asked_acquisitions_columns(
    read_client: TestClient, acquisition: str, rent: bool, buy: bool
) -> None:
    table = _table(page(read_client, Q + acquisition))
    assert ("data-rent-head" in table) is rent
    assert ("data-buy-head" in table) is buy
    assert ('data-label="Rent"' in table) is rent
    assert ('data-label="Buy"' in table) is buy
    # each "Why" row spans every column the table has
    heads = len(re.findall(r"<th scope=\"col\"", table.split("</thead>")[0]))
    spans = set(re.findall(r'<td colspan="(\d+)">', table))
    assert spans == {str(heads)}, (spans, heads)


def test_the_buy_or_rent_verdict_is_said_only_when_both_are_asked(
    read_client: TestClient,
) -> None:
    rented = page(read_client, Q + "rent")
    assert "data-verdict=" not in rented and "buying pays off" not in rented
    # the same rows, asked "either", carry it (the verdict is there to be said)
    either = page(read_client, Q + "either")
    assert "data-verdict=" in either

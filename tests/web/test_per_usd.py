"""The ranking's work-per-dollar column shows the basis the row's cost uses."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from tests.web.test_pages import page

URL = "/recommendations?preset=resnet-50&task=training&max_purchase_usd=$1,500"


def _per_usd_cells(html: str) -> dict[str, tuple[str, str]]:
    """slug -> (data-value, basis word) of each row's per-$ cell."""
    out = {}
    for m in re.finditer(r'<tr id="rec-\d+"[^>]*data-slug="([^"]+)">(.*?)</tr>', html, re.S):
        cell = re.search(
            r'data-label="images per \$" data-value="([^"]*)">[^<]*<span class="muted small">(\w+)<',
            m.group(2),
            re.S,
        )
        if cell:
            out[m.group(1)] = (cell.group(1), cell.group(2))
    return out


def test_a_buy_over_the_purchase_budget_is_never_the_per_dollar_figure(
    read_client: TestClient,
) -> None:
    # "either": the 8× RTX 5090 row showed "4.66M bought" for a $42k purchase beside a
    # $1,500 budget, while its verdict said rent (10.3M per $)
    answer = read_client.get(URL.replace("/recommendations", "/recommendations.json")).json()
    cells = _per_usd_cells(page(read_client, URL))
    assert cells
    for r in answer["recommendations"]:
        value, basis = cells[r["gpu"]["slug"]]
        cost = r["cost"]
        if cost["purchase_usd"] is not None and cost["purchase_usd"] > 1500:
            assert basis == "rented", (r["gpu"]["slug"], value, basis)
            assert float(value) == pytest.approx(cost["samples_per_usd_rent"], rel=1e-6)
        if r.get("verdict") and basis == "bought":
            assert r["verdict"]["cheaper"] == "buy"

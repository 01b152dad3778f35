"""r32 new-user walk, /compare?slugs=rtx-4090,apple-m4-max: the M4 Max read "Launch price —"
above "Price used for buying: $3,499 launch" (the catalog's empty launch field beside the
purchase offer buying uses), and "GPU interconnect: PCIe only" for a GPU on an SoC. Both
pages now give the launch price on file with its basis, and say the SoC GPU has no link."""

from __future__ import annotations

import re
from types import SimpleNamespace

from fastapi.testclient import TestClient

from app.domain.cost import PurchaseOffer
from app.web.gpu_words import SOC_INTERCONNECT, interconnect_said, launch_on_file


def _gpu(**kw: object) -> SimpleNamespace:
    base = {"vendor": "apple", "segment": "soc", "interconnect": None, "launch_price_usd": None}
    return SimpleNamespace(**{**base, **kw})


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_an_empty_interconnect_is_none_on_an_soc_and_pcie_on_a_card() -> None:
    assert interconnect_said(_gpu()) == SOC_INTERCONNECT
    assert "PCIe" not in SOC_INTERCONNECT
    ultra = _gpu(interconnect="UltraFusion die-to-die (2 dies)")
    assert interconnect_said(ultra) == "UltraFusion die-to-die (2 dies)"
    assert interconnect_said(_gpu(vendor="nvidia", segment="consumer")) == "PCIe only"


def test_the_launch_on_file_is_the_newest_launch_offer_where_the_field_is_empty() -> None:
    offers = [
        PurchaseOffer(usd=3999, condition="launch", as_of="2024-03", source="a"),
        PurchaseOffer(usd=3499, condition="launch", as_of="2025-03", source="b"),
        PurchaseOffer(usd=2500, condition="used", as_of="2026-01", source="c"),
    ]
    found = launch_on_file(_gpu(), offers)
    assert found is not None and (found.usd, found.as_of, found.machine) == (3499, "2025-03", True)
    assert "whole machine" in found.basis
    assert launch_on_file(_gpu(launch_price_usd=1599), offers) is None
    assert launch_on_file(_gpu(), offers[2:]) is None


def test_compare_gives_the_m4_max_the_launch_price_buying_uses(read_client: TestClient) -> None:
    page = read_client.get("/compare", params={"slugs": "rtx-4090,apple-m4-max"})
    assert page.status_code == 200
    text = _text(page.text)
    launch = text[text.index("Launch price") : text.index("Street price")]
    assert "1,599" in launch and "3,499" in launch and "—" not in launch
    assert "whole machine" in launch
    bought = text[text.index("Price used for buying") :]
    assert "$3,499 launch" in bought  # the figure the launch row now names
    link = text[text.index("GPU interconnect") :]
    cells = link.split("GPU Advisor")[0]
    assert cells.count("PCIe only") == 1  # the RTX 4090's, not the M4 Max's
    assert "part of the SoC" in cells


def test_the_gpu_page_says_the_same(read_client: TestClient) -> None:
    text = _text(read_client.get("/gpus/apple-m4-max").text)
    assert "Launch price 3,499 USD" in text and "Launch price $3,499" in text
    assert "Launch price —" not in text
    assert f"GPU interconnect {SOC_INTERCONNECT}" in text
    # a card keeps its own fields: the RTX 4090's launch price is the catalog's
    card = _text(read_client.get("/gpus/rtx-4090").text)
    assert "Launch price $1,599" in card and "whole machine" not in card

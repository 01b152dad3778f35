"""Session 41 (tidy): the RTX 4090's page wrote its one quoted price two ways, "$0.14/GPU-hour"
in the Prices box and "$0.136/h per GPU" above the offers; both now say it as the offers do."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def test_the_quoted_price_reads_alike_in_the_prices_box_and_over_the_offers(
    read_client: TestClient,
) -> None:
    html = read_client.get("/gpus/rtx-4090").text
    box = html[html.index("Cloud, a price seen elsewhere") :]
    box = box[: box.index("</dd>")]
    assert "$0.136/h per GPU at Vast.ai" in box
    assert "data-seen-price>Also seen at $0.136/h per GPU on Vast.ai (" in html
    # no other writing of the same figure anywhere on the page
    assert not re.search(r"\$0\.14\b|GPU-hour", box), box

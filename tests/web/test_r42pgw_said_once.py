"""The answer pages say a repeated thing once (forty-second session, "pgw"): the largest answer
page weighed 149,050 of its 150,000 bytes. A tip, warning or explanation line several ranking
rows share is written out on the first and named by the rest; so is a source of the "Where the
numbers come from" list; a row's Cost list leaves out the prices and break-even its "Buy or
rent" says; a serving row leaves the lines that restate its own cells to those cells, and the
tooltips every offer cell repeated are one note under the table. The JSON keeps every row's
full lists."""

from __future__ import annotations

import re
from collections import Counter

from fastapi.testclient import TestClient
from markupsafe import escape

from app.web.serving_lines import said_in_cells
from tests.web.test_pages import page

EITHER = "/recommendations?preset=llama-3-70b&task=inference&acquisition=either"
SERVING = (
    "/recommendations?preset=llama-3-8b&task=serving&requests_per_s=5&prompt_tokens=1000"
    "&serving.output_tokens=300&ttft_ms_target=1000&itl_ms_target=50"
)
ENCODER = (
    "/recommendations?preset=bert-large&task=serving&concurrent_requests=64&prompt_tokens=256"
    "&ttft_ms_target=200&acquisition=rent"
)


def _json(client: TestClient, url: str) -> list[dict[str, object]]:
    body = client.get(url.replace("/recommendations?", "/recommendations.json?")).json()
    rows: list[dict[str, object]] = body["recommendations"]
    return rows


def _whys(html: str) -> list[str]:
    """Each ranking row's "Why" panel, in rank order."""
    return re.findall(r'<tr class="explain-row">.*?</details>', html, re.S)


def test_a_tip_several_rows_share_is_written_once_and_named_after(
    read_client: TestClient,
) -> None:
    rows = _json(read_client, EITHER)
    shared = [t for t, n in Counter(t for r in rows for t in r["tips"]).items() if n > 1]  # type: ignore[attr-defined]
    assert shared, "the 70B answer's rows share tips (the runtime's, the 4-bit one)"
    html = page(read_client, EITHER)
    whys = _whys(html)
    assert len(whys) == len(rows)
    for tip in shared:
        full = f"<li>{escape(tip)}</li>"
        assert html.count(full) == 1, tip  # every row had said it in full
        ranks = [int(r["rank"]) for r in rows if tip in r["tips"]]  # type: ignore[call-overload, operator]
        first = ranks[0]
        assert full in whys[first - 1]
        for rank in ranks[1:]:
            tips = whys[rank - 1].split("<h3>Tips</h3>")[1]
            pointer = re.search(r'<li class="muted" data-said-above>([^<]*)</li>', tips)
            assert pointer is not None and f"#{first}" in pointer.group(1), rank


def test_a_shared_source_is_written_once_and_later_rows_point_to_it(
    read_client: TestClient,
) -> None:
    html = page(read_client, EITHER)
    # every shipped row's specs are the catalog's: said on #1, named by the nine others
    assert html.count("<dt>specs</dt><dd>published (catalog)</dd>") == 1
    for why in _whys(html)[1:]:
        pointers = re.findall(r'<dt data-prov-as="(\d+)">as for #\d+</dt><dd>([^<]*)</dd>', why)
        assert ("1", "specs") in [(first, names.split(", ")[0]) for first, names in pointers]


def test_the_cost_list_leaves_out_what_buy_or_rent_says(read_client: TestClient) -> None:
    rows = _json(read_client, EITHER)
    whys = _whys(page(read_client, EITHER))
    checked = 0
    for r, why in zip(rows, whys, strict=True):
        cost = why.split("<h3>Cost</h3>")[1].split("</section>")[0]
        assert ">power<" in cost  # what only this list says stays
        if "data-buy-detail" in why:
            assert ">buy<" not in cost, r["rank"]
        if "data-offer-name" in why:
            assert ">rent<" not in cost, r["rank"]
        if "data-verdict" in why and "buying pays off after" in why:
            assert "buying beats renting after" not in cost, r["rank"]
            checked += 1
    assert checked, "some row is priced both ways, with a break-even"


def test_a_serving_row_leaves_its_load_and_cost_lines_to_its_cells(
    read_client: TestClient,
) -> None:
    rows = _json(read_client, SERVING)
    html = page(read_client, SERVING)
    left = [line for r in rows for line in r["explanation"] if said_in_cells(line)]  # type: ignore[attr-defined]
    assert len(left) >= len(rows)  # a load line and a cost line on each row
    for line in left:
        assert str(escape(line)) not in html, line
    # their figures are in the row's cells: the time to first token and the $ per 1M output
    for r in rows:
        serving = r["serving"]
        assert isinstance(serving, dict)
        cells = html.split(f'id="rec-{r["rank"]}"', 1)[1].split('class="explain-row"', 1)[0]
        assert f"<span data-ttft>{serving['ttft_ms']:,.0f} ms</span>" in cells
        assert f"data-usd-blended>${serving['usd_per_million_output_tokens_blended']:,.2f}" in cells


def test_said_in_cells_keeps_a_line_that_says_more() -> None:
    load = (
        "At 5 requests/s, 1,000 prompt + 300 output tokens: first token in ~121 ms, then one "
        "token every ~10.6 ms (means); 1,500 output tokens/s (up to 2,329 at saturation)."
    )
    cost = (
        "$0.17 per million output tokens: the whole hour ÷ its output tokens at this load "
        "(renting the offer below). By GPU time, decode vs prompts: $0.11 per million output, "
        "$0.02 per million input tokens."
    )
    assert said_in_cells(load) and said_in_cells(cost)
    assert not said_in_cells(load, p95=True)  # the cells show p95, the line the means
    owned = cost.replace(
        "(renting the offer below)",
        "(owning the cards over 6,240 h of use, the basis this row is ranked on; renting the "
        "offer below: $0.20 per million output tokens)",
    )
    assert not said_in_cells(owned)
    assert not said_in_cells("Cannot carry 5 requests/s, 1,000 prompt + 300 output tokens.")


def test_serving_offer_tooltips_are_one_note_under_the_table(read_client: TestClient) -> None:
    html = page(read_client, SERVING)
    assert html.count("data-launch-spec>benchmark it first") >= 2
    assert "Downloads a SkyPilot task" not in html  # had been a title on every offer cell
    assert "data-launch-spec-note" in html and "data-seen-note" in html
    assert "(decode's share)" not in html  # said again beside the "Split" column's figure


def test_an_encoders_other_shapes_name_no_kv_cache(read_client: TestClient) -> None:
    html = page(read_client, ENCODER)
    summaries = re.findall(r"<summary>(Other shapes of [^<]*)</summary>", html)
    assert summaries
    assert not [s for s in summaries if "KV cache" in s]  # "all fp16 weights, none KV cache"

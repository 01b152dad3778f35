"""The serving page says a row's warning, memory note, tip or deploy note in full on the first
row it reaches; a later row that carries the same words names that row instead (bought serving
rows now carry the purchase caveats, which repeat on most rows: the page keeps to its size
budget). Every row's own words are still there, and the JSON keeps every row's full lists."""

from __future__ import annotations

import html as html_lib
import re

from fastapi.testclient import TestClient

from tests.web.test_pages import page

Q = (
    "/recommendations?preset=llama-3-8b&task=serving&requests_per_s=5&prompt_tokens=1000"
    "&serving.output_tokens=300&ttft_ms_target=1000&itl_ms_target=50"
)
BODY = {
    "workload": {
        "preset": "llama-3-8b",
        "task": "serving",
        "serving": {
            "requests_per_s": 5,
            "prompt_tokens": 1000,
            "output_tokens": 300,
            "ttft_ms_target": 1000,
            "itl_ms_target": 50,
        },
    }
}


def _items(block: str) -> list[str]:
    return [html_lib.unescape(x) for x in re.findall(r"<li[^>]*>(.*?)</li>", block, re.S)]


def test_a_repeated_warning_is_said_once_and_later_rows_name_the_row(
    read_client: TestClient,
) -> None:
    text = page(read_client, Q)
    rows = read_client.post("/api/v1/recommendations", json=BODY).json()["recommendations"]
    blocks = re.findall(r"<h3>Warnings</h3><ul>(.*?)</ul>", text, re.S)
    assert len(blocks) == sum(1 for r in rows if r["warnings"])
    said: dict[str, int] = {}
    pointers = 0
    for row, block in zip((r for r in rows if r["warnings"]), blocks, strict=True):
        shown = _items(block)
        repeated = [w for w in row["warnings"] if w in said]
        fresh = [w for w in row["warnings"] if w not in said]
        # each fresh warning in full (the page's form words aside), then one pointer line
        assert len(shown) == len(fresh) + (1 if repeated else 0), (shown, row["warnings"])
        if repeated:
            pointers += 1
            ranks = sorted({said[w] for w in repeated})
            assert shown[-1].startswith(f"{len(repeated)} more as said for #")
            assert all(f"#{k}" in shown[-1] for k in ranks)
        for w in fresh:
            said[w] = row["rank"]
    # the answer's bought rows share their second-hand and licence caveats: some row points back
    assert pointers >= 1

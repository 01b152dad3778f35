"""r38 audit of issue 23's "quality said out loud" on the page (the API and engine tests held
it; no page test did): a quantised row names its quality cost with its source, and "None" as
the weight format keeps the published weights even where 4-bit weights are allowed."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def _ranking(html: str) -> str:
    return html.split('<h2 id="ranking"', 1)[1].split('<h2 id="charts"', 1)[0]


def test_each_quantised_row_names_its_quality_cost_and_source(read_client: TestClient) -> None:
    page = read_client.get(
        "/recommendations?preset=llama-3.3-70b&task=inference&quantization=awq"
        "&acquisition=rent&limit=3"
    )
    assert page.status_code == 200
    rows = _ranking(page.text).split('<tr id="rec-')[1:]
    assert len(rows) == 3
    # said in full on the first row that carries it; a later row with the same words names
    # that row (the forty-second session's said-once lists: the page's weight budget)
    first: int | None = None
    for rank, row in enumerate(rows, start=1):
        said = re.search(
            r"quality: awq weights — [^<]*\(source: [^<]*https://arxiv\.org/[^<]*", row
        )
        if said is not None:
            first = first or rank
            continue
        pointer = re.search(r"<li class=\"muted\" data-said-above>[^<]*</li>", row)
        assert first is not None and pointer is not None, row[:400]
        assert f"#{first}" in pointer.group(0), pointer.group(0)


def test_none_keeps_the_published_weights_where_4_bit_is_allowed(read_client: TestClient) -> None:
    page = read_client.get(
        "/recommendations?preset=llama-3.3-70b&task=serving&concurrent_requests=50"
        "&quantization=none&allow_4bit=true&acquisition=rent&limit=3"
    )
    assert page.status_code == 200
    ranking = _ranking(page.text)
    assert ranking.count("bf16 weights, bf16 KV") >= 3  # each row, and charts or tables
    for four_bit in ("awq", "gptq", "nvfp4", "mxfp4", "int4", "nf4", "q4_"):
        assert four_bit not in ranking.lower(), four_bit

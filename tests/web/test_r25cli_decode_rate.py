"""The LLM inference answer page: the headline throughput is output tokens over whole requests
(the 2,048-token prompt's prefill, then 256 output tokens), which ranked Macs low beside
llama.cpp's and Ollama's decode "eval rate": the column says what it is, and each row shows its
decode rate (batch × 1000 ÷ ms per output token, as the verdict gives it) under the likely
range. The order is the API's."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.web.templating import num

LLM = "/recommendations?preset=llama-3-8b&task=inference&batch_size=4&acquisition=rent"
BODY = {"workload": {"preset": "llama-3-8b", "task": "inference", "batch_size": 4},
        "constraints": {"acquisition": "rent"}}  # fmt: skip


def _throughput_cells(html: str) -> list[str]:
    return re.findall(r'data-label="Throughput" data-throughput="[^"]*"[^>]*>(.*?)</td>', html)


def test_llm_rows_show_the_decode_rate_under_the_end_to_end_rate(
    read_client: TestClient,
) -> None:
    html = read_client.get(LLM).text
    answer = read_client.post("/api/v1/recommendations", json=BODY).json()
    rows, batch = answer["recommendations"], answer["workload"]["batch_size"]
    assert rows
    assert ">Throughput end to end</abbr></th>" in html
    assert "2,048-token prompt + 256 out" in html  # the header's title: what a request is
    slugs = re.findall(r'<tr id="rec-\d+" data-rank="\d+" data-slug="([^"]+)"', html)
    assert slugs == [r["gpu"]["slug"] for r in rows]
    cells = _throughput_cells(html)
    assert len(cells) == len(rows)
    for r, cell in zip(rows, cells, strict=True):
        # the whole batch's tokens/s while generating, as the verdict gives it
        decode = num(batch * 1000.0 / r["ms_per_output_token"])
        assert f"<br>decode {decode}/s</span>" in cell, cell
    assert 'llama.cpp\'s "eval rate"' in html or "llama.cpp's &#34;eval rate&#34;" in html


def test_other_answers_keep_their_throughput_column(read_client: TestClient) -> None:
    html = read_client.get("/recommendations?preset=resnet-50&task=inference").text
    cells = _throughput_cells(html)
    assert cells and not any("decode" in c for c in cells)
    assert ">Throughput</abbr></th>" in html and "end to end</abbr>" not in html

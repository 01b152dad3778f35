"""New user's walk (thirty-fifth session): serving 70B to 20 users, a student met the serving
table's "TTFT", "ITL" and "TP 8" with no words for them. The line over the table, which a phone
shows too, says what each is (the page is at its size budget: said once, not on every row)."""

from __future__ import annotations

import html as html_lib
import re

from fastapi.testclient import TestClient

from tests.web.test_pages import page

Q = "/recommendations?preset=llama-3.3-70b&task=serving&concurrent_requests=20&acquisition=rent"


def _intro(text: str) -> str:
    """The line between the table's heading and the table."""
    part = text[text.index('<h2 id="ranking">') : text.index("data-serving-table")]
    found = re.search(r'<p class="muted small">(.*?)</p>', part, re.S)
    assert found is not None
    return html_lib.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def test_the_line_over_the_serving_table_says_what_ttft_itl_and_tp_are(
    read_client: TestClient,
) -> None:
    text = page(read_client, Q)
    intro = _intro(text)
    assert "TTFT: time to first token, ITL: time between tokens" in intro, intro
    assert re.search(r">\s*TP 8\s*<", text)  # the top pick's 8-way tensor parallel
    assert ", TP\u00a0n: tensor parallel over n GPUs." in intro, intro


def test_no_tp_words_without_a_tp_row(read_client: TestClient) -> None:
    text = page(
        read_client,
        "/recommendations?preset=llama-3-8b&task=serving&concurrent_requests=4&max_gpus=1",
    )
    assert "tensor parallel" not in _intro(text)

"""The serving page for an encoder (issue 21): BERT-large's shape (BGE-large's) served on TEI to
64 clients within 200 ms. Its table says latency, embeddings/s and $ per million embeddings,
not time to first token, inter-token latency or output tokens."""

from __future__ import annotations

import html as html_lib
import re

from fastapi.testclient import TestClient

from tests.web.test_pages import page

Q = (
    "/recommendations?preset=bert-large&task=serving&concurrent_requests=64&prompt_tokens=256"
    "&ttft_ms_target=200&acquisition=rent"
)


def _table(text: str) -> str:
    # the head, the first row and its explanation: up to its memory list (a table until the
    # forty-second session, whose "</table>" had ended this part; its note says "no KV cache")
    part = text[
        text.index('<h2 id="ranking">') : text.index(
            "<h3>Memory per GPU", text.index("data-serving-table")
        )
    ]
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", part))


def test_an_encoders_serving_table_says_its_own_units(read_client: TestClient) -> None:
    text = page(read_client, Q)
    assert "data-encoder-load" in text
    words = " ".join(_table(text).split())
    for said in ("Latency", "Embeddings/s", "$ per 1M embeddings", "batches of 64 sequences"):
        assert said in words, said
    for unsaid in ("TTFT", "ITL", "Output tokens/s", "$ per 1M output", "KV"):
        assert unsaid not in words, unsaid
    assert "one 256-token sequence a request" in words
    assert "latency ≤ 200 ms" in words


def test_the_page_takes_an_embedding_server(read_client: TestClient) -> None:
    text = page(read_client, Q + "&runtime=infinity")
    words = " ".join(_table(text).split())
    assert "infinity" in words and "Embeddings/s" in words

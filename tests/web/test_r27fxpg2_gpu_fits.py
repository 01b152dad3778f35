"""The GPU page's "Largest LLM preset" cards name what their tokens/s runs on: the runtime and
the prompt (review: /gpus/rtx-4090 read "Qwen3 32B · 17.6 tokens/s at batch 1", which is HF
Transformers generate over a 2,048-token prompt, where llama.cpp reads about twice that)."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

from app.web.labels import CHOICES


def _cards(html: str) -> list[str]:
    start = html.index('class="largest"')
    block = html[start : html.index("data-fit-table", start)]
    return [
        re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", c)))
        for c in block.split('class="card"')[1:]
    ]


def test_largest_llm_cards_name_runtime_and_prompt(read_client: TestClient) -> None:
    html = read_client.get("/gpus/rtx-4090").text
    cards = [c for c in _cards(html) if "tokens/s" in c]
    assert cards, html[:500]
    runtime = "|".join(re.escape(label) for label in CHOICES["runtime"].values())
    for card in cards:
        assert re.search(rf"tokens/s at batch 1, ({runtime}), [\d,]+-token prompt", card), card

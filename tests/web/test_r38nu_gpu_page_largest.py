"""The GPU page's "Largest LLM preset" card says why it names none: on an RTX 3090 (no FP8)
every preset asked at FP8 ran at BF16, and "none of the presets" had read as if each were too
large for a 24 GiB card that runs Qwen3 32B in INT4 (a new user's walk, thirty-eighth session)."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient


def _cards(html: str) -> dict[str, str]:
    start = html.index('class="largest"')
    block = html[start : html.index("data-fit-table", start)]
    out = {}
    for c in block.split('class="card"')[1:]:
        text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", c))).strip()
        m = re.search(r"Largest LLM preset, (\w+) inference", text)
        assert m, text
        out[m.group(1)] = text
    return out


def test_a_card_without_fp8_says_the_presets_ran_at_another_precision(
    read_client: TestClient,
) -> None:
    cards = _cards(read_client.get("/gpus/rtx-3090").text)
    assert "none of the presets" not in cards["FP8"]
    assert "no preset runs at FP8 on this card: asked for it, each ran at BF16" in cards["FP8"]
    # a precision the card runs still names its largest preset
    assert "parameters" in cards["INT4"] and "none" not in cards["INT4"]


def test_a_card_with_fp8_names_a_preset_there(read_client: TestClient) -> None:
    cards = _cards(read_client.get("/gpus/rtx-4090").text)
    assert "parameters" in cards["FP8"] and "no preset" not in cards["FP8"]

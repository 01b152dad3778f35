"""The key under the ranking explains the columns the table shows, no others: an LLM
inference answer (its cost column "$ per 1M output", no "tokens per $") had defined
"tokens per $", a column it does not have, and left "$ per 1M output" unexplained; its
"Rent" entry promised "the job's cost" that no inference row without a dataset shows
(a new user's walk, 2026-12-07)."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

LLM_INF = "/recommendations?preset=llama-3-8b&task=inference&batch_size=4&seq_len=4096"
TRAIN = "/recommendations?preset=resnet-50&task=training&batch_size=256&epochs=90"


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html)).strip()


def _heads(html: str) -> list[str]:
    table = re.search(r"<table class=\"ranking\".*?</thead>", html, re.S)
    assert table, "the answer has a ranking"
    cells = re.findall(r"<th scope=\"col\"[^>]*>(.*?)</th>", table.group(0), re.S)
    return [_text(c) for c in cells]


def _defs(html: str) -> dict[str, str]:
    block = re.search(r"<dl class=\"column-defs[^>]*>(.*?)</dl>", html, re.S)
    assert block, "the ranking has its key"
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", block.group(1), re.S)
    return {_text(t): _text(d) for t, d in pairs}


def test_llm_inference_key_names_its_cost_column_not_an_absent_one(
    read_client: TestClient,
) -> None:
    page = read_client.get(LLM_INF)
    assert page.status_code == 200
    heads, defs = _heads(page.text), _defs(page.text)
    assert "$ per 1M output" in heads and "tokens per $" not in heads
    assert "tokens per $" not in defs  # a column this table does not have
    assert "$ per 1M output" in defs and "output tokens" in defs["$ per 1M output"]
    # no row of it shows a job's cost, so the key does not promise one
    assert '<span class="muted small">job</span>' not in page.text
    assert "job's cost" not in defs["Rent"]


def test_every_defined_column_is_shown(read_client: TestClient) -> None:
    for url in (LLM_INF, TRAIN):
        page = read_client.get(url)
        assert page.status_code == 200
        heads = " | ".join(_heads(page.text))
        for term in _defs(page.text):
            if term in ("stale", '"2 ×"'):  # marks inside cells, not columns
                continue
            assert term in heads, (url, term, heads)


def test_training_keeps_work_per_dollar_and_the_jobs_cost(read_client: TestClient) -> None:
    page = read_client.get(TRAIN)
    assert page.status_code == 200
    defs = _defs(page.text)
    assert "images per $" in defs and "images per $" in _heads(page.text)
    assert "job's cost" in defs["Rent"]

"""A column of batch times reads in one unit, the longest's: a ranking had shown "8,913 ms"
above "10.3 s" (ms below ten seconds, seconds above), which a reader compares digit by digit
(a new user's walk, 2026-12-07)."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

from app.web import templating

# batch 4 of 4,096-token prompts: the top rows take under ten seconds, later ones over
LLM_INF = "preset=llama-3-8b&task=inference&batch_size=4&seq_len=4096"


def _units(cells: list[str]) -> set[str]:
    out = set()
    for cell in cells:
        m = re.match(r"[\d,.]+ (ms|s)\b", unescape(re.sub(r"<[^>]+>", "", cell)).strip())
        assert m, cell
        out.add(m[1])
    return out


def test_ms_like_takes_the_columns_unit() -> None:
    assert templating.ms_like(8_913, 14_400) == "8.91 s"
    assert templating.ms_like(14_400, 14_400) == "14.4 s"
    assert templating.ms_like(8_913, 9_500) == "8,913 ms"  # the whole column under 10 s
    assert templating.ms_like(950, None) == "950 ms"  # no column: its own unit
    assert templating.ms_like(90_000, 90_000) == templating.ms(90_000)  # minutes: its own


def test_ranking_batch_times_share_one_unit(read_client: TestClient) -> None:
    page = read_client.get(f"/recommendations?{LLM_INF}&limit=30")
    assert page.status_code == 200
    cells = re.findall(r'<td class="num" data-label="Batch time"[^>]*>(.*?)</td>', page.text, re.S)
    assert len(cells) >= 10
    times = [
        float(m) for m in re.findall(r'data-label="Batch time" data-value="([\d.e+]+)"', page.text)
    ]
    assert min(times) < 10_000 < max(times), "the question spans both units"
    assert _units(cells) == {"s"}


def test_compare_batch_times_share_one_unit(read_client: TestClient) -> None:
    page = read_client.get(f"/compare?slugs=rtx-4090,rtx-3090,h100-sxm&{LLM_INF}")
    assert page.status_code == 200
    row = re.search(r"<th scope=\"row\">Batch time</th>(.*?)</tr>", page.text, re.S)
    assert row
    assert _units(re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)) == {"s"}

"""/compare for an inference job: the form asks no dataset, so no inference has a job to cost,
and "Cost per job" had been a row of dashes beside cards with rent prices (a new user's
walk, 2026-12-07). The row says what running it costs instead: the cheapest offer's hour and,
for an LLM, dollars per million output tokens; a job with a length keeps its cost."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

SLUGS = "/compare?slugs=rtx-4090,h100-sxm"


def _rows(html: str) -> dict[str, list[str]]:
    table = re.search(r"<table data-compare-job.*?</table>", html, re.S)
    assert table, "the comparison has its job table"
    out = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(0), re.S):
        head = re.search(r"<th scope=\"row\">(.*?)</th>", row, re.S)
        if head:
            name = unescape(re.sub(r"<span.*?</span>|<[^>]+>", "", head.group(1))).strip()
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            out[name] = [unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells]
    return out


def test_llm_inference_compares_what_it_costs_to_run(read_client: TestClient) -> None:
    page = read_client.get(f"{SLUGS}&preset=llama-3-8b&task=inference")
    assert page.status_code == 200
    rows = _rows(page.text)
    for name, cells in rows.items():
        assert any(c != "—" for c in cells), f"{name}: a row of dashes"
    assert "Cost per job" not in rows
    assert all(re.fullmatch(r"\$\d[\d,]*\.\d\d/h", c) for c in rows["Rent per hour"])
    assert all(re.fullmatch(r"\$\d[\d,]*\.\d\d", c) for c in rows["$ per 1M output"])


def test_image_inference_has_its_hour_not_tokens(read_client: TestClient) -> None:
    rows = _rows(read_client.get(f"{SLUGS}&preset=stable-diffusion-1.5&task=inference").text)
    assert "$ per 1M output" not in rows and "Cost per job" not in rows
    assert all(c.endswith("/h") for c in rows["Rent per hour"])


def test_training_keeps_its_cost_per_job(read_client: TestClient) -> None:
    rows = _rows(read_client.get(f"{SLUGS}&preset=resnet-50&task=training").text)
    assert all(c.startswith("$") for c in rows["Cost per job"])
    assert "Rent per hour" not in rows

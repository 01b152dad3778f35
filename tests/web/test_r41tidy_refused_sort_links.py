"""Session 41 (tidy): the GPU list's 422 page lists the query without the value it refused, and
its paging and sort links page that list: "Next" on /gpus?sort=price had kept sort=price and
led to another 422."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient


def _links(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'href="(/gpus\?[^"]*)"', html)]


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("/gpus?vendor=nvidia&sort=price", "sort=price"),
        ("/gpus?vendor=nvidia&min_memory_gb=abc&offset=50", "min_memory_gb=abc"),
    ],
)
def test_no_link_of_a_refused_query_carries_what_it_refused(
    read_client: TestClient, url: str, refused: str
) -> None:
    page = read_client.get(url)
    assert page.status_code == 422
    links = _links(page.text)
    assert any("offset=" in h for h in links), "the list still pages"
    assert links and not [h for h in links if refused in h], links
    assert all("vendor=nvidia" in h for h in links)  # what it accepted stays
    for h in links:
        assert read_client.get(h).status_code == 200, h


def test_an_accepted_query_keeps_its_sort_when_paging(read_client: TestClient) -> None:
    page = read_client.get("/gpus?sort=-memory_gb")
    assert page.status_code == 200
    assert "/gpus?sort=-memory_gb&offset=50" in _links(page.text)
